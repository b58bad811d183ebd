"""Kernels as their authors published them, on tilejit's cuda backend and on Triton, side by side.

    PYTHONPATH=$PWD python bench/bench_corpus_cuda.py [--out bench/results/corpus_cuda_h200.json]
    PYTHONPATH=$PWD python bench/bench_corpus_cuda.py --device cpu --smoke   # tilejit cpu backend, tiny shapes
    python bench/bench_corpus_cuda.py --table bench/results/corpus_cuda_h200.json

Rows: Liger-Kernel 0.8.5's kernels (``pip install liger-kernel==0.8.5 --no-deps``),
imported from the installed ``liger_kernel`` package and called through its own
functional API (``liger_kernel.transformers.functional``): no copy, no edit, no hint
added.  Each row times one training step of the op, forward and backward, at the size
of Liger's own benchmark scripts (benchmark/scripts/benchmark_*.py) for their default
model profile, llama_3_8b (hidden 4096, intermediate 14336, vocabulary 128256, 32 query /
8 key-value heads of 128, bf16; the losses on fp32 inputs as those scripts make them), at
a token count inside their sweep.  The check: the op's output and input gradients
against eager torch in float64 (the formulas of Liger's tests).

Rows "Triton 01".."09": Triton's tutorials verbatim, the rows of bench_tutorials_cuda.py
(kernels from tests/triton_scripts/, the same launch code and sizes), tutorial 03 as
published (`% M` offsets, no hints).

Rows "Inductor ...": the kernels TorchInductor generates for tests/torch_compile/models.py's
functions at GPU sizes, the output module captured once under Triton and loaded unchanged
by both sides (bench/corpus_inductor.py says how).

The processes, timing and report are those of bench/bench_tutorials_cuda.py (the same
code): one child process with real Triton and one with tilejit behind the ``triton``
alias per group of rows, CUDA-event medians with the L2 flushed, a failure row rather
than a crash.  Inputs Liger overwrites (cross entropy stores its gradient in its input)
are restored before every call, untimed.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from typing import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_tutorials_cuda as bt  # noqa: E402
import corpus_inductor  # noqa: E402

DEFAULT_OUT = os.path.join(bt.ROOT, "bench", "results", "corpus_cuda_h200.json")
LIGER = "liger-kernel 0.8.5: liger_kernel/ops/{}.py"


@dataclass
class Op:
    """One Liger op at one size: its inputs, the call, the float64 reference."""
    inputs: list                # tensors; those with requires_grad get gradients
    liger: Callable             # (*inputs) -> tensor or tuple of tensors
    reference: Callable         # the same in eager torch (called on float64 copies)
    tol: float                  # max error allowed, relative to the largest |reference|
    shape: str
    work: float = 0.0           # nominal bytes (GB/s) or flops (TFLOP/s)
    unit: str = "GB/s"


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def liger_case(op: Op) -> bt.Case:
    """A Case that runs ``op`` forward and backward (random upstream gradients for tensor
    outputs), restoring its inputs first; checked against ``op.reference`` in float64."""
    import torch
    saved = [t.detach().clone() for t in op.inputs]
    leaves = [t for t in op.inputs if t.requires_grad]
    ref_in = [s.double().requires_grad_(t.requires_grad) if t.is_floating_point() else s
              for t, s in zip(op.inputs, saved)]
    ref_out = _as_tuple(op.reference(*ref_in))
    g = torch.Generator(device=saved[0].device).manual_seed(1)
    grads = [torch.randn(o.shape, device=o.device, generator=g) if o.dim() else torch.ones((), device=o.device)
             for o in ref_out]
    torch.autograd.backward(ref_out, [x.double() for x in grads])
    refs = [o.detach() for o in ref_out] + [t.grad for t in ref_in if t.requires_grad]
    state = {}

    def prepare():
        with torch.no_grad():
            for t, s in zip(op.inputs, saved):
                t.copy_(s)
        for t in leaves:
            t.grad = None
        state["dy"] = [x.to(o.dtype) for x, o in zip(grads, ref_out)]

    def run():
        out = _as_tuple(op.liger(*op.inputs))
        torch.autograd.backward(out, [d.to(o.dtype) for d, o in zip(state["dy"], out)])
        state["out"] = [o.detach() for o in out]

    def outputs():
        return tuple(state["out"]) + tuple(t.grad for t in leaves)

    def check():
        errs = [bt.close(a, r, 0.0, op.tol) for a, r in zip(outputs(), refs)]
        return max(e for e, _ in errs), all(ok for _, ok in errs), {}
    return bt.Case(op.shape, run, check, outputs, op.work, op.unit, prepare)


def nbytes(*ts):
    return float(sum(t.numel() * t.element_size() for t in ts))


# ------------------------------------------------------------------ the ops
def _llama(small):
    """Liger's default benchmark profile (llama_3_8b) or a tiny one for --smoke."""
    if small:
        return dict(T=37, H=100, I=200, V=1000, heads=4, kv=2, hd=16)
    return dict(T=8192, H=4096, I=14336, V=128256, heads=32, kv=8, hd=128)


