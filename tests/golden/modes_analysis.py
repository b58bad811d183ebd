"""Golden mode ``analysis``: the function printed with each value's range and axis info.

    # RUN: analysis [--grid=4,1,1 | --grid-bound=1048576,65535,65535] [--pipeline] [--kernel=NAME]

``--grid`` bounds the program ids (otherwise any grid); ``--grid-bound`` claims only for
launches of at most that many programs per axis (the bounded compiles of the cpu and
cuda backends); ``--pipeline`` analyses the
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
    bound = run.extra.get("grid-bound")
    if bound:
        from tilejit.analysis import analyze
        facts = analyze(func, grid_bound=tuple(int(g) for g in str(bound).split(",")))
        return print_analysis(func, locs=run.locs, facts=facts)
    return print_analysis(func, grid, locs=run.locs)
