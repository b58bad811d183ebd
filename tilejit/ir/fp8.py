"""8-bit float formats (``fp8e5`` = e5m2, ``fp8e4nv`` = e4m3fn, ``fp8e4b15`` = e4m3 with
bias 15, ``fp8e4b8`` = e4m3fnuz, ``fp8e5b16`` = e5m2fnuz): parameters and an exact numpy
codec shared by the interpreter and by constant folding in the backends.

Values are stored as uint8 bit patterns.  Conversions go through float32 (exact for
every fp8 value and for fp16/bf16 inputs, so one rounding happens):

* float32 -> fp8 rounds to nearest even and, like Triton's ``cvt.rn.satfinite``
  lowering on sm_90 (its test_typeconvert_downcast_clamping), saturates finite
  overflow and +-inf to the largest finite value: +-57344 (0x7B | sign) for e5m2,
  +-448 (0x7E | sign) for e4m3fn, which has no infinity.  NaN gives NaN (e5m2:
  0x7E | sign, e4m3fn: 0x7F | sign).  e4b15 is e4m3fn with bias 15 (max 1.75).
  The fnuz formats (e4b8, e5b16) have no infinity and no negative zero: every code
  but 0x80 (their one NaN) is finite; overflow, +-inf and NaN give 0x80 (as torch and
  LLVM's APFloat convert), and a result that rounds to zero is +0.
* fp8 -> float32 is exact.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Fp8Format:
    name: str
    ebits: int
    mbits: int
    bias: int
    ieee: bool          # True: inf/NaN at exponent all-ones (e5m2); False: e4m3fn
    max_code: int       # largest finite magnitude code (saturation target)
    nan_code: int       # quiet NaN code written for NaN inputs (without sign)
    fnuz: bool = False  # no -0: 0x80 is the only NaN, every other code finite

    @property
    def emin(self) -> int:
        return 1 - self.bias


E5M2 = Fp8Format("fp8e5", 5, 2, 15, True, 0x7B, 0x7E)      # 0x7C (+inf) is never produced
E4M3FN = Fp8Format("fp8e4nv", 4, 3, 7, False, 0x7E, 0x7F)
E4M3B15 = Fp8Format("fp8e4b15", 4, 3, 15, False, 0x7E, 0x7F)
E4M3FNUZ = Fp8Format("fp8e4b8", 4, 3, 8, False, 0x7F, 0x80, fnuz=True)
E5M2FNUZ = Fp8Format("fp8e5b16", 5, 2, 16, False, 0x7F, 0x80, fnuz=True)
FORMATS = {f.name: f for f in (E5M2, E4M3FN, E4M3B15, E4M3FNUZ, E5M2FNUZ)}


def fmt_of(dt):
    """The :class:`Fp8Format` of a dtype, or None when it is not an fp8 type."""
    return FORMATS.get(getattr(dt, "name", None))


_U32 = np.uint32


def f32_to_fp8(x, fmt: Fp8Format) -> np.ndarray:
    """float32 values -> fp8 bit patterns (uint8), round to nearest even (see module doc)."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.int64)
    sign = (u >> 31) << 7
    a = u & 0x7FFFFFFF
    e = (a >> 23) - 127
    drop = 23 - fmt.mbits
    lsb = (a >> drop) & 1
    normal = ((a + (1 << (drop - 1)) - 1 + lsb) >> drop) - ((127 - fmt.bias) << fmt.mbits)
    m = (a & 0x7FFFFF) | 0x800000
    s = np.minimum(drop + (fmt.emin - e), 40)
    s = np.maximum(s, 1)
    lsb_s = (m >> s) & 1
    sub = (m + (np.int64(1) << (s - 1)) - 1 + lsb_s) >> s
    r = np.where(e >= fmt.emin, normal, sub)
    if fmt.fnuz:                                    # overflow is NaN; no negative zero
        r = np.where(r > fmt.max_code, fmt.nan_code, r)
        sign = np.where(r == 0, 0, sign)
    else:
        r = np.minimum(r, fmt.max_code)
    r = np.where(a > 0x7F800000, fmt.nan_code, r)
    return (sign | r).astype(np.uint8)


def fp8_to_f32(bits, fmt: Fp8Format) -> np.ndarray:
    """fp8 bit patterns (uint8) -> float32 values (exact)."""
    b = np.asarray(bits).view(np.uint8).astype(np.int64)
    sign = np.where(b & 0x80, -1.0, 1.0)
    mag = b & 0x7F
    e = mag >> fmt.mbits
    m = mag & ((1 << fmt.mbits) - 1)
    val = np.where(e == 0, m.astype(np.float64),
                   (m + (1 << fmt.mbits)).astype(np.float64) * 2.0 ** (e - 1).astype(np.float64))
    val = val * 2.0 ** (fmt.emin - fmt.mbits)
    if fmt.ieee:
        top = (1 << fmt.ebits) - 1
        val = np.where((e == top) & (m == 0), np.inf, val)
        val = np.where((e == top) & (m != 0), np.nan, val)
    elif fmt.fnuz:
        val = np.where(b == 0x80, np.nan, val)
    else:
        val = np.where(mag == 0x7F, np.nan, val)
    return (sign * val).astype(np.float32)
