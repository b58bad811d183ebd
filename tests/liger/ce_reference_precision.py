"""Evidence for ``reference_precision.txt``: the gradient of Liger's label-smoothed cross
entropy, computed three ways against float64 eager torch.

    TILEJIT_BACKEND=cpu python tests/liger/ce_reference_precision.py [seed] [rows]

Prints one JSON object: for eager torch in float32 (the reference Liger's tests compare
with) and for Liger's Triton kernels through tilejit's alias, the median and max relative
error of the input gradient against float64 (over elements with |g| > 1e-7), and whether
each meets the tests' tolerance (atol 1e-8, rtol 1e-5) against float64.  The loss is that
of ``test_correctness_not_last_layer_with_other_params``'s fp32 case: softcap 40, label
smoothing 0.2, z-loss 1e-5, ignore index 42, sum reduction, V = 32000.
"""
import json
import sys

import tilejit.compat

tilejit.compat.install_triton_alias()

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

V, IGNORE, Z_SCALE, SMOOTHING, SOFTCAP = 32000, 42, 1e-5, 0.2, 40.0
ATOL, RTOL = 1e-8, 1e-5


def _loss(x, target, dtype):
    """The tests' reference (``CrossEntropyWithZLoss`` after a softcap), in ``dtype``."""
    z = SOFTCAP * torch.tanh(x.to(dtype) / SOFTCAP)
    ce = F.cross_entropy(z, target, reduction="sum", label_smoothing=SMOOTHING,
                         ignore_index=IGNORE)
    lse = torch.logsumexp(z, -1)
    return ce + torch.where(target != IGNORE, Z_SCALE * lse ** 2, 0.0).sum()


def _grad(x, fn, go):
    a = x.clone().requires_grad_(True)
    (fn(a) * 3).backward(go)
    return a.grad.double()


def measure(seed: int = 0, rows: int = 8) -> dict:
    from liger_kernel.transformers.cross_entropy import LigerCrossEntropyLoss
    torch.manual_seed(seed)
    x = torch.randn(rows, V)
    target = torch.randint(0, V, (rows,))
    target[torch.randperm(rows)[: rows // 4]] = IGNORE
    go = torch.rand(())
    liger = LigerCrossEntropyLoss(reduction="sum", ignore_index=IGNORE, lse_square_scale=Z_SCALE,
                                  label_smoothing=SMOOTHING, softcap=SOFTCAP)
    g64 = _grad(x.double(), lambda a: _loss(a, target, torch.float64), go.double())
    out = {}
    for name, g in (("torch_float32", _grad(x, lambda a: _loss(a, target, torch.float32), go)),
                    ("tilejit", _grad(x, lambda a: liger(a, target), go))):
        big = g64.abs() > 1e-7
        rel = ((g - g64).abs() / g64.abs().clamp_min(1e-30))[big]
        out[name] = {"median_rel": rel.median().item(), "max_rel": rel.max().item(),
                     "within_test_tolerance": bool(torch.allclose(g, g64, atol=ATOL, rtol=RTOL))}
    return out


if __name__ == "__main__":
    print(json.dumps(measure(*(int(a) for a in sys.argv[1:3]))))
