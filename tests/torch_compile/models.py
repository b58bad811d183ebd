"""Models and functions for ``torch.compile(..., options={"cpu_backend": "triton"})``
on tilejit, each compared with eager torch (tests/e2e/test_torch_compile.py).

``CASES[name] = Case(make, inputs, ...)``: ``make()`` returns the function or module
to compile, ``inputs()`` its arguments; ``backward`` also compares the gradients of
a scalar loss; ``check`` replaces the comparison for random outputs (dropout).
Shapes are small: every case compiles a handful of kernels on a 2-core CI host.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class Case:
    make: Callable
    inputs: Callable
    rtol: float = 1e-4
    atol: float = 1e-5
    backward: bool = False
    dynamic: bool = False
    check: Callable | None = None
    expect_code: tuple = field(default_factory=tuple)    # text the generated code must hold
    error: str = ""        # a regex the compile error must match (a feature tilejit lacks)
    error_devices: tuple = ("cpu",)    # where ``error`` is expected; elsewhere compared with eager
    requires: str = ""     # "module:attribute" the case needs from torch (newer than some installs)

    def missing(self) -> str:
        """Why this torch cannot run the case ("" when it can)."""
        if not self.requires:
            return ""
        mod, attr = self.requires.split(":")
        try:
            getattr(importlib.import_module(mod), attr)
        except (ImportError, AttributeError):
            return f"torch {torch.__version__} lacks {mod}.{attr}"
        return ""


def _g(seed=0):
    return torch.Generator().manual_seed(seed)


def _randn(*shape, dtype=torch.float32, seed=0, grad=False):
    t = torch.randn(*shape, generator=_g(seed)).to(dtype)
    return t.requires_grad_() if grad else t


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc1, self.fc2 = nn.Linear(32, 64), nn.Linear(64, 16)
        self.norm = nn.LayerNorm(64)

    def forward(self, x):
        return self.fc2(F.gelu(self.norm(self.fc1(x))))


class Attention(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        torch.manual_seed(0)
        self.heads, self.qkv, self.proj = heads, nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-2, -1)) * (d // self.heads) ** -0.5
        mask = torch.ones(n, n, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, n, d)
        return x + self.proj(y)


class ConvBNPool(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv, self.bn = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.eval()

    def forward(self, x):
        return F.max_pool2d(F.relu(self.bn(self.conv(x))), 2) + F.avg_pool2d(x.mean(1, keepdim=True), 2)


def _loss(out):
    return out.float().pow(2).mean() if isinstance(out, torch.Tensor) else sum(o.float().pow(2).mean() for o in out)


def _issue741(idx, src):
    # the scatter behind triton-lang/triton #741: out[b, idx[b, j], j] = src[b, j]
    return torch.zeros(2, 196, 1000, device=src.device).scatter(1, idx[:, None, :], src[:, None, :])


def _dropout_check(out, inputs):
    """Each element is 0 or x / (1 - p); about p of them are 0 (p = 0.25, 64k samples)."""
    (x,) = inputs
    kept = out != 0
    assert torch.allclose(out[kept], x[kept] / 0.75, rtol=1e-5, atol=1e-6)
    frac = 1.0 - kept.float().mean().item()
    assert 0.23 < frac < 0.27, f"dropped fraction {frac}"


def _fmod_remainder(a, b, ah, bh):     # fp16 inputs (Inductor drops the rounding of a.half())
    return torch.fmod(a, b), torch.remainder(a, b), torch.fmod(a.double(), b.double()), torch.fmod(ah, bh)


def _erf_family(x, u):
    return (torch.erfc(x), torch.special.erfcx(x), torch.special.log_ndtr(x), torch.erfinv(u),
            torch.erfc(x.double()), torch.erfinv(u.double()) * 2)


def _gamma_family(p):     # lgamma and i1 are libdevice calls; digamma an ATen fallback in between
    return torch.lgamma(p) * 2, torch.digamma(p) + torch.lgamma(p + 1), torch.special.i1(p) - 1


def _inline_asm(x):
    from torch._higher_order_ops import inline_asm_elementwise
    return inline_asm_elementwise(x, x, asm_str="add.f32 $0, $1, $2;", constraints="=f,f,f",
                                  dtype=torch.float32) + 1


def _sort_topk(x):
    vals, idx = torch.sort(x, dim=-1, descending=True)
    top, tidx = torch.topk(x, 5, dim=-1)
    return vals, idx, top, tidx


CASES = {
    "elementwise_broadcast": Case(
        lambda: lambda x, y, z: (torch.relu(x[:, None] * y[None, :] + z) - 0.5).exp() * torch.sigmoid(z),
        lambda: (_randn(33), _randn(47, seed=1), _randn(33, 47, seed=2))),
    "softmax": Case(lambda: lambda x: torch.softmax(x * 1.5, dim=-1),
                    lambda: (_randn(16, 300),)),
    "layer_norm": Case(lambda: lambda x, w, b: F.layer_norm(x, (96,), w, b, 1e-5),
                       lambda: (_randn(8, 12, 96), _randn(96, seed=1), _randn(96, seed=2))),
    "gelu_erf": Case(lambda: lambda x: F.gelu(x), lambda: (_randn(4, 513),)),
    "gelu_tanh": Case(lambda: lambda x: F.gelu(x, approximate="tanh"), lambda: (_randn(4, 513),)),
    "reduce_non_last_dim": Case(lambda: lambda x: (x.sum(0), x.amax(1), x.mean(dim=(0, 2))),
                                lambda: (_randn(7, 33, 65),), rtol=1e-4, atol=1e-4),
    "reduce_long_rows": Case(lambda: lambda x: (x.sum(-1), x.logsumexp(-1), x.var(-1)),
                             lambda: (_randn(3, 20000),), rtol=1e-4, atol=1e-3),
    "gather_scatter_index_select": Case(
        lambda: lambda x, idx, src: (torch.gather(x, 1, idx), x.index_select(0, idx[:, 0]),
                                     torch.zeros(8, 40, device=x.device).scatter_add(1, idx, src), x[idx[:, 1]]),
        lambda: (_randn(8, 40), torch.randint(0, 8, (8, 6), generator=_g(3)),
                 _randn(8, 6, seed=4))),
    "cumsum_cumprod": Case(lambda: lambda x: (x.cumsum(-1), (x * 0.1 + 1).cumprod(1), x.cumsum(0)),
                           lambda: (_randn(6, 200),), rtol=1e-4, atol=1e-4),
    "argmax_argmin": Case(lambda: lambda x: (x.argmax(-1), x.argmin(0), x.max(1).indices),
                          lambda: (_randn(12, 77),)),
    "sort_topk": Case(lambda: _sort_topk, lambda: (_randn(6, 64),)),
    "embedding": Case(lambda: lambda w, ids: F.embedding(ids, w).sum(1) * 2,
                      lambda: (_randn(50, 16), torch.randint(0, 50, (4, 9), generator=_g(5)))),
    "mlp_forward": Case(MLP, lambda: (_randn(8, 32),), atol=1e-4),
    "mlp_training_step": Case(MLP, lambda: (_randn(8, 32, grad=True),), atol=1e-4, backward=True),
    "attention_forward": Case(Attention, lambda: (_randn(2, 16, 32),), atol=1e-4),
    "attention_training_step": Case(Attention, lambda: (_randn(2, 16, 32, grad=True),), atol=1e-4,
                                    backward=True),
    "conv_bn_pool": Case(ConvBNPool, lambda: (_randn(2, 3, 16, 16),), atol=1e-4),
    "int64_index_math": Case(
        lambda: lambda a, b: ((a * 3_000_000_000 + b) // 7 % 1_000_003, (a << 33) | b, torch.abs(a - b * 5)),
        lambda: (torch.randint(-2**20, 2**20, (300,), generator=_g(6)),
                 torch.randint(1, 2**30, (300,), generator=_g(7)))),
    "mixed_precision": Case(
        lambda: lambda a, b, c: ((a.float() * b).to(torch.bfloat16) + c, (a * a).sum(-1), b.half() / 3),
        lambda: (_randn(8, 64, dtype=torch.float16), _randn(8, 64, seed=1),
                 _randn(8, 64, dtype=torch.bfloat16, seed=2)), rtol=2e-2, atol=2e-2),
    "dynamic_shapes": Case(lambda: lambda x: torch.softmax(x, -1) * x.sum(0, keepdim=True),
                           lambda: (_randn(5, 37),), dynamic=True),
    "dropout": Case(lambda: lambda x: F.dropout(x, p=0.25, training=True),
                    lambda: (_randn(256, 256) + 3.0,), check=_dropout_check),
    # libdevice functions Inductor emits for torch.fmod, erfc, erfcx, log_ndtr, erfinv, lgamma, i1
    "fmod_remainder": Case(lambda: _fmod_remainder,
                           lambda: (_randn(4, 129) * 20, _randn(4, 129, seed=1) * 3 + 0.25,
                                    _randn(4, 129, dtype=torch.float16) * 20,
                                    _randn(4, 129, seed=1, dtype=torch.float16) * 3 + 0.25),
                           expect_code=("libdevice.fmod(",)),
    "erf_family": Case(lambda: _erf_family,
                       lambda: (_randn(4, 129) * 4, torch.rand(4, 129, generator=_g(1)) * 1.98 - 0.99),
                       expect_code=("libdevice.erfc(", "libdevice.erfcx(", "libdevice.erfinv(")),
    "gamma_family": Case(lambda: _gamma_family, lambda: (torch.rand(4, 129, generator=_g(2)) * 8 + 0.05,),
                         expect_code=("libdevice.lgamma(", "libdevice.cyl_bessel_i1(")),
    # a kernel needing a feature tilejit's CPU backend lacks (PTX inline assembly, from the
    # inline_asm_elementwise operator) fails naming the feature and the generated kernel's
    # file and line, not with an AttributeError deep inside torch; CUDA runs it
    "unsupported_feature_named": Case(
        lambda: _inline_asm, lambda: (_randn(64),), requires="torch._higher_order_ops:inline_asm_elementwise",
        error=r"\.py:\d+:\d+: cannot lower tt\.elementwise_inline_asm: tl\.inline_asm_elementwise "
              r"runs target assembly \(PTX\): only the cuda backend can run it"),
    "issue741_scatter": Case(lambda: _issue741,
                             lambda: (torch.randint(0, 196, (2, 1000), generator=_g(8)), _randn(2, 1000)),
                             expect_code=("xnumel = 2000",)),
}
