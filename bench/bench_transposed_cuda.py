"""Column-major tiles on the H200: tilejit beside Triton.

    python bench/bench_transposed_cuda.py [--out bench/results/column_major_h200.json]

Two kernels, each launched over a whole matrix (one program per tile), medians of
``tilejit.testing.do_bench`` (CUDA events):

* ``transpose``: y = x.T for an 8192 x 8192 matrix (fp32 and fp16): the load is
  contiguous along dim 0 only (x read column-major), the store row-major;
* ``dot_colmajor``: one 64 x 64 x 64 fp16 ``tl.dot`` per program with both operands
  column-major (Triton's test_dot with COL_A, COL_B), fp32 result row-major.

tilejit loads the column-major tile of ``transpose`` in the dim-0-first layout (16-byte
vectors along dim 0) and restages the row-major store through shared memory with padded
rows (backends/cuda/dim_order.py; ``TILEJIT_CUDA_TUNING=dim0_row_stores=0``: per element,
as before; an earlier transposed access through unpadded shared memory was slower on the
H200: bench/results/transposed_access_h200.json); the column-major operands of
``dot_colmajor`` load in 16-byte vectors along dim 0 and are staged transposed
(rules_mma.plan_kmajor_loads; ``TILEJIT_CUDA_TUNING=kmajor_operands=0``: per element).
Triton 3.6 runs the same source where it is installed.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

import tilejit  # noqa: E402
import tilejit.language as tl  # noqa: E402
from tilejit.testing import do_bench  # noqa: E402


def transpose(X, sxm, sxn, Y, sym, syn, BM: tl.constexpr, BN: tl.constexpr):
    m = tl.program_id(0) * BM + tl.arange(0, BM)
    n = tl.program_id(1) * BN + tl.arange(0, BN)
    x = tl.load(X + m[:, None] * sxm + n[None, :] * sxn)
    tl.store(Y + m[:, None] * sym + n[None, :] * syn, x)


def dot_colmajor(X, sxm, sxk, Y, syk, syn, Z, B: tl.constexpr):
    pid = tl.program_id(0)
    r = tl.arange(0, B)
    X += pid * B * B
    Y += pid * B * B
    x = tl.load(X + r[:, None] * sxm + r[None, :] * sxk)
    y = tl.load(Y + r[:, None] * syk + r[None, :] * syn)
    z = tl.dot(x, y)
    tl.store(Z + pid * B * B + r[:, None] * B + r[None, :], z)


def _kernels(jit, lang=tl):
    """The two kernels under ``jit``, their ``tl`` bound to ``lang`` (Triton's JIT rejects a
    kernel that reads another package's functions, so its copies are made from the source)."""
    if lang is tl:
        return jit(transpose), jit(dot_colmajor)
    import inspect
    import linecache
    ns = {"tl": lang}
    for fn in (transpose, dot_colmajor):
        src, name = inspect.getsource(fn), f"<{fn.__name__} for {lang.__name__}>"
        linecache.cache[name] = (len(src), None, src.splitlines(True), name)   # getsource finds it
        exec(compile(src, name, "exec"), ns)
    return jit(ns["transpose"]), jit(ns["dot_colmajor"])


def _run(tj, tr, name, launch):
    out = {}
    for label, kern in (("tilejit", tj), ("triton", tr)):
        if kern[0] is not None:       # Triton absent: (None, None)
            launch(kern)
            out[label] = do_bench(lambda: launch(kern), return_mode="median")
    print(name, {k: round(v * 1000, 1) for k, v in out.items()}, "us")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="bench/results/column_major_h200.json")
    args = ap.parse_args()
    tj = _kernels(tilejit.jit)
    try:
        import triton
        tr = _kernels(triton.jit, triton.language) if triton.jit is not tilejit.jit else (None, None)
    except ImportError:
        tr = (None, None)
    rows = {}
    n, bm = 8192, 64
    for dt in (torch.float32, torch.float16):
        x = torch.randn(n, n, device="cuda", dtype=dt).t()          # column-major view
        y = torch.empty(n, n, device="cuda", dtype=dt)
        grid = (n // bm, n // bm)

        def launch(k, x=x, y=y, grid=grid):
            k[0][grid](x, x.stride(0), x.stride(1), y, y.stride(0), y.stride(1), BM=bm, BN=bm)
        rows[f"transpose_{str(dt)[6:]}"] = r = _run(tj, tr, f"transpose {dt}", launch)
        launch(tj)
        assert torch.equal(y, x), "transpose: wrong result"
    progs, b = 4096, 64
    x = torch.randn(progs, b, b, device="cuda", dtype=torch.float16).transpose(1, 2)
    y = torch.randn(progs, b, b, device="cuda", dtype=torch.float16).transpose(1, 2)
    z = torch.empty(progs, b, b, device="cuda", dtype=torch.float32)

    def launch(k):
        k[1][(progs,)](x, x.stride(1), x.stride(2), y, y.stride(1), y.stride(2), z, B=b)
    rows["dot_colmajor_fp16"] = _run(tj, tr, "dot_colmajor fp16", launch)
    launch(tj)
    torch.testing.assert_close(z, torch.bmm(x.float(), y.float()), rtol=1e-2, atol=1e-2)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                   "device": torch.cuda.get_device_name(), "ms": rows}, f, indent=1)
    return r


if __name__ == "__main__":
    main()
