"""Blocked layouts of kernels whose tiles are all 2-byte: 8 elements per chunk, so
fp16/bf16 tiles move in 16-byte accesses as fp32 tiles do with 4 (layout.kernel_max_vec).
Kernels that also touch wider tiles, or run tt.dot, keep 4 -- except that where tiles are
accessed inside a loop those accesses alone decide (a row loop over 2-byte rows keeping fp32
partial sums stored after the loop gets 8).  No GPU needed."""
from __future__ import annotations

import re

import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends.cuda import target as tgt
from tilejit.backends.cuda.layout import MAX_VEC, kernel_max_vec


@tilejit.jit
def row_scale(X, Y, W, stride, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + row * stride + cols, mask=m, other=0.0).to(tl.float32)
    w = tl.load(W + cols, mask=m, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + 1e-5)
    tl.store(Y + row * stride + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=m)


def _compile(dtype, ydtype=None, arch=90):
    sig = {"X": f"*{dtype}", "Y": f"*{ydtype or dtype}", "W": f"*{dtype}", "stride": "i32", "N": "i32"}
    return tilejit.compile(row_scale, signature=sig, constexprs={"BLOCK": 4096},
                           divisible_by_16=tuple(sig), target=f"cuda:{arch}", num_warps=8)


def _accesses(ptx):
    return re.findall(r"(?:ld|st)\.global\.(v\d\.b\d+|b\d+)", ptx)


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_two_byte_kernels_use_16_byte_accesses(dtype):
    k = _compile(dtype)
    assert kernel_max_vec(k.func) == 8
    acc = _accesses(k.asm["ptx"])
    tiles = [a for a in acc if a != "b32"]             # (the scalar access aside)
    assert tiles and set(tiles) == {"v4.b32"}          # 8 halves = 16 bytes per access
    # 4096 elements over 256 threads: 16 per thread = 2 accesses per tile (x, w, y)
    assert len(tiles) == 3 * 2


def test_fp32_and_mixed_kernels_keep_four_element_chunks():
    for args in (("fp32",), ("fp16", "fp32")):
        k = _compile(*args)
        assert kernel_max_vec(k.func) == MAX_VEC
        acc = _accesses(k.asm["ptx"])
        assert "v8.b16" not in " ".join(acc)
        # fp32: 4 floats per access; the fp16 tiles of the mixed kernel: 4 halves (8 bytes)
        assert set(acc) <= {"v4.b32", "v4.b16", "b32"}
    assert MAX_VEC == 4


def test_kernels_with_a_dot_keep_four_element_chunks():
    from test_cuda_ptx import matmul_kernel
    assert kernel_max_vec(matmul_kernel(64, 64, 32, "fp16")) == MAX_VEC


@pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")
@pytest.mark.parametrize("arch", [80, 90])
def test_sixteen_byte_half_accesses_assemble(arch, tmp_path):
    import subprocess
    f = tmp_path / "k.ptx"
    f.write_text(_compile("fp16", arch=arch).asm["ptx"])
    r = subprocess.run([tgt.find_ptxas(), f"-arch=sm_{arch}", str(f), "-o", "/dev/null"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@tilejit.jit
def row_loop(X, DW, stride, n_rows, N, BLOCK: tl.constexpr):
    """Liger's norm-backward shape: 2-byte rows in a loop, fp32 partial sums stored after."""
    cols = tl.arange(0, BLOCK)
    m = cols < N
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        x = tl.load(X + row * stride + cols, mask=m, other=0.0).to(tl.float32)
        acc += x * tl.sum(x, axis=0)
        tl.store(X + row * stride + cols, x.to(X.dtype.element_ty), mask=m)
    tl.store(DW + tl.program_id(0) * N + cols, acc, mask=m)


def _loop_kernel(dtype):
    sig = {"X": f"*{dtype}", "DW": "*fp32", "stride": "i32", "n_rows": "i32", "N": "i32"}
    return tilejit.compile(row_loop, signature=sig, constexprs={"BLOCK": 4096},
                           divisible_by_16=tuple(sig), target="cuda:90", num_warps=8)


def _loop_body(ptx):
    """The PTX between the loop's first and last label (the loop's blocks)."""
    labels = [m.start() for m in re.finditer(r"^\$L__BB\d+_\d+:", ptx, re.M)]
    return ptx[labels[0]:labels[-1]]


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_row_loop_of_two_byte_rows_uses_16_byte_accesses(dtype):
    """The accesses a loop repeats decide the chunk width: 8 halves per chunk (the plan's
    widths: tests/golden/cuda_plan/row_loop_16_byte.py), each moved as one 16-byte
    access in the loop, the fp32 store after the loop as 16-byte accesses too."""
    k = _loop_kernel(dtype)
    assert kernel_max_vec(k.func) == 8
    ptx = k.asm["ptx"]
    body = _loop_body(ptx)
    assert "v4.b16" not in ptx and "v2.b16" not in ptx
    assert set(re.findall(r"[ls][dt]\.global[\w.]*", body)) == {"ld.global.v4.b32", "st.global.v4.b32"}
    assert set(re.findall(r"st\.global[\w.]*", ptx)) == {"st.global.v4.b32"}


def test_row_loop_of_fp32_rows_keeps_four_element_chunks():
    assert kernel_max_vec(_loop_kernel("fp32").func) == MAX_VEC
