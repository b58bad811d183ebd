"""Scattered stores go through shared memory to the one-element-per-thread layout
(backends/cuda/scatter.py); contiguous ones stay vector stores with no detour.
Results of these kernels on the GPU: tests/e2e (#741 bit-exact under the cuda backend)."""
import re

import pytest

pytest.importorskip("llvmlite")
from test_cuda_ptx import compile_cuda, copy_kernel, k741  # noqa: E402


def test_741_store_is_relaid_out_through_shared_memory():
    func = k741(1024, reassign=False)
    func.arguments[3].divisibility = 16     # xnumel % 16 == 0, as the runtime specialises it
    ptx = compile_cuda(func).asm["ptx"]
    body = ptx[ptx.index("ld.global"):]
    first_store = body.index("st.global")
    assert "st.shared" in body[:first_store] and "ld.shared" in body[:first_store]
    assert "bar.sync" in body[:first_store]
    assert re.search(r"ld\.global(\.\w+)*\.v[24]\.", ptx)          # loads keep their vectors
    assert not re.search(r"st\.global(\.\w+)*\.v[24]", ptx)


def test_contiguous_store_has_no_shared_memory_detour():
    ptx = compile_cuda(copy_kernel()).asm["ptx"]
    assert "st.shared" not in ptx and "bar.sync" not in ptx
