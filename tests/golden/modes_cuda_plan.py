"""Golden mode ``cuda-plan``: the cuda backend's planning stage (backends/cuda/plan.py)
of a kernel lowered for a target (``CudaBackend.plan_text``: the text ``python -m tilejit
dump --stage cuda-plan`` prints, without making the PTX).  No GPU is needed.

    # RUN: cuda-plan [--arch=90] [--warps=4] [--stages=3] [--tuning=name=0,...] [--attrs=k=v,...]
    #                 [--vectorize=0] [--align-version=0] [--kernel=NAME]

``--tuning``: CudaTuning fields switched (runtime/options.py), e.g. ``row_ring=0``;
``--attrs``: launch options in the function attributes, integers or True/False
(``maxnreg=168``, ``min_ctas_per_sm=1``);
``--vectorize=0``: the ``vectorize`` option off (no analysis: every access per lane);
``--align-version=0``: the ``align_version`` option off (one version of each dot loop).
"""
from runner import Run, register_mode


@register_mode("cuda-plan")
def mode_cuda_plan(func, run: Run) -> str:
    from tilejit.backends import get_backend
    from tilejit.runtime.options import CudaTuning, Options
    from tilejit.transforms import run_pipeline
    options = Options(debug=True, backend="cuda", vectorize=str(run.extra.get("vectorize", 1)) != "0",
                      align_version=str(run.extra.get("align-version", 1)) != "0")
    tuning = str(run.extra.get("tuning", "") or "")
    if tuning:
        options = options.with_(cuda=CudaTuning.parse(tuning))
    func = run_pipeline(func, options)
    func.attrs["target"] = f"cuda:{run.extra.get('arch', 90)}"
    func.attrs["num_warps"] = int(run.extra.get("warps", 4))
    func.attrs["num_stages"] = int(run.extra.get("stages", 3))
    attrs = str(run.extra.get("attrs", "") or "")
    for k, v in (kv.split("=") for kv in attrs.split(",") if kv):
        func.attrs[k] = {"True": True, "False": False}.get(v) if v in ("True", "False") else int(v)
    return get_backend("cuda").plan_text(func, options)
