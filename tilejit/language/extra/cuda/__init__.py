"""``tl.extra.cuda``: CUDA's libdevice as far as tilejit implements it, and Triton's
special-register readers (inline PTX: the cuda backend runs them; the interpreter and
the CPU backend report inline assembly they cannot run)."""
from ...core import builtin, constexpr, current_builder
from ...inline_asm import inline_asm_elementwise
from ....ir.types import int32, int64
from . import libdevice


@builtin
def globaltimer():
    """The GPU's global nanosecond timer (PTX ``%globaltimer``) as an int64 scalar;
    not pure: each call reads it again."""
    return inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=int64, is_pure=False, pack=1)


@builtin
def smid():
    """The index of the streaming multiprocessor running this program (PTX ``%smid``),
    an int32 scalar."""
    return inline_asm_elementwise("mov.u32 $0, %smid;", "=r", [], dtype=int32, is_pure=True, pack=1)


@builtin
def num_warps():
    """The launch's ``num_warps`` (default 4) as a ``tl.constexpr``: part of the
    kernel's key, so each value compiles its own kernel.  On the CPU it sizes tiles
    only (a program is one thread)."""
    return constexpr(int(current_builder().func.attrs.get("num_warps", 4)))


@builtin
def num_threads():
    """``num_warps * 32`` as a ``tl.constexpr`` (Triton's threads per program)."""
    return constexpr(32 * int(current_builder().func.attrs.get("num_warps", 4)))


__all__ = ["libdevice", "globaltimer", "smid", "num_warps", "num_threads"]
