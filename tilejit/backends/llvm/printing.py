"""The printf text of ``tt.print`` (``tl.device_print`` / ``print``), shared by the CPU
and CUDA backends: Triton's lines,

    pid (<x>, <y>, <z>) idx (<i>, <j>, ...)<prefix>(operand <n>) <value>

one line per element and operand (``(operand <n>) `` only with several operands; each
index as wide as its dimension's largest index; ``idx ()`` for a scalar; just
``pid (...)<prefix>`` without operands).  The prefix arrives as the language layer
shaped it (language/semantic_tile.device_print: Triton's " <prefix>: ")."""
from __future__ import annotations


def index_widths(shape) -> list:
    """printf field width of each dimension's index (digits of its largest index)."""
    return [len(str(max(int(d) - 1, 0))) for d in shape]


def value_spec(dt, hex: bool = False) -> str:
    """printf conversion of an element of ``dt`` widened as ``value_arg`` widens it (ints
    to 64 bits, floats to double): ``%lld`` / ``%llu`` / ``%f`` / ``0x%llx`` for a
    pointer; with ``hex``, an integer's bits as ``0x`` and bits/4 hex digits."""
    if dt.is_ptr():
        return "0x%llx"
    if dt.kind == "float":
        return "%f"
    if hex:
        return f"0x%0{max(dt.bits // 4, 1)}llx"
    return "%lld" if dt.kind == "int" else "%llu"


def line_format(prefix: str, shape, spec: str | None, operand: int | None = None) -> str:
    """One line's format: three ``%lld`` program ids, ``len(shape)`` ``%lld`` indices
    (``shape`` None: no operands, no ``idx``), then ``spec``.  A ``%`` of the prefix is
    printed as itself (``%%``: it was read as a conversion, and printf read an argument
    that was never passed)."""
    prefix = prefix.replace("%", "%%")
    text = "pid (%lld, %lld, %lld)"
    if shape is None:
        return text + prefix + "\n"
    text += " idx (" + ", ".join(f"%{w}lld" for w in index_widths(shape)) + ")" + prefix
    if operand is not None:
        text += f"(operand {operand}) "
    return text + spec + "\n"
