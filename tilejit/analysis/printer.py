"""Print a function with each value's range and axis info as a comment.

    print_analysis(func, grid=None) ->
      %xindex = arith.add %3, %4 : <1024xi32>  // range=[0, 2047] contig=[1024] div=[1024] const=[1]

Divisibilities of 2**16 and more print as ``2^k`` (``2^32`` on an i32 means the
value is 0 modulo 2**32, i.e. 0).
"""
from __future__ import annotations

from ..ir.core import Function, Value
from . import Facts, analyze


def _div(v: int) -> str:
    return f"2^{v.bit_length() - 1}" if v >= 1 << 16 else str(v)


def format_fact(facts: Facts, v: Value) -> str:
    f = facts.fact(v)
    a = f.axis
    parts = []
    if f.range is not None:
        parts.append(f"range=[{f.range[0]}, {f.range[1]}]")
    parts.append("contig=[" + ", ".join(map(str, a.contiguity)) + "]")
    parts.append("div=[" + ", ".join(map(_div, a.divisibility)) + "]")
    parts.append("const=[" + ", ".join(map(str, a.constancy)) + "]")
    return " ".join(parts)


def annotator(facts: Facts):
    """An ``annotate`` callback for ``tilejit.ir.printer.print_function``."""
    return lambda v: format_fact(facts, v)


def print_analysis(func: Function, grid=None, locs: bool = False, facts: Facts | None = None) -> str:
    from ..ir.printer import print_function
    facts = facts if facts is not None else analyze(func, grid)
    return print_function(func, locs=locs, annotate=annotator(facts))
