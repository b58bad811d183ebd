"""Builder: creates ops at an insertion point, inferring result types.

    b = Builder(func)
    x = b.create(ops.ArangeOp, start=0, end=16).result
    with b.at_end(block): ...
"""
from __future__ import annotations

from contextlib import contextmanager

from .core import Block, Function, Loc, Op, UNKNOWN_LOC, Value
from .types import TileType


class Builder:
    def __init__(self, func: Function | None = None):
        self.func = func
        self.block: Block | None = func.block if func is not None else None
        self.loc: Loc = UNKNOWN_LOC

    # ---- insertion point ------------------------------------------------
    @contextmanager
    def at_end(self, block: Block):
        saved = self.block
        self.block = block
        try:
            yield block
        finally:
            self.block = saved

    @contextmanager
    def location(self, loc: Loc):
        saved = self.loc
        self.loc = loc
        try:
            yield
        finally:
            self.loc = saved

    # ---- op creation ----------------------------------------------------
    def create(self, op_cls: type[Op], loc: Loc | None = None, regions=None,
               result_types=None, **kwargs) -> Op:
        """Create ``op_cls`` from keyword operands and attributes, append it at the
        insertion point, verify it, and return it."""
        slots, attrs = {}, {}
        if result_types is not None and "result_types" in op_cls.ATTRS:
            attrs["result_types"] = list(result_types)   # scf.if / scf.while declare it
            result_types = None
        slot_names = {n for n, _o, _v in op_cls.slot_names()}
        for key, val in kwargs.items():
            if key in slot_names:
                slots[key] = list(val) if isinstance(val, (list, tuple)) else val
            elif key in op_cls.ATTRS:
                attrs[key] = val
            else:
                raise TypeError(f"{op_cls.name}: unknown operand or attribute {key!r}")
        for name, optional, variadic in op_cls.slot_names():
            if name not in slots:
                if variadic:
                    slots[name] = []
                elif optional:
                    slots[name] = None
                else:
                    raise TypeError(f"{op_cls.name}: missing operand {name!r}")
        for name in op_cls.ATTRS:
            if name not in attrs and name not in op_cls.ATTR_DEFAULTS:
                raise TypeError(f"{op_cls.name}: missing attribute {name!r}")
        if result_types is None:
            result_types = op_cls.infer_types(slots, {**op_cls.ATTR_DEFAULTS, **attrs})
        op = op_cls(slots, attrs, result_types, loc or self.loc, regions)
        op.verify()
        if self.block is not None:
            self.block.append(op)
        return op

    def value(self, op_cls: type[Op], **kwargs) -> Value:
        """``create`` for single-result ops, returning the result value."""
        return self.create(op_cls, **kwargs).result

    def constant(self, value, type: TileType) -> Value:
        from .ops import ConstantOp
        return self.value(ConstantOp, value=value, type=type)
