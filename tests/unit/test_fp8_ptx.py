"""The cuda backend lowers fp8 conversions (integer bit manipulation, no fp8 LLVM types)
and fp8 tile load/store to PTX that ptxas assembles (skipped where ptxas is absent).
The values themselves are checked in tests/e2e/test_fp8.py."""
import re

import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends.cuda import target as tgt

from tests.e2e import test_fp8 as F

needs_ptxas = pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")

CASES = {
    "to_fp8_fp32": (F.to_fp8_kernel, {0: "*fp32", 1: "*u8", 2: "i32"}, {"SRC": "fp32", "BLOCK": 128}),
    "to_fp8_fp16": (F.to_fp8_kernel, {0: "*fp16", 1: "*u8", 2: "i32"}, {"SRC": "fp16", "BLOCK": 128}),
    "to_fp8_bf16": (F.to_fp8_kernel, {0: "*i16", 1: "*u8", 2: "i32"}, {"SRC": "bf16", "BLOCK": 128}),
    "roundtrip": (F.roundtrip_kernel, {0: "*u8", 1: "*fp32", 2: "*i8", 3: "*u8", 4: "*u8"}, {"N": 256}),
    "copy": (F.copy_kernel, {0: "*u8", 1: "*u8", 2: "i32"}, {"BLOCK": 256}),
    "where": (F.select_kernel, {0: "*u8", 1: "*fp32", 2: "i32"}, {"N": 64, "CASE": "where"}),
    "other": (F.select_kernel, {0: "*u8", 1: "*fp32", 2: "i32"}, {"N": 64, "CASE": "other"}),
}


@needs_ptxas
@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("fmt", sorted(F.FORMATS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_fp8_kernels_assemble(name, fmt, arch):
    kernel, sig, cx = CASES[name]
    cx = dict(cx, DT=F.FORMATS[fmt][0])
    ker = tilejit.compile(kernel, signature=sig, constexprs=cx, target=f"cuda:{arch}")
    ptx = ker.asm["ptx"]
    assert re.search(r"\.entry\s+\w+", ptx)
    assert "cvt.rn.satfinite" not in ptx and ".e4m3" not in ptx     # integer lowering only
    tgt.ptxas(ptx, arch)


def test_fp8_constexpr_signature_names():
    from tilejit.ir.types import dtype_from_name, PointerType
    assert dtype_from_name("fp8e5") is tl.float8e5
    assert dtype_from_name("*fp8e4nv") == PointerType(tl.float8e4nv)
    assert tl.float8e5.to_numpy().itemsize == 1 and tl.float8e4nv.is_fp8()
