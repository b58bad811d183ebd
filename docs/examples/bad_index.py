"""The kernels of docs/debugging.md.  Run:  python docs/examples/bad_index.py CASE
CASE: offbyone | overflow | hint"""
import sys

import numpy as np

import tilejit as triton
import tilejit.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs <= n                      # bug: should be offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def row_copy(src_ptr, dst_ptr, row, stride, BLOCK: tl.constexpr):
    start = row * stride                  # int32: wraps when row * stride >= 2**31
    cols = tl.arange(0, BLOCK)
    tl.store(dst_ptr + cols, tl.load(src_ptr + start + cols))


@triton.jit
def scaled_copy(x_ptr, out_ptr, n, step, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * step + tl.arange(0, BLOCK)
    offs = tl.max_contiguous(tl.multiple_of(offs, 16), BLOCK)   # wrong when step % 16 != 0
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2, mask=m)


def main(case):
    if case == "offbyone":
        n = 1000
        x = np.ones(n, np.float32)
        y = np.ones(n, np.float32)
        out = np.zeros(n, np.float32)
        add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
        print("ok, out.sum() =", out.sum())
    elif case == "overflow":
        src = np.arange(64, dtype=np.float32)
        dst = np.zeros(8, np.float32)
        row_copy[(1,)](src, dst, 65536, 65536, BLOCK=8)   # row 65536 of a 2**16-wide matrix
        print("ok, dst =", dst)
    elif case == "hint":
        x = np.arange(100, dtype=np.float32)
        out = np.zeros_like(x)
        scaled_copy[(4,)](x, out, 100, 25, BLOCK=32)
        print("ok" if (out == 2 * x).all() else "WRONG", "out[24:28] =", out[24:28])


if __name__ == "__main__":
    main(sys.argv[1])
