"""What an LLVM target offers the shared lowering (``backends/llvm``): the differences
between the cpu (x86-64) and cuda (NVPTX) backends in the arithmetic, casts, types and
loops they share, as data rather than as two copies of the rules.

Each backend passes its :class:`Capabilities` to :mod:`.types`, :mod:`.scalar` and
:mod:`.casts`; everything not named here is lowered the same way on every target."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Capabilities:
    """One LLVM target's differences for the shared lowering.

    ``native_bf16``: bf16 values are LLVM ``bfloat`` in registers and arithmetic runs on
    them (NVPTX: ``add.bf16``, ``cvt.rn.bf16.f32``); without it they are their 16 bits
    (``i16``) and every operation computes in float32 and rounds back to nearest even.
    ``pointer_address_space``: the LLVM address space of a pointer value (NVPTX: 1, global).
    ``half_frem``: ``frem`` on fp16 values is legal; without it fp16 ``%`` computes in
    float32 (the result is the same: the fp32 remainder of two halves rounds exactly).
    ``exact_frem``: ``frem`` is exact (x86-64: libm ``fmod``); without it (NVPTX expands it
    as ``x - trunc(x/y)*y``, wrong for quotients past 2**24) float ``%`` calls the exact
    ``fmod`` of :mod:`.fmod`.
    """
    name: str
    native_bf16: bool = False
    pointer_address_space: int = 0
    half_frem: bool = True
    exact_frem: bool = True


CPU = Capabilities("cpu")
NVPTX = Capabilities("nvptx", native_bf16=True, pointer_address_space=1, half_frem=False,
                     exact_frem=False)