def rms_norm(dev, small):
    import torch
    from liger_kernel.transformers.functional import liger_rms_norm
    c = _llama(small)
    x = torch.randn(c["T"], c["H"], device=dev, dtype=torch.bfloat16, requires_grad=True)
    w = torch.randn(c["H"], device=dev, dtype=torch.bfloat16, requires_grad=True)

    def ref(x, w):       # Llama's casting (Liger's default): inverse RMS in fp32
        return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))
    return liger_case(Op([x, w], lambda x, w: liger_rms_norm(x, w, 1e-6), ref, 2e-2,
                         f"bf16 {c['T']}x{c['H']}", 4 * nbytes(x)))


def layer_norm(dev, small):
    import torch
    from liger_kernel.transformers.functional import liger_layer_norm
    c = _llama(small)
    x = torch.randn(c["T"], c["H"], device=dev, dtype=torch.bfloat16, requires_grad=True)
    w = torch.randn(c["H"], device=dev, dtype=torch.bfloat16, requires_grad=True)
    b = torch.randn(c["H"], device=dev, dtype=torch.bfloat16, requires_grad=True)

    def ref(x, w, b):
        return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, 1e-6)
    return liger_case(Op([x, w, b], lambda x, w, b: liger_layer_norm(x, w, b, 1e-6), ref, 2e-2,
                         f"bf16 {c['T']}x{c['H']}", 4 * nbytes(x)))


def _norm_inputs(dev, small, bias):
    import torch
    c = _llama(small)
    x = torch.randn(c["T"], c["H"], device=dev, dtype=torch.bfloat16)
    w = torch.randn(c["H"], device=dev, dtype=torch.bfloat16)
    b = torch.randn(c["H"], device=dev, dtype=torch.bfloat16) if bias else None
    dy = torch.randn(c["T"], c["H"], device=dev, dtype=torch.bfloat16)
    return x, w, b, dy, f"bf16 {c['T']}x{c['H']}"


def _norm_reference(x, w, b, dy):
    """The float64 output and input/weight(/bias) gradients of RMSNorm (b None, Llama's
    casting) or LayerNorm, by autograd."""
    import torch
    xs = [t.double().requires_grad_(True) for t in (x, w) + ((b,) if b is not None else ())]
    if b is None:
        y = xs[1] * (xs[0] * torch.rsqrt(xs[0].pow(2).mean(-1, keepdim=True) + 1e-6))
    else:
        y = torch.nn.functional.layer_norm(xs[0], (x.shape[-1],), xs[1], xs[2], 1e-6)
    y.backward(dy.double())
    return [y.detach()] + [t.grad for t in xs]


def _kernel_case(shape, run, outputs, refs, tol, work, prepare=None):
    def check():
        errs = [bt.close(a, r, 0.0, tol) for a, r in zip(outputs(), refs)]
        return max(e for e, _ in errs), all(ok for _, ok in errs), {}
    return bt.Case(shape, run, check, outputs, work, "GB/s", prepare)


