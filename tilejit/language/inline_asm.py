"""``tl.inline_asm_elementwise``: elementwise target assembly (PTX on the cuda backend)."""
from __future__ import annotations

from ..ir import ops
from ..ir.types import TileType
from . import core
from . import semantic as sem
from . import semantic_tile as st
from .core import builtin, tensor


@builtin
def inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack):
    """Run the assembly ``asm`` (``$0``.. are the results, then the arguments;
    ``constraints`` in LLVM's syntax, e.g. ``"=r,r"``) on each element of the
    broadcast ``args``; ``dtype`` is the result type (a tuple of types gives a tuple
    of results).  ``pack`` (a power of two) elements go to each run of ``asm``: an
    operand or result narrower than 32 bits then holds ``min(32 / bits, pack)``
    elements per register, a wider one takes ``pack`` registers (Triton's packing).
    The cuda backend runs it (PTX); the interpreter and the CPU backend cannot run PTX
    and report it."""
    if not isinstance(asm, str) or not isinstance(constraints, str):
        raise TypeError("inline_asm_elementwise needs asm and constraints strings")
    pack = core._unwrap(pack)
    if not isinstance(pack, int) or isinstance(pack, bool) or pack < 1 or pack & (pack - 1):
        raise ValueError(f"inline_asm_elementwise: pack must be a power of two (1, 2, 4, ...), got {pack!r}")
    args = [sem.to_tensor(a) for a in (args if isinstance(args, (list, tuple)) else [args])]
    shape = ()
    for a in args:
        shape = sem.broadcast_shapes(shape, a.shape)
    args = [st.broadcast_impl_shape(a, shape) for a in args]
    multi = isinstance(dtype, (tuple, list))
    dtypes = [core._as_dtype(d) for d in (dtype if multi else [dtype])]
    b = core.current_builder()
    op = b.create(ops.InlineAsmOp, args=[a.handle for a in args], asm=asm, constraints=constraints,
                  pure=bool(is_pure), pack=pack, result_types=[TileType(d, shape) for d in dtypes])
    outs = tuple(tensor(r) for r in op.results)
    return outs if multi else outs[0]


__all__ = ["inline_asm_elementwise"]
