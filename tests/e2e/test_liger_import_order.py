"""Liger-Kernel 0.8.5 runs through the ``triton`` alias whatever the import order of torch,
``torch._dynamo``, transformers and triton (issue 17 item 5).

Each order runs in a fresh process: the modules are imported in that order (the alias
installed at its place, or by ``python -m tilejit run`` before the script), then Liger's
RMSNorm and cross entropy run forward and backward under every backend available here
and are compared with eager torch in float64.  Skips without torch, transformers or
liger-kernel.
"""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tilejit.backends import available_backends

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent('''
    import importlib, sys
    for name in sys.argv[1].split(","):
        if name == "alias":
            from tilejit.compat import install_triton_alias
            install_triton_alias()
        elif name:
            importlib.import_module(name)
    import torch
    import triton
    assert triton.__name__ == "triton" and hasattr(triton, "jit"), triton
    from tilejit.runtime.options import use_options
    from liger_kernel.transformers.functional import liger_cross_entropy, liger_rms_norm
    for backend in sys.argv[2].split(","):
        with use_options(backend=backend, interpret=(backend == "interpreter")):
            torch.manual_seed(0)
            x = torch.randn(6, 96, requires_grad=True)
            w = torch.randn(96, requires_grad=True)
            y = liger_rms_norm(x, w, 1e-6)
            y.backward(torch.ones_like(y))
            xd, wd = x.detach().double().requires_grad_(), w.detach().double().requires_grad_()
            ref = wd * (xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + 1e-6))
            ref.backward(torch.ones_like(ref))
            errs = [(y.double() - ref).abs().max(), (x.grad - xd.grad).abs().max(),
                    (w.grad - wd.grad).abs().max()]
            logits = torch.randn(5, 300, requires_grad=True)
            target = torch.randint(300, (5,))
            ref_logits = logits.detach().double().requires_grad_()
            ref_loss = torch.nn.functional.cross_entropy(ref_logits, target)
            ref_loss.backward()
            loss = liger_cross_entropy(logits, target)
            loss.backward()
            errs += [(loss.double() - ref_loss).abs(), (logits.grad - ref_logits.grad).abs().max()]
            assert max(float(e) for e in errs) < 1e-4, (backend, [float(e) for e in errs])
    print("ok", sys.argv[1])
''')

ORDERS = [
    # (modules imported in this order, "run": through `python -m tilejit run`)
    ("torch._dynamo,transformers,triton", "run"),
    ("torch,torch._dynamo,transformers,alias", ""),
    ("transformers,alias,triton,torch._dynamo", ""),
]


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    """One kernel cache for the orders: the first compiles, the others load (the
    import order, not the compiler, is what they vary)."""
    return str(tmp_path_factory.mktemp("liger-cache"))


@pytest.mark.parametrize("order,launcher", ORDERS, ids=[o.replace(",", "-") + ("-run" if r else "")
                                                        for o, r in ORDERS])
def test_liger_import_order(order, launcher, tmp_path, shared_cache):
    pytest.importorskip("torch", reason="Liger needs torch")
    pytest.importorskip("transformers", reason="the import orders include transformers")
    from importlib.metadata import PackageNotFoundError, version
    try:
        if version("liger-kernel") != "0.8.5":
            pytest.skip("liger-kernel 0.8.5 is not installed")
    except PackageNotFoundError:
        pytest.skip("liger-kernel 0.8.5 is not installed")
    script = tmp_path / "liger_order.py"
    script.write_text(SCRIPT)
    backends = ",".join(b for b in available_backends() if b in ("interpreter", "cpu"))
    cmd = [sys.executable] + (["-m", "tilejit", "run"] if launcher else []) + [str(script), order, backends]
    env = dict(os.environ, TILEJIT_CACHE_DIR=shared_cache,
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    for k in ("TILEJIT_BACKEND", "TILEJIT_INTERPRET"):
        env.pop(k, None)
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and f"ok {order}" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-4000:]