def norm_kernel(kind, part):
    """One Liger norm kernel alone, through its ops module's own host function
    (``rms_norm_forward`` / ``rms_norm_backward`` with Liger's defaults: Llama casting,
    dX in place of dY; ``layer_norm_forward`` / ``layer_norm_backward``)."""
    def make(dev, small):
        x, w, b, dy, shape = _norm_inputs(dev, small, kind == "layer_norm")
        refs = _norm_reference(x, w, b, dy)
        st = {}
        if kind == "rms_norm":
            from liger_kernel.ops.rms_norm import rms_norm_backward, rms_norm_forward
            fwd = lambda: rms_norm_forward(x, w, 1e-6, 0.0, "llama", None)  # noqa: E731
            y, _, rstd, block, warps, mode = fwd()
            dy_in = dy.clone()
            bwd = lambda: rms_norm_backward(dy_in, x, w, rstd, 0.0, mode, block, warps, True, None)  # noqa: E731
            prepare = (lambda: dy_in.copy_(dy)) if part == "bwd" else None
        else:
            from liger_kernel.ops.layer_norm import layer_norm_backward, layer_norm_forward
            fwd = lambda: layer_norm_forward(x, w, b, 1e-6)  # noqa: E731
            y, _, mean, rstd, _, _ = fwd()
            bwd = lambda: layer_norm_backward(dy, x, w, b, mean, rstd)  # noqa: E731
            prepare = None

        def run():
            st["out"] = fwd()[:1] if part == "fwd" else bwd()
        refs = refs[:1] if part == "fwd" else refs[1:]
        work = (2 if part == "fwd" else 3) * nbytes(x)
        return _kernel_case(shape, run, lambda: tuple(st["out"]), refs, 2e-2, work, prepare)
    return make


