"""Rows of bench/bench_corpus_cuda.py: the kernels TorchInductor generates for the
functions of tests/torch_compile/models.py (``CASES``), at GPU sizes, the same generated
source on both sides.

How a row gets its source: the Triton child (real Triton, no alias) runs
``torch.compile`` on the case's function with the row's inputs and captures Inductor's
output module (``run_and_get_code``: the wrapper that allocates the outputs and launches
the ``@triton.jit`` kernels Inductor wrote); it saves that text in the bench's shared
work directory.  The tilejit child loads the *same text* (``PyCodeCache.load``) with
tilejit behind the ``triton`` alias, so both sides compile and launch identical kernel
source; each side's Inductor autotuner picks its configs among those the source lists,
as it would for a user (the tilejit child uses its own TORCHINDUCTOR_CACHE_DIR: Inductor's
local autotune cache is keyed by the kernel source alone, so in the shared default
directory it would launch the Triton child's pick); the row records the picks.  Where no capture exists (``--smoke``: tilejit only, or the
Triton child failed), the tilejit child captures the code itself under the alias (on the
cpu backend with ``cpu_backend="triton"``) and the row says so (``inductor_source``).
The record carries the sha256 of the text each side ran.

Each side times ``call(inputs)`` of the loaded module (the wrapper plus its kernels) and
checks the outputs against the case's function run eagerly in float64 (integer outputs:
exactly, on the same inputs).
"""
from __future__ import annotations

import hashlib
import os
import sys

import bench_tutorials_cuda as bt

ROOT = bt.ROOT
MODELS = os.path.join(ROOT, "tests", "torch_compile")
SOURCE = "TorchInductor output (torch {}) for tests/torch_compile/models.py CASES[{!r}]"


def _alias_installed() -> bool:
    compat = sys.modules.get("tilejit.compat")
    return "triton" in getattr(compat, "_finders", {})


def _randn(dev, *shape, dtype=None, seed=0):
    import torch
    g = torch.Generator(device=dev).manual_seed(seed)
    t = torch.randn(*shape, device=dev, generator=g)
    return t.to(dtype) if dtype is not None else t


def _randint(dev, lo, hi, shape, seed):
    import torch
    g = torch.Generator(device=dev).manual_seed(seed)
    return torch.randint(lo, hi, shape, device=dev, generator=g)


# case -> inputs at GPU size (the cases' own inputs, models.py, are the --smoke size)
def _big_inputs(dev):
    import torch
    bf16, f16 = torch.bfloat16, torch.float16
    return {
        "elementwise_broadcast": lambda: (_randn(dev, 4096), _randn(dev, 8191, seed=1),
                                          _randn(dev, 4096, 8191, seed=2)),
        "softmax": lambda: (_randn(dev, 8192, 4096),),
        "layer_norm": lambda: (_randn(dev, 4096, 128, 96), _randn(dev, 96, seed=1), _randn(dev, 96, seed=2)),
        "gelu_erf": lambda: (_randn(dev, 8192, 4097),),
        "gelu_tanh": lambda: (_randn(dev, 8192, 4097),),
        "reduce_non_last_dim": lambda: (_randn(dev, 32, 2048, 513),),
        "reduce_long_rows": lambda: (_randn(dev, 256, 200000),),
        "argmax_argmin": lambda: (_randn(dev, 8192, 4097),),
        "mixed_precision": lambda: (_randn(dev, 8192, 4096, dtype=f16), _randn(dev, 8192, 4096, seed=1),
                                    _randn(dev, 8192, 4096, dtype=bf16, seed=2)),
        "embedding": lambda: (_randn(dev, 50000, 512), _randint(dev, 0, 50000, (4096, 32), 5)),
    }


def _cases():
    if MODELS not in sys.path:
        sys.path.insert(0, MODELS)
    from models import CASES
    return CASES


def _capture(fn, inputs, dev):
    """Inductor's output module for ``fn`` at ``inputs`` (compiled in this process)."""
    import torch
    from torch._inductor.utils import run_and_get_code
    torch._dynamo.reset()
    options = {"cpu_backend": "triton"} if dev == "cpu" else {}
    compiled = torch.compile(fn, options=options)
    _, code = run_and_get_code(compiled, *[t.clone() for t in inputs])
    if len(code) != 1:
        raise RuntimeError(f"Inductor produced {len(code)} output modules; one expected")
    return code[0]


def _shared_path(key):
    base = bt.shared_dir()
    os.makedirs(base, exist_ok=True)
    return os.path.join(base, f"inductor_{key}.py")


