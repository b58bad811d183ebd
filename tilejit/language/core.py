"""Core objects of the language: ``constexpr``, ``tensor``, dtypes, the builder context.

Kernels see these through ``tilejit.language`` (``tl``).  A ``tensor`` wraps one IR
value; its operators call ``semantic``.  Builtins are plain functions marked with
:func:`builtin`; the frontend calls them directly and they emit IR through the
builder installed with :func:`building`.
"""
from __future__ import annotations

import functools
import threading
from contextlib import contextmanager

from ..ir.types import (DType, PointerType, TileType, int1, int8, int16, int32, int64, uint8, uint16,
                        uint32, uint64, float16, bfloat16, float32, float64, ALL_DTYPES,
                        float8e5, float8e4nv, float8e4b15, float8e4b8, float8e5b16)

dtype = DType
block_type = TileType
void = None

# ---------------------------------------------------------------------------
# builder context
# ---------------------------------------------------------------------------

_state = threading.local()


def current_builder():
    """The IR builder of the kernel being compiled (raises outside a kernel)."""
    stack = getattr(_state, "builders", None)
    if not stack:
        raise RuntimeError("tilejit.language functions can only be called inside a @tilejit.jit kernel")
    return stack[-1]


@contextmanager
def building(builder):
    """Install ``builder`` as the current builder for language builtins."""
    stack = getattr(_state, "builders", None)
    if stack is None:
        stack = _state.builders = []
    stack.append(builder)
    try:
        yield builder
    finally:
        stack.pop()


# ---------------------------------------------------------------------------
# constexpr
# ---------------------------------------------------------------------------


class constexpr:  # noqa: N801  (Triton's name)
    """A compile-time value.  As an annotation (``BLOCK: tl.constexpr``) it marks a
    kernel parameter whose value is part of the specialization; called, it wraps a
    Python value.  Arithmetic on constexprs folds at compile time."""

    def __init__(self, value):
        self.value = value.value if isinstance(value, constexpr) else value

    def __repr__(self):
        return f"constexpr[{self.value!r}]"

    def __index__(self):
        return self.value.__index__()

    def __bool__(self):
        return bool(self.value)

    def __hash__(self):
        return hash(self.value)

    def __call__(self, *args, **kwargs):
        return self.value(*args, **kwargs)

    def __getattr__(self, name):
        if name == "value":
            raise AttributeError(name)
        return getattr(self.value, name)


def _cx_binop(op, reverse=False):
    import operator
    fn = getattr(operator, op)

    def method(self, other):
        if isinstance(other, tensor):
            return NotImplemented
        a, b = self.value, _unwrap(other)
        return constexpr(fn(b, a) if reverse else fn(a, b))
    return method


for _op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and_", "or_", "xor",
            "lshift", "rshift"):
    _name = _op.rstrip("_")
    setattr(constexpr, f"__{_name}__", _cx_binop(_op))
    setattr(constexpr, f"__r{_name}__", _cx_binop(_op, reverse=True))
for _op in ("eq", "ne", "lt", "le", "gt", "ge"):
    setattr(constexpr, f"__{_op}__", _cx_binop(_op))
constexpr.__neg__ = lambda self: constexpr(-self.value)
constexpr.__pos__ = lambda self: constexpr(+self.value)
constexpr.__invert__ = lambda self: constexpr(~self.value)


class typed_int(int):  # noqa: N801
    """A Python int bound to a name in a kernel (``n = 5``).  Triton makes such a name a
    scalar tensor (int32, or int64/uint32/uint64 when it does not fit), so in arithmetic
    with a tensor it keeps that dtype instead of taking the tensor's (``x_int8 * n`` is
    int32, as in Triton); everywhere else it is the int (it folds, sizes tiles)."""
    __slots__ = ()


class typed_float(float):  # noqa: N801
    """A Python float bound to a name in a kernel (``scale = 0.5``): fp32 (fp64 past
    fp32's range) in arithmetic with a tensor, as Triton's scalar tensor is."""
    __slots__ = ()


class constexpr_type:  # noqa: N801  (Triton's name)
    """The type of a compile-time value (``N.type`` of a ``tl.constexpr`` parameter):
    equal to another ``constexpr_type`` of an equal value."""

    def __init__(self, value):
        self.value = _unwrap(value)

    def __eq__(self, other):
        return isinstance(other, constexpr_type) and self.value == other.value

    def __hash__(self):
        return hash(("constexpr_type", self.value))

    def __repr__(self):
        return f"constexpr_type[{self.value!r}]"


def typed_literal(value):
    """``value`` as bound by an assignment: plain ints and floats become typed literals."""
    if type(value) is int:
        return typed_int(value)
    if type(value) is float:
        return typed_float(value)
    return value


def _unwrap(x):
    """The Python value inside a constexpr (anything else unchanged)."""
    return x.value if isinstance(x, constexpr) else x


