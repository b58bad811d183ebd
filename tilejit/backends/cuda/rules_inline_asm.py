"""``tt.elementwise_inline_asm`` on NVPTX: one LLVM inline-asm call per slot (pack=1)."""
from __future__ import annotations

from llvmlite import ir

from ...ir import ops
from . import types as T
from .lowering import RULES, Tile


@RULES.register(ops.InlineAsmOp)
def _inline_asm(lw, op):
    if op.pack != 1:
        raise NotImplementedError("inline_asm_elementwise with pack != 1")
    tiles = [lw.get(a) for a in op.args]
    rtys = [T.llvm_type(t.element) for t in op.result_types]
    ret = rtys[0] if len(rtys) == 1 else ir.LiteralStructType(rtys)
    lay = lw.layout(op.result_types[0])
    outs = [[] for _ in rtys]
    for s in range(lw.nslots(op.result_types[0])):
        regs = [t.regs[s] if t.layout is not None else t.regs[0] for t in tiles]
        fty = ir.FunctionType(ret, [r.type for r in regs])
        r = lw.b.asm(fty, op.asm, op.constraints, regs, not op.pure)
        for k in range(len(rtys)):
            outs[k].append(r if len(rtys) == 1 else lw.b.extract_value(r, k))
    return [Tile(o, lay) for o in outs]
