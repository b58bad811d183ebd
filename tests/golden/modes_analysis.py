"""Golden mode ``analysis``: the function printed with each value's range and axis info.

    # RUN: analysis [--grid=4,1,1] [--pipeline] [--kernel=NAME]

``--grid`` bounds the program ids (otherwise any grid); ``--pipeline`` analyses the
canonicalized IR (what the backends see) instead of the frontend's output.
"""
from runner import Run, register_mode


@register_mode("analysis")
def mode_analysis(func, run: Run) -> str:
    from tilejit.analysis.printer import print_analysis
    grid = run.extra.get("grid")
    grid = tuple(int(g) for g in str(grid).split(",")) if grid else None
    if run.extra.get("pipeline"):
        from tilejit.runtime.options import Options
        from tilejit.transforms import run_pipeline
        func = run_pipeline(func, Options(debug=True))
    return print_analysis(func, grid, locs=run.locs)