def rope(dev, small):
    import torch
    from liger_kernel.transformers.functional import liger_rope
    c = _llama(small)
    T, hd = c["T"], c["hd"]
    q = torch.randn(1, c["heads"], T, hd, device=dev, dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(1, c["kv"], T, hd, device=dev, dtype=torch.bfloat16, requires_grad=True)
    inv = 1.0 / (500000.0 ** (torch.arange(0, hd, 2, device=dev, dtype=torch.float32) / hd))
    ang = torch.outer(torch.arange(T, device=dev, dtype=torch.float32), inv)
    emb = torch.cat([ang, ang], -1)[None]
    cos, sin = emb.cos().to(torch.bfloat16), emb.sin().to(torch.bfloat16)

    def rot(x):
        return torch.cat([-x[..., hd // 2:], x[..., :hd // 2]], -1)

    def ref(q, k, cos, sin):   # HuggingFace Llama's apply_rotary_pos_emb (unsqueeze_dim=1)
        cos, sin = cos[:, None], sin[:, None]
        return q * cos + rot(q) * sin, k * cos + rot(k) * sin
    return liger_case(Op([q, k, cos, sin], liger_rope, ref, 2e-2,
                         f"bf16 q 1x{c['heads']}x{T}x{hd}, k 1x{c['kv']}x{T}x{hd}", 4 * nbytes(q, k)))


def _glu(activation):
    def make(dev, small):
        import torch
        from liger_kernel.transformers import functional as F
        c = _llama(small)
        T = c["T"] // 2 if not small else c["T"]
        a = torch.randn(T, c["I"], device=dev, dtype=torch.bfloat16, requires_grad=True)
        b = torch.randn(T, c["I"], device=dev, dtype=torch.bfloat16, requires_grad=True)
        act = (torch.nn.functional.silu if activation == "swiglu" else
               lambda x: torch.nn.functional.gelu(x, approximate="tanh"))
        fn = F.liger_swiglu if activation == "swiglu" else F.liger_geglu
        return liger_case(Op([a, b], fn, lambda a, b: act(a) * b, 2e-2,
                             f"bf16 {T}x{c['I']}", 6 * nbytes(a)))
    return make


def cross_entropy(dev, small):
    import torch
    from liger_kernel.transformers.functional import liger_cross_entropy
    c = _llama(small)
    BT = c["T"] // 2
    x = torch.randn(BT, c["V"], device=dev, requires_grad=True)
    y = torch.randint(c["V"], (BT,), device=dev)
    return liger_case(Op([x, y], liger_cross_entropy, torch.nn.functional.cross_entropy, 1e-4,
                         f"fp32 {BT}x{c['V']}", 2 * nbytes(x)))


def fused_linear_cross_entropy(dev, small):
    import torch
    from liger_kernel.transformers.functional import liger_fused_linear_cross_entropy
    c = _llama(small)
    BT, H, V = c["T"] // 2, c["H"], c["V"]
    x = torch.randn(BT, H, device=dev, dtype=torch.bfloat16, requires_grad=True)
    w = (torch.randn(V, H, device=dev, dtype=torch.bfloat16) / H ** 0.5).requires_grad_(True)
    y = torch.randint(V, (BT,), device=dev)

    def ref(x, w, y):
        return torch.nn.functional.cross_entropy(x @ w.t(), y)
    return liger_case(Op([x, w, y], liger_fused_linear_cross_entropy, ref, 3e-2,
                         f"bf16 x {BT}x{H}, W {V}x{H}", 6.0 * BT * H * V, "TFLOP/s"))


def _log_probs(dev, BT, V, seed):
    import torch
    g = torch.Generator(device=dev).manual_seed(seed)
    return torch.randn(BT, V, device=dev, generator=g).log_softmax(-1)


def kl_div(dev, small):
    import torch
    from liger_kernel.transformers.functional import liger_kl_div
    c = _llama(small)
    BT = c["T"] // 4
    x = _log_probs(dev, BT, c["V"], 2).requires_grad_(True)
    t = _log_probs(dev, BT, c["V"], 3).exp()

    def liger(x, t):
        return liger_kl_div(x, t, reduction="batchmean")

    def ref(x, t):
        return torch.nn.functional.kl_div(x, t, reduction="batchmean")
    return liger_case(Op([x, t], liger, ref, 1e-4, f"fp32 {BT}x{c['V']} batchmean", 3 * nbytes(x)))


def jsd(dev, small):
    import math
    import torch
    from liger_kernel.transformers.functional import liger_jsd
    c = _llama(small)
    BT = c["T"] // 4
    x = _log_probs(dev, BT, c["V"], 4).requires_grad_(True)
    t = _log_probs(dev, BT, c["V"], 5)

    def ref(log_q, log_p, beta=0.5):        # Liger's test (test/transformers/test_jsd.py)
        kl = torch.nn.KLDivLoss(reduction="none", log_target=True)
        log_m = torch.logaddexp(log_p + math.log(beta), log_q + math.log1p(-beta))
        loss = beta * kl(log_m, log_p).sum(-1) + (1 - beta) * kl(log_m, log_q).sum(-1)
        return (loss / log_q.shape[0]).sum()
    return liger_case(Op([x, t], liger_jsd, ref, 1e-4, f"fp32 {BT}x{c['V']} beta 0.5", 3 * nbytes(x)))


def _row(key, title, module, kernels, make, group):
    return bt.Row(key, title, group, kernels, make, LIGER.format(module))


ROWS = [
    _row("liger_rms_norm", "Liger RMSNorm fwd+bwd", "rms_norm", "_rms_norm_forward_kernel + backward",
         rms_norm, "norms"),
    _row("liger_layer_norm", "Liger LayerNorm fwd+bwd", "layer_norm", "_layer_norm_forward_kernel + backward",
         layer_norm, "norms"),
    _row("liger_rms_norm_fwd", "Liger RMSNorm fwd kernel", "rms_norm", "_rms_norm_forward_kernel",
         norm_kernel("rms_norm", "fwd"), "norms"),
    _row("liger_rms_norm_bwd", "Liger RMSNorm bwd kernel", "rms_norm", "_rms_norm_backward_kernel + dW sum",
         norm_kernel("rms_norm", "bwd"), "norms"),
    _row("liger_layer_norm_fwd", "Liger LayerNorm fwd kernel", "layer_norm", "_layer_norm_forward_kernel",
         norm_kernel("layer_norm", "fwd"), "norms"),
    _row("liger_layer_norm_bwd", "Liger LayerNorm bwd kernel", "layer_norm",
         "_layer_norm_backward_kernel + dW/dB sums", norm_kernel("layer_norm", "bwd"), "norms"),
    _row("liger_rope", "Liger RoPE fwd+bwd", "rope", "_triton_rope (fwd, bwd)", rope, "elementwise"),
    _row("liger_swiglu", "Liger SwiGLU fwd+bwd", "swiglu", "_swiglu_forward_kernel + backward",
         _glu("swiglu"), "elementwise"),
    _row("liger_geglu", "Liger GeGLU fwd+bwd", "geglu", "_geglu_tanh_forward_kernel + backward",
         _glu("geglu"), "elementwise"),
    _row("liger_cross_entropy", "Liger CrossEntropy fwd+bwd", "cross_entropy", "liger_cross_entropy_kernel",
         cross_entropy, "losses"),
    _row("liger_flce", "Liger FusedLinearCrossEntropy fwd+bwd", "fused_linear_cross_entropy",
         "liger_cross_entropy_kernel + cuBLAS matmuls", fused_linear_cross_entropy, "losses"),
    _row("liger_kl_div", "Liger KL-div fwd+bwd", "kl_div", "_kldiv_kernel_forward + backward", kl_div, "losses"),
    _row("liger_jsd", "Liger JSD fwd+bwd", "jsd", "_jsd_kernel", jsd, "losses"),
]
# Triton's tutorials, verbatim: bench_tutorials_cuda.py's rows (the same kernels from
# tests/triton_scripts/, launch code and sizes), named after the upstream tutorial file.
# Tutorial 03 is its own published kernel (`% M` offsets, no hints); tutorial 09's hinted
# `matmul_kernel` is listed under 09.  All run in one child per implementation ("tutorials").
TRITON_TUTORIAL = "triton 3.6: python/tutorials/{} (tests/triton_scripts/{}.py)"
TUTORIALS = (   # (bench_tutorials_cuda.py key, title, upstream tutorial file)
    ("vector_add", "Triton 01 vector add", "01-vector-add.py"),
    ("softmax_4096", "Triton 02 fused softmax", "02-fused-softmax.py"),
    ("matmul_03", "Triton 03 matmul (% M, no hints)", "03-matrix-multiplication.py"),
    ("dropout", "Triton 04 low-memory dropout", "04-low-memory-dropout.py"),
    ("layer_norm_fwd", "Triton 05 layer norm fwd", "05-layer-norm.py"),
    ("layer_norm_bwd", "Triton 05 layer norm bwd", "05-layer-norm.py"),
    ("attention", "Triton 06 fused attention fwd", "06-fused-attention.py (Triton 3.0's forward)"),
    ("attention_causal", "Triton 06 fused attention fwd causal", "06-fused-attention.py (Triton 3.0's forward)"),
    ("grouped_gemm", "Triton 08 grouped GEMM", "08-grouped-gemm.py"),
    ("matmul", "Triton 09 matmul_kernel (hinted)", "09-persistent-matmul.py"),
    ("persistent_matmul", "Triton 09 persistent matmul", "09-persistent-matmul.py"),
)


def _tutorial_row(key, title, upstream):
    row = bt.BY_KEY[key]
    return replace(row, key="tutorial_" + key, title=title, script="tutorials",
                   source=TRITON_TUTORIAL.format(upstream, row.script) + ": " + row.kernels)


ROWS += [_tutorial_row(*t) for t in TUTORIALS]
ROWS += corpus_inductor.rows(bt.Row)
BY_KEY = {r.key: r for r in ROWS}
CORPUS = bt.Suite(BY_KEY, os.path.abspath(__file__), DEFAULT_OUT, title="kernel",
                  packages=("liger-kernel",))


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--device" in argv and "--child" not in argv:   # --device cpu: the smoke run's device
        i = argv.index("--device")
        if argv[i + 1] == "cpu" and "--smoke" not in argv:
            argv.append("--smoke")
        del argv[i:i + 2]
    return bt.main(argv, CORPUS, __doc__.split("\n")[0], budget=230.0)


if __name__ == "__main__":
    sys.exit(main())
