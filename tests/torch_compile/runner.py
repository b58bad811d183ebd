"""Run cases of models.py through ``torch.compile(..., options={"cpu_backend":
"triton"})`` under the ``triton`` alias and compare with eager torch.

    python tests/torch_compile/runner.py [--device=cuda] [--mode=max-autotune] [NAME ...]

(all cases without names).  ``--device=cuda`` runs the models on CUDA tensors
(tilejit's CUDA backend; the alias wins over an installed ``triton``).

One documented call before torch is imported makes Inductor use tilejit:
``tilejit.compat.install_triton_alias()``.  Prints one JSON line per case:
{"name", "ok", "error", "kernels"} where kernels counts the @triton.jit kernels
Inductor generated (each compiled and launched by tilejit).
"""
from __future__ import annotations

import copy
import json
import os
import re
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tilejit.compat  # noqa: E402

tilejit.compat.install_triton_alias()

import torch  # noqa: E402
from torch._inductor.utils import run_and_get_code  # noqa: E402

from models import CASES, _loss  # noqa: E402

OPTIONS = {"cpu_backend": "triton"}


def _flat(x):
    if isinstance(x, torch.Tensor):
        return [x]
    return [t for item in x for t in _flat(item)]


def _compare(got, want, case, what):
    for i, (g, w) in enumerate(zip(_flat(got), _flat(want))):
        if g.dtype != w.dtype or g.shape != w.shape:
            raise AssertionError(f"{what}[{i}]: {g.dtype}{tuple(g.shape)} vs eager {w.dtype}{tuple(w.shape)}")
        if g.dtype.is_floating_point:
            torch.testing.assert_close(g, w, rtol=case.rtol, atol=case.atol, msg=lambda m: f"{what}[{i}]: {m}")
        elif not torch.equal(g, w):
            bad = (g != w).nonzero()[:5].tolist()
            raise AssertionError(f"{what}[{i}]: differs from eager at {bad}")


def _inputs_like(inputs):
    return [t.detach().clone().requires_grad_(t.requires_grad) for t in inputs]


def run_case(name, device="cpu", mode=None):
    case = CASES[name]
    torch._dynamo.reset()
    obj = case.make()
    if isinstance(obj, torch.nn.Module):
        obj = obj.to(device)
    eager = copy.deepcopy(obj) if isinstance(obj, torch.nn.Module) else obj
    if mode:     # torch.compile takes a mode or options, not both
        torch._inductor.config.cpu_backend = "triton"
    compiled = torch.compile(obj, options=None if mode else OPTIONS, mode=mode,
                             dynamic=case.dynamic or None)
    inputs = [t.detach().to(device).requires_grad_(t.requires_grad) for t in case.inputs()]
    c_in = _inputs_like(inputs)
    if case.error and device in case.error_devices:
        try:
            compiled(*c_in)
        except Exception as e:      # Inductor wraps the compile error
            if not re.search(case.error, str(e)):
                raise AssertionError(f"the error does not match {case.error!r}:\n{e}") from None
            return 0
        raise AssertionError(f"expected an error matching {case.error!r}")
    got, code = run_and_get_code(compiled, *c_in)
    kernels = sum(src.count("@triton.jit") for src in code)
    if kernels == 0:
        raise AssertionError("Inductor generated no Triton kernels")
    for text in case.expect_code:
        if not any(text in src for src in code):
            raise AssertionError(f"generated code lacks {text!r}")
    if case.check is not None:
        case.check(got, inputs)
        return kernels
    e_in = _inputs_like(inputs)
    want = eager(*e_in)
    _compare(got, want, case, "output")
    if case.backward:
        _loss(got).backward()
        _loss(want).backward()
        _compare([t.grad for t in c_in if t.requires_grad], [t.grad for t in e_in if t.requires_grad],
                 case, "input grad")
        if isinstance(obj, torch.nn.Module):
            _compare([p.grad for p in obj.parameters()], [p.grad for p in eager.parameters()],
                     case, "param grad")
    if case.dynamic:   # a second shape through the same (symbolic) kernels
        more = [torch.randn(tuple(s + 4 for s in t.shape), device=device) for t in inputs]
        _compare(compiled(*more), eager(*more), case, "output (second shape)")
    return kernels


def main(argv):
    if {"-h", "--help"} & set(argv):
        print(__doc__.strip() + "\n\ncases: " + " ".join(CASES))
        return
    bad = [a for a in argv if a.startswith("-") and (not a.startswith("--") or "=" not in a)]
    if bad:
        raise SystemExit(f"unknown option {bad[0]!r} (options: --device=cuda, --mode=max-autotune; --help)")
    flags = dict(a[2:].split("=", 1) for a in argv if a.startswith("--"))
    names = [a for a in argv if not a.startswith("--")]
    for name in names or list(CASES):
        try:
            kernels = run_case(name, flags.get("device", "cpu"), flags.get("mode"))
            rec = {"name": name, "ok": True, "error": "", "kernels": kernels}
        except Exception as e:  # reported per case; the run goes on
            tb = traceback.format_exc(limit=-6)
            rec = {"name": name, "ok": False, "error": f"{type(e).__name__}: {e}"[:3000] + "\n" + tb[-3000:],
                   "kernels": 0}
        print("TORCH_COMPILE_CASE " + json.dumps(rec), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
