"""The cuda backend compiles the language-breadth kernels (atomics, block pointers,
scans, user reductions) to PTX that ptxas assembles (sm_80, sm_90).  No GPU needed;
the GPU runs of the same kernels are the e2e tests' cuda backend."""
import re

import pytest

import tilejit
from tilejit.backends.cuda import target as tgt

from tests.e2e import test_atomics as A
from tests.e2e import test_block_pointers as B
from tests.e2e import test_scans as S
from tests.e2e import test_libdevice_more as L

needs_ptxas = pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")

CASES = {
    "histogram": (A.histogram_kernel, {0: "*i32", 1: "*i32", 2: "i32"}, {"BLOCK": 256}, r"atom(\.\w+)*\.global"),
    "rmw_max_i32": (A.rmw_kernel, {0: "*i32", 1: "*i32", 2: "*i32", 3: "i32"},
                    {"KIND": "max", "BLOCK": 64}, r"atom(\.\w+)*\.max\.s32"),
    "rmw_min_u32": (A.rmw_kernel, {0: "*u32", 1: "*u32", 2: "*u32", 3: "i32"},
                    {"KIND": "min", "BLOCK": 64}, r"atom(\.\w+)*\.min\.u32"),
    "rmw_xchg_i64": (A.rmw_kernel, {0: "*i64", 1: "*i64", 2: "*i64", 3: "i32"},
                     {"KIND": "xchg", "BLOCK": 64}, r"atom(\.\w+)*\.exch\.b64"),
    "rmw_add_f32": (A.rmw_kernel, {0: "*fp32", 1: "*fp32", 2: "*fp32", 3: "i32"},
                    {"KIND": "add", "BLOCK": 64}, r"atom(\.\w+)*\.add\.f32"),
    "rmw_max_f32": (A.rmw_kernel, {0: "*fp32", 1: "*fp32", 2: "*fp32", 3: "i32"},
                    {"KIND": "max", "BLOCK": 64}, r"atom(\.\w+)*\.max\.s32(.|\n)*atom(\.\w+)*\.min\.u32"),
    "fp16_add": (A.fp16_add_kernel, {0: "*fp16", 1: "*fp16"}, {"BLOCK": 16}, r"atom(\.\w+)*\.add(\.noftz)?\.f16"),
    "rowmax_scalar": (A.rowmax_kernel, {0: "*fp32", 1: "*fp32", 2: "i32"}, {"BLOCK": 128}, r"bar\.sync"),
    "cas": (A.cas_kernel, {0: "*i32", 1: "*i32", 2: "*i32", 3: "*i32"}, {"BLOCK": 32},
            r"atom(\.\w+)*\.cas\.b32"),
    "spin_lock": (A.locked_accumulate, {0: "*i32", 1: "*i32", 2: "*i32", 3: "*i32"}, {"BLOCK": 32},
                  r"atom(\.\w+)*\.exch\.b32"),
    "bp_matmul": (B.bp_matmul_kernel, {i: ("*fp32" if i < 3 else "i32") for i in range(12)},
                  {"BM": 16, "BN": 16, "BK": 16}, None),
    "bp_copy_nan": (B.copy_block_kernel, {i: ("*fp32" if i < 2 else "i32") for i in range(8)},
                    {"PAD": "nan", "BM": 16, "BN": 8}, None),
    "scan_affine": (S.scan_kernel, {0: "*i32", 1: "*i32", 2: "*i32"},
                    {"R": 4, "C": 16, "AXIS": 1, "REVERSE": True, "MODE": "affine"}, None),
    "cumprod": (S.float_scan_kernel, {0: "*fp32", 1: "*fp32"}, {"N": 64}, None),
    "user_reduce": (S.user_reduce_kernel, {0: "*fp32", 1: "*fp32", 2: "*i32", 3: "*fp32"},
                    {"R": 8, "C": 32}, None),
    "histogram_builtin": (S.histogram_builtin_kernel, {0: "*i32", 1: "*i32", 2: "i32"},
                          {"N": 128, "BINS": 16}, None),
    "gather": (S.gather_kernel, {0: "*fp32", 1: "*i32", 2: "*fp32"}, {"R": 4, "C": 16, "M": 8}, None),
    "libdevice_more": (L.fns_kernel, {0: "*fp32", 1: "*fp32", 2: "*fp32", 3: "*i32"}, {"N": 64}, None),
    "tensor_desc": (B.desc_kernel, {0: "*fp32", 1: "*fp32", 2: "i32", 3: "i32"}, {"BM": 16, "BN": 8}, None),
}


def register(name, kernel, signature, constexprs, pattern):
    """Other test modules add their kernels here."""
    CASES[name] = (kernel, signature, constexprs, pattern)


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("name", sorted(CASES))
def test_breadth_kernels_compile_and_assemble(name, arch):
    kernel, sig, cx, pattern = CASES[name]
    ker = tilejit.compile(kernel, signature=sig, constexprs=cx, target=f"cuda:{arch}")
    ptx = ker.asm["ptx"]
    assert re.search(r"\.entry\s+\w+", ptx)
    if pattern:
        assert re.search(pattern, ptx), ptx[-4000:]
    if tgt.find_ptxas():
        tgt.ptxas(ptx, arch)