def _unwrap_deep(x):
    x = _unwrap(x)
    if isinstance(x, tuple):
        return tuple(_unwrap_deep(v) for v in x)
    if isinstance(x, list):
        return [_unwrap_deep(v) for v in x]
    return x


def is_builtin(fn) -> bool:
    """True for language builtins (called directly by the frontend)."""
    return getattr(fn, "__tilejit_builtin__", False)


def builtin(fn):
    """Mark ``fn`` as a language builtin; constexpr arguments are unwrapped."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        args = [_unwrap_deep(a) for a in args]
        kwargs = {k: _unwrap_deep(v) for k, v in kwargs.items()}
        return fn(*args, **kwargs)
    wrapper.__tilejit_builtin__ = True
    return wrapper


class const:  # noqa: N801  (Triton's name)
    """Annotation of a pointer parameter whose data the kernel only reads
    (``def k(in_ptr: tl.const, out_ptr)``): the pointer's type is const, a store or
    atomic through it is a compilation error, and it does not merge with a non-const
    pointer (an ``if`` assigning either to one name is a type mismatch)."""


class PropagateNan:
    """NaN propagation of ``tl.minimum``/``tl.maximum``: NONE returns the non-NaN
    operand, ALL returns NaN when either operand is NaN."""
    NONE = 0
    ALL = 0xFFFF


pointer_type = PointerType      # tl.pointer_type(tl.float32); isinstance(x.dtype, tl.pointer_type)
pi32_t = PointerType(int32)     # Triton's name for a pointer to int32 (``x.to(tl.pi32_t)``)


def str_to_ty(name, c=None):
    """The type a Triton signature string names (Triton's ``tl.str_to_ty``): ``'fp32'``,
    ``'i32'``, ``'u1'`` (bool), ``'*fp16'`` (pointer), ``'*kfp16'`` (pointer to const
    data: tilejit's pointers carry no const qualifier)."""
    if name.startswith("*"):
        rest = name[1:]
        if rest.startswith("k"):
            rest = rest[1:]
        return pointer_type(str_to_ty(rest, c))
    if name == "constexpr":
        raise TypeError("tl.str_to_ty('constexpr'): tilejit has no constexpr type object; "
                        "pass the value itself")
    from ..ir.types import dtype_from_name
    return dtype_from_name({"u1": "i1", "B": "i1"}.get(name, name))


# ---------------------------------------------------------------------------
# tensor
# ---------------------------------------------------------------------------


_SEMANTIC = None


def _sem():
    global _SEMANTIC
    if _SEMANTIC is None:
        from . import semantic
        _SEMANTIC = semantic
    return _SEMANTIC


def _binop(name, reverse=False):
    def method(self, other):
        other = _unwrap(other)
        fn = getattr(_sem(), name)
        return fn(other, self) if reverse else fn(self, other)
    method.__name__ = name
    return method


def _cmp(pred, swapped):
    def method(self, other):
        return _sem().compare(self, _unwrap(other), pred)
    return method


class tensor:  # noqa: N801  (Triton's name)
    """A value of the kernel: a scalar or a tile (an IR value with a TileType).

    Attributes: ``dtype`` (element type), ``shape`` (tuple of ints), ``type``
    (the TileType), ``numel``, ``T`` (transpose of a 2-d tile).
    """

    def __init__(self, handle, type=None):
        self.handle = handle
        self.type = handle.type if type is None else type

    @property
    def dtype(self):
        return self.type.element

    @property
    def shape(self):
        return tuple(self.type.shape)

    @property
    def numel(self):
        return self.type.numel

    @property
    def ndim(self):
        return len(self.type.shape)

    rank = ndim

    @property
    def T(self):  # noqa: N802
        from . import standard
        return standard.trans(self)

    def __repr__(self):
        return f"tensor({self.type})"

    def __str__(self):
        """Triton's text (``tl.static_print(x)``): ``fp32[constexpr[16], constexpr[32]]``."""
        return f"{self.dtype}[{', '.join(str(constexpr(d)) for d in self.shape)}]"

    __hash__ = object.__hash__

    def __bool__(self):
        raise TypeError("a tensor's truth value is not known at compile time; "
                        "use it in an `if` on a scalar, or use tl.where")

    def __index__(self):
        raise TypeError("a tensor cannot be used where a compile-time int is required "
                        "(declare it tl.constexpr)")

    __add__ = _binop("add")
    __radd__ = _binop("add", True)
    __sub__ = _binop("sub")
    __rsub__ = _binop("sub", True)
    __mul__ = _binop("mul")
    __rmul__ = _binop("mul", True)
    __truediv__ = _binop("truediv")
    __rtruediv__ = _binop("truediv", True)
    __floordiv__ = _binop("floordiv")
    __rfloordiv__ = _binop("floordiv", True)
    __mod__ = _binop("mod")
    __rmod__ = _binop("mod", True)
    __and__ = _binop("and_")
    __rand__ = _binop("and_", True)
    __or__ = _binop("or_")
    __ror__ = _binop("or_", True)
    __xor__ = _binop("xor_")
    __rxor__ = _binop("xor_", True)
    __lshift__ = _binop("shl")
    __rlshift__ = _binop("shl", True)
    def __rshift__(self, other):     # Triton: arithmetic iff this operand is signed
        return _sem().shr(self, _unwrap(other), arithmetic=self.dtype.is_int_signed())

    def __rrshift__(self, other):
        return _sem().shr(_unwrap(other), self, arithmetic=self.dtype.is_int_signed())

    def __pow__(self, other):
        raise TypeError("** is only supported on tl.constexpr values; use tl.math functions for tensors")

    __rpow__ = __pow__

    def __matmul__(self, other):
        raise TypeError("@ is not supported on tensors; use tl.dot(a, b)")

    __rmatmul__ = __matmul__

    def __neg__(self):
        return _sem().minus(self)

    def __pos__(self):
        return _sem().plus(self)

    def __invert__(self):
        return _sem().invert(self)

    __lt__ = _cmp("lt", "gt")
    __le__ = _cmp("le", "ge")
    __gt__ = _cmp("gt", "lt")
    __ge__ = _cmp("ge", "le")
    __eq__ = _cmp("eq", "eq")
    __ne__ = _cmp("ne", "ne")

    def __getitem__(self, slices):
        from . import semantic_tile
        return semantic_tile.getitem(self, _unwrap_deep(slices))

    def logical_and(self, other):
        return _sem().logical_and(self, _unwrap(other))

    def logical_or(self, other):
        return _sem().logical_or(self, _unwrap(other))

    def __not__(self):
        return _sem().not_(self)

    def to(self, dtype, fp_downcast_rounding=None, bitcast=False):
        """Convert to ``dtype`` (value conversion, or reinterpretation with ``bitcast=True``)."""
        dtype, bitcast = _as_dtype(dtype), _unwrap(bitcast)
        if bitcast:
            return _sem().bitcast(self, dtype)
        return _sem().cast(self, dtype, _unwrap(fp_downcast_rounding))


for _m in ("to", "logical_and", "logical_or"):
    getattr(tensor, _m).__tilejit_builtin__ = True


class TypeView:
    """What ``x.type`` shows to kernel code: Triton's view of a tensor's type.  For a
    scalar it acts as the dtype itself (``ptr.type.element_ty`` is the pointee); for a
    tile, ``element_ty``/``scalar`` is the element type."""

    def __init__(self, tile_type):
        self.tile_type = tile_type

    @property
    def element_ty(self):
        t = self.tile_type
        if not t.shape and t.element.is_ptr():
            return t.element.element
        return t.element

    @property
    def scalar(self):
        return self.tile_type.element

    @property
    def shape(self):
        return tuple(self.tile_type.shape)

    @property
    def numel(self):
        return self.tile_type.numel

    def is_block(self):
        return bool(self.tile_type.shape)

    def get_block_shapes(self):
        return tuple(self.tile_type.shape)

    def is_ptr(self):
        return not self.tile_type.shape and self.tile_type.element.is_ptr()

    def __eq__(self, other):
        if isinstance(other, TypeView):
            other = other.tile_type
        if isinstance(other, TileType):
            return other == self.tile_type
        if isinstance(other, (DType, PointerType)):
            return not self.tile_type.shape and self.tile_type.element == other
        return NotImplemented

    def __hash__(self):
        return hash(self.tile_type)

    def __getattr__(self, name):
        return getattr(self.tile_type.element, name)

    def __repr__(self):
        return repr(self.tile_type)


def _as_dtype(x):
    """A dtype argument: ``TypeView`` (``y.type``) gives its element type."""
    x = _unwrap(x)
    return x.scalar if isinstance(x, TypeView) else x


@builtin
def get_int_dtype(bitwidth, signed):
    """The integer dtype of ``bitwidth`` bits (1, 8, 16, 32, 64), signed or not
    (``tl.core.get_int_dtype``; bitwidth 1 is int1)."""
    table = {(1, True): int1, (1, False): int1, (8, True): int8, (16, True): int16,
             (32, True): int32, (64, True): int64, (8, False): uint8, (16, False): uint16,
             (32, False): uint32, (64, False): uint64}
    got = table.get((int(bitwidth), bool(signed)))
    if got is None:
        raise ValueError(f"no integer dtype of {bitwidth} bits")
    return got


def tensor_member(fn):
    """Also expose builtin ``fn`` as a tensor method (``x.sum(0)``)."""
    setattr(tensor, fn.__name__, fn)
    return fn


__all__ = ["constexpr", "tensor", "dtype", "pointer_type", "pi32_t", "block_type", "builtin", "is_builtin",
           "current_builder", "building", "PropagateNan", "int1", "int8", "int16", "int32", "int64", "uint8", "uint16",
           "uint32", "uint64", "float16", "bfloat16", "float32", "float64", "float8e5", "float8e4nv",
           "float8e4b15", "float8e4b8", "float8e5b16", "ALL_DTYPES", "void"]