def _source_for(key, fn, inputs, dev):
    """(output-module text, where it came from): the Triton child captures and saves it;
    the tilejit child loads that capture, or captures under the alias when none exists."""
    path = _shared_path(key)
    if _alias_installed() and os.path.exists(path):
        with open(path) as f:
            return f.read(), "captured under Triton"
    code = _capture(fn, inputs, dev)
    if not _alias_installed():
        with open(path + ".tmp", "w") as f:
            f.write(code)
        os.replace(path + ".tmp", path)
        return code, "captured under Triton"
    return code, "captured under tilejit (no Triton capture)"


def _arg_order(mod, inputs):
    """The inputs in the order of the output module's ``call`` arguments (Dynamo numbers
    a graph's inputs by first use, not by parameter position): each argument spec of the
    module's ``get_args`` (shape, stride, dtype) matched to the first unused input with
    that spec."""
    import torch
    import torch._dynamo.testing as dt
    real = dt.rand_strided

    def spec(size, stride, dtype=torch.float32, device="cpu", extra_size=0):
        return tuple(size), tuple(stride), dtype
    dt.rand_strided = spec
    try:
        specs = mod.get_args()
    finally:
        dt.rand_strided = real
    free, order = list(range(len(inputs))), []
    for spec in specs:
        hit = [i for i in free if (tuple(inputs[i].shape), inputs[i].stride(), inputs[i].dtype) == spec]
        if not hit:
            raise RuntimeError(f"no input matches the compiled module's argument {spec}")
        free.remove(hit[0])
        order.append(hit[0])
    return [inputs[i] for i in order]


def _reference(fn, inputs):
    """The case's function run eagerly, floating inputs in float64."""
    ref = fn(*[t.double() if t.is_floating_point() else t for t in inputs])
    return ref if isinstance(ref, (tuple, list)) else (ref,)


def _check(outs, refs, tol):
    errs, ok = [], True
    for o, r in zip(outs, refs):
        if o.is_floating_point():
            e, good = bt.close(o.double(), r.double(), tol, tol)
        else:
            e = float((o != r).sum().item())
            good = e == 0 and o.shape == r.shape
        errs.append(e)
        ok = ok and good
    return max(errs), ok and len(outs) == len(refs)


def _picks(mod, code):
    """{kernel: the config its Inductor autotuner launches} of a loaded output module."""
    from inductor_ptx import kernel_sources
    return {name: [str(ln.config) for ln in getattr(getattr(mod, name, None), "launchers", None) or []]
            for name, _ in kernel_sources(code)}


def inductor_case(case_name, tol):
    def make(dev, small):
        import torch._inductor.config as icfg
        from torch._inductor.codecache import PyCodeCache
        icfg.compile_threads = 1
        case = _cases()[case_name]
        fn = case.make()
        inputs = ([t.to(dev) for t in case.inputs()] if small else _big_inputs(dev)[case_name]())
        key = case_name + ("_small" if small else "")
        code, origin = _source_for(key, fn, inputs, dev)
        if _alias_installed():      # tilejit's own autotuning, not the Triton child's cached pick
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(bt.shared_dir(), "inductor_cache_tilejit")
        mod = PyCodeCache.load(code)
        refs = _reference(fn, inputs)
        args = _arg_order(mod, inputs)
        st = {}

        def run():
            st["out"] = tuple(mod.call(list(args)))

        def check():
            err, ok = _check(st["out"], refs, tol)
            return err, ok, {"inductor_source": origin,
                             "inductor_code_sha256": hashlib.sha256(code.encode()).hexdigest()[:16],
                             "kernels": code.count("@triton.jit"), "autotune_picks": _picks(mod, code)}
        work = float(sum(t.numel() * t.element_size() for t in inputs))
        shape = ", ".join(f"{str(t.dtype).replace('torch.', '')}{tuple(t.shape)}" for t in inputs)
        return bt.Case(shape, run, check, lambda: st["out"], work, "GB/s (inputs)")
    return make


# (case, tolerance relative to max |reference| and absolute)
CASE_TOL = (
    ("elementwise_broadcast", 1e-5), ("softmax", 1e-5), ("layer_norm", 1e-4), ("gelu_erf", 1e-5),
    ("gelu_tanh", 1e-5), ("reduce_non_last_dim", 1e-4), ("reduce_long_rows", 1e-4),
    ("argmax_argmin", 0.0), ("mixed_precision", 2e-2), ("embedding", 1e-5),
)


def rows(row_cls):
    from importlib.metadata import version
    ver = version("torch").split("+")[0]
    return [row_cls(f"inductor_{name}", f"Inductor {name}", "inductor", "@triton.jit kernels Inductor wrote",
                    inductor_case(name, tol), SOURCE.format(ver, name)) for name, tol in CASE_TOL]
