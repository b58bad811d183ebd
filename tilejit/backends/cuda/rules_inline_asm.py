"""``tt.elementwise_inline_asm`` on NVPTX: one LLVM inline-asm call per ``pack``
consecutive slots of a thread.  As in Triton, an operand or result narrower than 32
bits holds ``min(32 / bits, pack)`` elements per register (a vector, passed as one
integer of its width); wider ones take one register per element.  The registers of
the call are the results' (result by result), then the arguments' (argument by
argument).  A thread whose slot count is not a multiple of ``pack`` repeats its last
slot to fill the final call and drops the extra results."""
from __future__ import annotations

from llvmlite import ir

from ...ir import ops
from . import types as T
from .lowering import RULES, Tile


def _per_reg(el, pack: int) -> int:
    """Elements of type ``el`` held in one register of a ``pack``-element call."""
    bits = el.bits if (el.is_int() or el.is_floating()) else 64
    return min(32 // bits, pack) if bits < 32 else 1


def _pack(b, vals, n: int):
    """``vals`` grouped ``n`` to a register: each group a vector bitcast to one integer."""
    if n == 1:
        return list(vals)
    out = []
    for j in range(0, len(vals), n):
        vec = ir.Constant(ir.VectorType(vals[j].type, n), ir.Undefined)
        for k in range(n):
            vec = b.insert_element(vec, vals[j + k], ir.Constant(T.I32, k))
        out.append(b.bitcast(vec, ir.IntType(n * _bits(vals[j].type))))
    return out


def _bits(ty) -> int:
    if isinstance(ty, ir.IntType):
        return ty.width
    return {ir.HalfType: 16, ir.FloatType: 32, ir.DoubleType: 64}.get(type(ty), 16)


def _unpack(b, reg, ety, n: int):
    """The ``n`` elements of type ``ety`` of one result register."""
    if n == 1:
        return [reg]
    vec = b.bitcast(reg, ir.VectorType(ety, n))
    return [b.extract_element(vec, ir.Constant(T.I32, k)) for k in range(n)]


@RULES.register(ops.InlineAsmOp)
def _inline_asm(lw, op):
    pack = int(op.pack)
    tiles = [lw.get(a) for a in op.args]
    rels = [t.element for t in op.result_types]
    rtys = [T.llvm_type(e) for e in rels]
    rper = [_per_reg(e, pack) for e in rels]
    aper = [_per_reg(a.type.element, pack) for a in op.args]
    reg_tys = [ir.IntType(n * _bits(t)) if n > 1 else t
               for t, n in zip(rtys, rper) for _ in range(pack // n)]
    ret = reg_tys[0] if len(reg_tys) == 1 else ir.LiteralStructType(reg_tys)
    lay = lw.layout(op.result_types[0])
    nslots = lw.nslots(op.result_types[0])
    outs = [[] for _ in rtys]
    for s0 in range(0, nslots, pack):
        slots = [min(s, nslots - 1) for s in range(s0, s0 + pack)]
        regs = []
        for t, n in zip(tiles, aper):
            regs += _pack(lw.b, [t.regs[s] if t.layout is not None else t.regs[0] for s in slots], n)
        fty = ir.FunctionType(ret, [r.type for r in regs])
        r = lw.b.asm(fty, op.asm, op.constraints, regs, not op.pure)
        got = [r] if len(reg_tys) == 1 else [lw.b.extract_value(r, i) for i in range(len(reg_tys))]
        at = 0
        for k, (ety, n) in enumerate(zip(rtys, rper)):
            vals = []
            for reg in got[at:at + pack // n]:
                vals += _unpack(lw.b, reg, ety, n)
            at += pack // n
            outs[k] += vals[:nslots - s0]
    return [Tile(o, lay) for o in outs]
