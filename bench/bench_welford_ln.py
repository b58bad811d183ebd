"""TorchInductor's welford layer-norm kernel (``F.layer_norm(x, (4096,), w, b)`` on a
64 x 4096 fp32 tensor, as torch 2.13's Inductor writes it for ``cpu_backend="triton"``;
the kernel below is its output verbatim, without the ``triton_heuristics`` decorator):
compile time (cpu and cuda:90, cold cache), CPU steady-state time, and the ``bar.sync``
count of its PTX, per (XBLOCK, R0_BLOCK, num_warps).

    PYTHONPATH=$PWD python bench/bench_welford_ln.py [--json out.json]

Run it on two checkouts to compare (e.g. before/after ``tt.combine_reduce``)."""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

os.environ.setdefault("TILEJIT_CACHE_DIR", tempfile.mkdtemp(prefix="tj-welford-"))
import tilejit.compat  # noqa: E402

tilejit.compat.install_triton_alias()

import numpy as np  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from torch._inductor.runtime import triton_helpers  # noqa: E402
from torch._inductor.runtime.triton_helpers import libdevice  # noqa: E402


@triton.jit
def triton_red_fused_native_layer_norm_0(in_ptr0, in_ptr1, in_ptr2, out_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    xnumel = 64
    r0_numel = 4096
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = xindex
    tmp2_mean = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    tmp2_m2 = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    tmp2_weight = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_1 = r0_index
        tmp0 = tl.load(in_ptr0 + (r0_1 + 4096*x0), r0_mask & xmask, eviction_policy='evict_last', other=0.0)
        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
        tmp2_mean_next, tmp2_m2_next, tmp2_weight_next = triton_helpers.welford_reduce(
            tmp1, tmp2_mean, tmp2_m2, tmp2_weight, roffset == 0
        )
        tmp2_mean = tl.where(r0_mask & xmask, tmp2_mean_next, tmp2_mean)
        tmp2_m2 = tl.where(r0_mask & xmask, tmp2_m2_next, tmp2_m2)
        tmp2_weight = tl.where(r0_mask & xmask, tmp2_weight_next, tmp2_weight)
    tmp3, tmp4, tmp5 = triton_helpers.welford(tmp2_mean, tmp2_m2, tmp2_weight, 1)
    tmp2 = tmp3[:, None]
    tmp6 = tmp4[:, None]
    tmp7 = tmp5[:, None]
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_1 = r0_index
        tmp8 = tl.load(in_ptr0 + (r0_1 + 4096*x0), r0_mask & xmask, eviction_policy='evict_first', other=0.0)
        tmp16 = tl.load(in_ptr1 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
        tmp18 = tl.load(in_ptr2 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
        tmp9 = tmp8 - tmp2
        tmp10 = tl.full([1, 1], 4096.0, tl.float32)
        tmp11 = (tmp6 / tmp10)
        tmp12 = tl.full([1, 1], 1e-05, tl.float32)
        tmp13 = tmp11 + tmp12
        tmp14 = libdevice.rsqrt(tmp13)
        tmp15 = tmp9 * tmp14
        tmp17 = tmp15 * tmp16
        tmp19 = tmp17 + tmp18
        tl.store(out_ptr2 + (r0_1 + 4096*x0), tmp19, r0_mask & xmask)


SIG = {"in_ptr0": "*fp32", "in_ptr1": "*fp32", "in_ptr2": "*fp32", "out_ptr2": "*fp32",
       "xnumel": "i32", "r0_numel": "i32"}
DIV = ("in_ptr0", "in_ptr1", "in_ptr2", "out_ptr2", "xnumel", "r0_numel")
CONFIGS = [(1, 2048, 8), (8, 512, 8), (1, 4096, 16)]   # (XBLOCK, R0_BLOCK, num_warps)


def _compile_s(target, x, r, warps):
    import tilejit
    t0 = time.perf_counter()
    k = tilejit.compile(triton_red_fused_native_layer_norm_0, signature=SIG,
                        constexprs={"XBLOCK": x, "R0_BLOCK": r}, divisible_by_16=DIV, target=target,
                        num_warps=warps)
    return time.perf_counter() - t0, k


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    a = ap.parse_args()
    from tilejit.testing import do_bench
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 4096)).astype(np.float32)
    w, b = rng.standard_normal(4096).astype(np.float32), rng.standard_normal(4096).astype(np.float32)
    mu, var = x.astype(np.float64).mean(1, keepdims=True), x.astype(np.float64).var(1, keepdims=True)
    want = (x - mu) / np.sqrt(var + 1e-5) * w + b
    rows = []
    for xb, rb, warps in CONFIGS:
        cpu_s, _ = _compile_s("cpu", xb, rb, warps)
        cuda_s, k = _compile_s("cuda:90", xb, rb, warps)
        ptx = k.asm["ptx"]
        out = np.zeros_like(x)
        fn = triton_red_fused_native_layer_norm_0
        fn[(64 // xb,)](x, w, b, out, 64, 4096, XBLOCK=xb, R0_BLOCK=rb, num_warps=warps)
        err = float(np.abs(out - want).max())
        ms = do_bench(lambda: fn[(64 // xb,)](x, w, b, out, 64, 4096, XBLOCK=xb, R0_BLOCK=rb, num_warps=warps),
                      warmup=50, rep=300)
        row = dict(XBLOCK=xb, R0_BLOCK=rb, num_warps=warps, compile_cpu_s=round(cpu_s, 3),
                   compile_cuda_s=round(cuda_s, 3), cpu_ms=round(ms, 4), bar_sync=ptx.count("bar.sync"),
                   ptx_lines=ptx.count("\n"), max_err=err)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
