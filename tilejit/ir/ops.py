"""Every op of the tile IR, declared once.

Semantics (shared by the interpreter, the analyses and every backend):

* Elementwise ops take operands of *identical* type (the language's semantic layer
  inserts casts, splats and broadcasts first) and work on scalars (shape ``()``)
  and tiles alike.  Integer signedness comes from the dtype (``uint*`` unsigned).
* Integer arithmetic wraps modulo 2**bits.  ``arith.idiv`` and ``arith.rem`` on
  integers truncate toward zero (C semantics); division by zero is undefined.
  ``arith.rem`` on floats is C ``fmod``.  ``arith.shr`` is arithmetic for signed
  and logical for unsigned types; shift amounts >= bits are undefined.
* ``tt.addptr`` offsets count elements, not bytes.
* ``tt.load``: masked-off lanes read nothing and yield ``other`` (0 when absent).
  ``tt.store``: masked-off lanes write nothing.
* ``tt.reduce`` kinds: sum, max, min, argmax, argmin, xor_sum; arg* give int32
  indices of the first extreme element.
"""
from __future__ import annotations

from .core import Op
from .types import PointerType, TileType, int1, int32, DType


def _same_type(*names):
    def verify(self):
        ts = [self.slots[n].type for n in names]
        if any(t != ts[0] for t in ts):
            raise ValueError(f"{self.name}: operand types differ: {', '.join(map(str, ts))}")
    return verify


# --------------------------------------------------------------------------
# constants, ids, shapes
# --------------------------------------------------------------------------
class ConstantOp(Op):
    """A compile-time constant, splatted when ``type`` has a shape."""
    name = "arith.constant"
    ATTRS = ("value", "type")
    TRAITS = frozenset({"pure", "constant"})

    @classmethod
    def infer_types(cls, operands, attrs):
        return [attrs["type"]]


class ProgramIdOp(Op):
    name = "tt.get_program_id"
    ATTRS = ("axis",)
    TRAITS = frozenset({"pure"})

    @classmethod
    def infer_types(cls, operands, attrs):
        return [TileType(int32)]


class NumProgramsOp(Op):
    name = "tt.get_num_programs"
    ATTRS = ("axis",)
    TRAITS = frozenset({"pure"})

    @classmethod
    def infer_types(cls, operands, attrs):
        return [TileType(int32)]


class ArangeOp(Op):
    """int32 tile ``[start, start+1, ..., end-1]``."""
    name = "tt.make_range"
    ATTRS = ("start", "end")
    TRAITS = frozenset({"pure"})

    @classmethod
    def infer_types(cls, operands, attrs):
        return [TileType(int32, (attrs["end"] - attrs["start"],))]


class SplatOp(Op):
    """Scalar to a tile of ``shape`` filled with it."""
    name = "tt.splat"
    OPERANDS = ("src",)
    ATTRS = ("shape",)
    TRAITS = frozenset({"pure"})

    @classmethod
    def infer_types(cls, operands, attrs):
        return [operands["src"].type.with_shape(attrs["shape"])]

    def verify(self):
        if not self.src.type.is_scalar:
            raise ValueError("tt.splat operand must be a scalar")


class BroadcastOp(Op):
    """Same rank; dimensions of size 1 are repeated to ``shape``."""
    name = "tt.broadcast"
    OPERANDS = ("src",)
    ATTRS = ("shape",)
    TRAITS = frozenset({"pure"})

    @classmethod
    def infer_types(cls, operands, attrs):
        return [operands["src"].type.with_shape(attrs["shape"])]

    def verify(self):
        src = self.src.type.shape
        if len(src) != len(self.shape) or any(a != b and a != 1 for a, b in zip(src, self.shape)):
            raise ValueError(f"cannot broadcast {src} to {self.shape}")


class ExpandDimsOp(Op):
    """Insert a dimension of size 1 at ``axis``."""
    name = "tt.expand_dims"
    OPERANDS = ("src",)
    ATTRS = ("axis",)
    TRAITS = frozenset({"pure"})

    @classmethod
    def infer_types(cls, operands, attrs):
        shape = list(operands["src"].type.shape)
        shape.insert(attrs["axis"], 1)
        return [operands["src"].type.with_shape(shape)]


class ReshapeOp(Op):
    """Row-major reshape to ``shape`` (same number of elements)."""
    name = "tt.reshape"
    OPERANDS = ("src",)
    ATTRS = ("shape",)
    TRAITS = frozenset({"pure"})

    @classmethod
    def infer_types(cls, operands, attrs):
        return [operands["src"].type.with_shape(attrs["shape"])]

    def verify(self):
        if TileType(int32, tuple(self.shape)).numel != self.src.type.numel:
            raise ValueError(f"cannot reshape {self.src.type.shape} to {self.shape}")


class TransOp(Op):
    """Permute dimensions: result dim i is source dim ``perm[i]``."""
    name = "tt.trans"
    OPERANDS = ("src",)
    ATTRS = ("perm",)
    TRAITS = frozenset({"pure"})

    @classmethod
    def infer_types(cls, operands, attrs):
        shape = operands["src"].type.shape
        return [operands["src"].type.with_shape([shape[p] for p in attrs["perm"]])]


# --------------------------------------------------------------------------
# elementwise
# --------------------------------------------------------------------------
class ElementwiseOp(Op):
    TRAITS = frozenset({"pure", "elementwise"})


class BinaryOp(ElementwiseOp):
    """``lhs op rhs`` on operands of one type; the result has that type."""
    OPERANDS = ("lhs", "rhs")
    KINDS = ("int", "uint", "float", "bool")   # element kinds accepted

    @classmethod
    def infer_types(cls, operands, attrs):
        return [operands["lhs"].type]

    def verify(self):
        _same_type("lhs", "rhs")(self)
        el = self.lhs.type.element
        if el.kind not in self.KINDS:
            raise ValueError(f"{self.name} does not accept {el}")


def _binary(class_name, op_name, kinds=("int", "uint", "float", "bool"), doc="", **extra):
    cls = type(class_name, (BinaryOp,), {"name": op_name, "KINDS": kinds, "__doc__": doc, **extra})
    return cls


_INT = ("int", "uint", "bool")
# ``rn``: a float operation rounded on its own (libdevice ``add_rn``/``sub_rn``/``mul_rn``),
# never contracted with a neighbour into one fma where the kernel's enable_fp_fusion
# allows that for the others (docs/differences.md); the value is the same either way.
_RN = {"ATTRS": ("rn",), "ATTR_DEFAULTS": {"rn": False}}
AddOp = _binary("AddOp", "arith.add", ("int", "uint", "float"), **_RN)
SubOp = _binary("SubOp", "arith.sub", ("int", "uint", "float"), **_RN)
MulOp = _binary("MulOp", "arith.mul", ("int", "uint", "float"), **_RN)
TrueDivOp = _binary("TrueDivOp", "arith.truediv", ("float",), "Floating-point division.")
IDivOp = _binary("IDivOp", "arith.idiv", ("int", "uint"), "Integer division truncating toward zero.")
RemOp = _binary("RemOp", "arith.rem", ("int", "uint", "float"),
                "Remainder with the sign of the dividend (C semantics; fmod for floats).")
AndOp = _binary("AndOp", "arith.and", _INT)
OrOp = _binary("OrOp", "arith.or", _INT)
XorOp = _binary("XorOp", "arith.xor", _INT)
ShlOp = _binary("ShlOp", "arith.shl", ("int", "uint"))
ShrOp = _binary("ShrOp", "arith.shr", ("int", "uint"),
                "Shift right: arithmetic for signed, logical for unsigned types.")
MinOp = _binary("MinOp", "arith.min", ("int", "uint", "float"),
                "Minimum; for floats a NaN operand yields the other operand (fmin).")
MaxOp = _binary("MaxOp", "arith.max", ("int", "uint", "float"),
                "Maximum; for floats a NaN operand yields the other operand (fmax).")
UmulhiOp = _binary("UmulhiOp", "arith.umulhi", ("int", "uint"),
                   "High half of the full-width unsigned product.")

BINARY_OPS = (AddOp, SubOp, MulOp, TrueDivOp, IDivOp, RemOp, AndOp, OrOp, XorOp,
              ShlOp, ShrOp, MinOp, MaxOp, UmulhiOp)

CMP_PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")


class CmpOp(ElementwiseOp):
    """Comparison ``lhs pred rhs`` -> int1 (signedness/ordering from the dtype;
    float comparisons are ordered except ``ne``, which is unordered as in C)."""
    name = "arith.cmp"
    OPERANDS = ("lhs", "rhs")
    ATTRS = ("pred",)

    @classmethod
    def infer_types(cls, operands, attrs):
        return [operands["lhs"].type.with_element(int1)]

    def verify(self):
        _same_type("lhs", "rhs")(self)
        if self.pred not in CMP_PREDICATES:
            raise ValueError(f"unknown predicate {self.pred}")


class UnaryOp(ElementwiseOp):
    OPERANDS = ("src",)
    KINDS = ("int", "uint", "float", "bool")

    @classmethod
    def infer_types(cls, operands, attrs):
        return [operands["src"].type]

    def verify(self):
        el = self.src.type.element
        if el.kind not in self.KINDS:
            raise ValueError(f"{self.name} does not accept {el}")


def _unary(class_name, op_name, kinds, doc=""):
    return type(class_name, (UnaryOp,), {"name": op_name, "KINDS": kinds, "__doc__": doc})


NegOp = _unary("NegOp", "arith.neg", ("int", "uint", "float"))
InvertOp = _unary("InvertOp", "arith.not", _INT, "Bitwise not.")
AbsOp = _unary("AbsOp", "arith.abs", ("int", "uint", "float"))

MATH_FUNCTIONS = ("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos",
                  "floor", "ceil", "erf", "tanh")
MATH_OPS = {fn: _unary(f"Math{fn.capitalize()}Op", f"math.{fn}", ("float",))
            for fn in MATH_FUNCTIONS}
globals().update({cls.__name__: cls for cls in MATH_OPS.values()})


class FmaOp(ElementwiseOp):
    """``a * b + c`` with a single rounding."""
    name = "math.fma"
    OPERANDS = ("a", "b", "c")

    @classmethod
    def infer_types(cls, operands, attrs):
        return [operands["a"].type]

    verify = _same_type("a", "b", "c")


class CastOp(ElementwiseOp):
    """Value conversion to element type ``to``: int<->int (sign- or zero-extend by
    the source's signedness, truncate), int<->float (float->int truncates toward
    zero), float<->float (round to nearest even), x->int1 is ``x != 0``,
    pointer<->int64 and pointer->pointer keep the address."""
    name = "tt.cast"
    OPERANDS = ("src",)
    ATTRS = ("to",)

    @classmethod
    def infer_types(cls, operands, attrs):
        return [operands["src"].type.with_element(attrs["to"])]


class BitcastOp(ElementwiseOp):
    """Reinterpret the bits as element type ``to`` (same bit width)."""
    name = "tt.bitcast"
    OPERANDS = ("src",)
    ATTRS = ("to",)

    @classmethod
    def infer_types(cls, operands, attrs):
        return [operands["src"].type.with_element(attrs["to"])]

    def verify(self):
        if self.src.type.element.bits != self.to.bits:
            raise ValueError(f"bitcast between types of different widths: {self.src.type.element} -> {self.to}")


class SelectOp(ElementwiseOp):
    """``cond ? true_value : false_value``; cond is int1 of the same shape."""
    name = "arith.select"
    OPERANDS = ("cond", "true_value", "false_value")

    @classmethod
    def infer_types(cls, operands, attrs):
        return [operands["true_value"].type]

    def verify(self):
        _same_type("true_value", "false_value")(self)
        if self.cond.type.element != int1 or self.cond.type.shape != self.true_value.type.shape:
            raise ValueError("select condition must be int1 of the result's shape")


class AddPtrOp(ElementwiseOp):
    """``ptr + offset`` where offset counts elements of the pointee type."""
    name = "tt.addptr"
    OPERANDS = ("ptr", "offset")

    @classmethod
    def infer_types(cls, operands, attrs):
        return [operands["ptr"].type]

    def verify(self):
        if not isinstance(self.ptr.type.element, PointerType):
            raise ValueError("tt.addptr needs a pointer")
        if self.offset.type.shape != self.ptr.type.shape or not self.offset.type.element.is_int():
            raise ValueError("tt.addptr offset must be an integer of the pointer's shape")


# --------------------------------------------------------------------------
# memory
# --------------------------------------------------------------------------
class LoadOp(Op):
    """Load through ``ptr`` where ``mask`` holds; elsewhere ``other`` (or 0)."""
    name = "tt.load"
    OPERANDS = ("ptr", "mask?", "other?")
    ATTRS = ("cache", "eviction", "volatile")
    ATTR_DEFAULTS = {"cache": "", "eviction": "", "volatile": False}
    TRAITS = frozenset({"reads_memory"})

    @classmethod
    def infer_types(cls, operands, attrs):
        pt = operands["ptr"].type
        return [pt.with_element(pt.element.element)]


class StoreOp(Op):
    """Store ``value`` through ``ptr`` where ``mask`` holds."""
    name = "tt.store"
    OPERANDS = ("ptr", "value", "mask?")
    ATTRS = ("cache", "eviction")
    ATTR_DEFAULTS = {"cache": "", "eviction": ""}
    TRAITS = frozenset({"writes_memory"})


# --------------------------------------------------------------------------
# atomics
# --------------------------------------------------------------------------
ATOMIC_RMW_KINDS = ("add", "max", "min", "and", "or", "xor", "xchg")
ATOMIC_SEMS = ("relaxed", "acquire", "release", "acq_rel")
ATOMIC_SCOPES = ("gpu", "cta", "sys")


class AtomicRMWOp(Op):
    """Atomic read-modify-write through ``ptr`` (a pointer or tile of pointers) with
    ``val`` (same shape, the pointee type): ``*p = *p <kind> v`` where ``mask`` holds;
    the result is the value each lane found in memory (the old value).  Masked-off
    lanes touch nothing and their result is unspecified.  Lanes of one op are applied
    one at a time (in lane order on the interpreter), each atomically.  ``kind``:
    add (wrapping for ints), max/min (signedness from the dtype; for floats NaN
    handling is unspecified), and/or/xor (ints), xchg (stores ``val``).  ``sem``
    (relaxed/acquire/release/acq_rel) and ``scope`` (gpu/cta/sys) order the access
    as in Triton."""
    name = "tt.atomic_rmw"
    OPERANDS = ("ptr", "val", "mask?")
    ATTRS = ("kind", "sem", "scope")
    ATTR_DEFAULTS = {"sem": "acq_rel", "scope": "gpu"}
    TRAITS = frozenset({"reads_memory", "writes_memory", "side_effect"})

    @classmethod
    def infer_types(cls, operands, attrs):
        pt = operands["ptr"].type
        return [pt.with_element(pt.element.element)]

    def verify(self):
        if self.kind not in ATOMIC_RMW_KINDS:
            raise ValueError(f"unknown atomic kind {self.kind}")
        if self.sem not in ATOMIC_SEMS or self.scope not in ATOMIC_SCOPES:
            raise ValueError(f"bad atomic sem/scope {self.sem}/{self.scope}")
        if self.val.type != self.results[0].type:
            raise ValueError(f"atomic value type {self.val.type} != {self.results[0].type}")


class AtomicCASOp(Op):
    """Atomic compare-and-swap through ``ptr``: where ``*p == cmp`` (bitwise) store
    ``val``; the result is the old value.  Lanes in lane order, each atomic."""
    name = "tt.atomic_cas"
    OPERANDS = ("ptr", "cmp", "val")
    ATTRS = ("sem", "scope")
    ATTR_DEFAULTS = {"sem": "acq_rel", "scope": "gpu"}
    TRAITS = frozenset({"reads_memory", "writes_memory", "side_effect"})

    @classmethod
    def infer_types(cls, operands, attrs):
        pt = operands["ptr"].type
        return [pt.with_element(pt.element.element)]

    def verify(self):
        if self.sem not in ATOMIC_SEMS or self.scope not in ATOMIC_SCOPES:
            raise ValueError(f"bad atomic sem/scope {self.sem}/{self.scope}")
        t = self.results[0].type
        if self.val.type != t or self.cmp.type != t:
            raise ValueError("atomic_cas operand types differ from the pointee type")


class InlineAsmOp(Op):
    """``tl.inline_asm_elementwise``: the target assembly ``asm`` (LLVM inline-asm
    syntax, ``$0``.. the results then the operands, ``constraints`` as in LLVM) run
    once per element of the broadcast ``args`` (``pack`` elements per run); one
    result per entry of ``result_types`` (the args' shape).  Only targets whose
    assembly it is can run it (PTX: the cuda backend)."""
    name = "tt.elementwise_inline_asm"
    OPERANDS = ("*args",)
    ATTRS = ("asm", "constraints", "pure", "pack", "result_types")
    ATTR_DEFAULTS = {"pure": True, "pack": 1}
    TRAITS = frozenset({"side_effect"})

    @classmethod
    def infer_types(cls, operands, attrs):
        return list(attrs["result_types"])


# --------------------------------------------------------------------------
# reductions, dot
# --------------------------------------------------------------------------
REDUCE_KINDS = ("sum", "max", "min", "argmax", "argmin", "xor_sum")


class ReduceOp(Op):
    """Reduce ``src`` along ``axis`` (the dimension is removed)."""
    name = "tt.reduce"
    OPERANDS = ("src",)
    ATTRS = ("kind", "axis")
    TRAITS = frozenset({"pure"})

    @classmethod
    def infer_types(cls, operands, attrs):
        t = operands["src"].type
        shape = t.shape[:attrs["axis"]] + t.shape[attrs["axis"] + 1:]
        el = int32 if attrs["kind"] in ("argmax", "argmin") else t.element
        return [TileType(el, shape)]

    def verify(self):
        if self.kind not in REDUCE_KINDS:
            raise ValueError(f"unknown reduction {self.kind}")


class CombineReduceOp(Op):
    """Reduce the tuple ``srcs`` (N tiles of one shape) along ``axis`` (the dimension
    is removed) with the combine region: one block taking 2N scalars ``(a..., b...)``
    (the element types of ``srcs``, twice) and ending with ``scf.yield`` of N scalars.

    Order (every backend reproduces it exactly): along the axis, a pairwise tree.
    With ``x[0..n)`` the elements of one output lane, round ``r = 0, 1, ...`` with
    stride ``s = 2**r`` sets ``x[i] = combine(x[i], x[i + s])`` for every
    ``i = 0, 2s, 4s, ...`` with ``i + s < n``; after ``ceil(log2 n)`` rounds the
    result is ``x[0]``.  (The same tree as ``language.scan.reduce_tree``: pairs
    ``(2k, 2k+1)`` of the previous round, an unpaired last element passed on.)"""
    name = "tt.combine_reduce"
    OPERANDS = ("*srcs",)
    ATTRS = ("axis",)
    REGIONS = 1
    TRAITS = frozenset({"pure"})

    @classmethod
    def infer_types(cls, operands, attrs):
        out = []
        for v in operands["srcs"]:
            t, ax = v.type, attrs["axis"]
            if not isinstance(ax, int) or not 0 <= ax < len(t.shape):
                raise ValueError(f"axis {ax} out of range for shape {t.shape}")
            out.append(TileType(t.element, t.shape[:ax] + t.shape[ax + 1:]))
        return out

    @property
    def body(self):
        return self.regions[0].block

    def verify(self):
        srcs = list(self.srcs)
        if not srcs:
            raise ValueError("tt.combine_reduce needs at least one operand")
        shape = srcs[0].type.shape
        if any(v.type.shape != shape for v in srcs):
            raise ValueError("tt.combine_reduce operands differ in shape")
        if any(v.type.element.is_ptr() for v in srcs):
            raise ValueError("tt.combine_reduce of pointers is not supported")


class GatherOp(Op):
    """``out[..., i, ...] = src[..., index[..., i, ...], ...]`` along ``axis``: ``index``
    (any integer type) has ``src``'s shape except along ``axis``, the result ``index``'s
    shape and ``src``'s element type.  An index outside ``[0, src.shape[axis])`` gives 0
    (Triton leaves it undefined).  Bit-exact (no arithmetic on the values)."""
    name = "tt.gather"
    OPERANDS = ("src", "index")
    ATTRS = ("axis",)
    TRAITS = frozenset({"pure"})

    @classmethod
    def infer_types(cls, operands, attrs):
        return [TileType(operands["src"].type.element, operands["index"].type.shape)]

    def verify(self):
        s, i, ax = self.src.type.shape, self.index.type.shape, self.axis
        if len(s) != len(i) or not 0 <= ax < len(s) or \
                any(a != b for d, (a, b) in enumerate(zip(s, i)) if d != ax):
            raise ValueError(f"tt.gather: index shape {i} does not fit src shape {s} along axis {ax}")
        if not self.index.type.element.is_int() or self.src.type.element.is_ptr():
            raise ValueError("tt.gather needs integer indices and a non-pointer source")


class HistogramOp(Op):
    """int32 counts ``out[b]`` (``b < num_bins``) of the elements of the 1-d integer tile
    ``src`` equal to ``b`` where ``mask`` holds (a 1-d int1 tile of ``src``'s shape, or
    absent); other values are not counted."""
    name = "tt.histogram"
    OPERANDS = ("src", "mask?")
    ATTRS = ("num_bins",)
    TRAITS = frozenset({"pure"})

    @classmethod
    def infer_types(cls, operands, attrs):
        return [TileType(int32, (attrs["num_bins"],))]

    def verify(self):
        t = self.src.type
        if len(t.shape) != 1 or not t.element.is_int():
            raise ValueError(f"tt.histogram needs a 1-d integer tile, got {t}")
        if self.mask is not None and (self.mask.type.shape != t.shape or not self.mask.type.element.is_bool()):
            raise ValueError(f"tt.histogram: mask {self.mask.type} does not fit {t}")


class DotOp(Op):
    """``a @ b + acc`` for 2-D tiles; result has acc's type."""
    name = "tt.dot"
    OPERANDS = ("a", "b", "acc")
    ATTRS = ("input_precision", "max_num_imprecise_acc")
    ATTR_DEFAULTS = {"input_precision": "tf32", "max_num_imprecise_acc": None}
    TRAITS = frozenset({"pure"})

    @classmethod
    def infer_types(cls, operands, attrs):
        return [operands["acc"].type]

    def verify(self):
        (m, k), (k2, n) = self.a.type.shape, self.b.type.shape
        if k != k2 or self.acc.type.shape != (m, n):
            raise ValueError(f"dot shapes {self.a.type.shape} @ {self.b.type.shape} -> {self.acc.type.shape}")


# --------------------------------------------------------------------------
# hints and debugging
# --------------------------------------------------------------------------
class HintOp(Op):
    """A user claim about ``src``, one value per dimension; the result is ``src``."""
    OPERANDS = ("src",)
    ATTRS = ("values",)
    TRAITS = frozenset({"pure", "hint"})

    @classmethod
    def infer_types(cls, operands, attrs):
        return [operands["src"].type]


class MultipleOfOp(HintOp):
    name = "tt.multiple_of"


class MaxContiguousOp(HintOp):
    name = "tt.max_contiguous"


class MaxConstancyOp(HintOp):
    name = "tt.max_constancy"


class AssumeRangeOp(HintOp):
    """A claim that every element of ``src`` lies in ``values = (lo, hi)``: made only by
    the compiler (``transforms/align_version``) where a branch has just tested it."""
    name = "tj.assume_range"


class DebugBarrierOp(Op):
    """``tl.debug_barrier()``: the program's memory accesses before it happen before
    those after it, across the threads that run the program (a CTA barrier on CUDA;
    nothing to do where one thread runs a program)."""
    name = "tt.debug_barrier"
    OPERANDS = ()
    TRAITS = frozenset({"side_effect"})


class DeviceAssertOp(Op):
    """Fail with ``msg`` where ``cond`` is false."""
    name = "tt.assert"
    OPERANDS = ("cond",)
    ATTRS = ("msg",)
    TRAITS = frozenset({"side_effect"})


class DevicePrintOp(Op):
    """Print ``prefix`` and the values of ``args`` (each program prints)."""
    name = "tt.print"
    OPERANDS = ("*args",)
    ATTRS = ("prefix", "hex")
    ATTR_DEFAULTS = {"hex": False}
    TRAITS = frozenset({"side_effect"})


# --------------------------------------------------------------------------
# structured control flow
# --------------------------------------------------------------------------
class YieldOp(Op):
    name = "scf.yield"
    OPERANDS = ("*values",)
    TRAITS = frozenset({"terminator"})


class ConditionOp(Op):
    """Terminates a while's ``before`` region: continue while ``cond``; ``values``
    become the ``after`` region's arguments (or the loop's results)."""
    name = "scf.condition"
    OPERANDS = ("cond", "*values")
    TRAITS = frozenset({"terminator"})


class ReturnOp(Op):
    name = "tt.return"
    TRAITS = frozenset({"terminator"})


class ForOp(Op):
    """``for iv in range(lb, ub, step)`` with loop-carried values.

    Region 0 has one block with arguments ``[iv, *iter_args]`` and ends with a
    ``scf.yield`` of the next iteration's values.  Results are the final values.
    A non-positive trip count runs zero iterations; step may be negative.
    """
    name = "scf.for"
    OPERANDS = ("lb", "ub", "step", "*inits")
    REGIONS = 1

    @classmethod
    def infer_types(cls, operands, attrs):
        return [v.type for v in operands.get("inits", ())]

    @property
    def body(self):
        return self.regions[0].block

    @property
    def induction_var(self):
        return self.body.args[0]


class IfOp(Op):
    """Region 0 (then) runs when ``cond``, region 1 (else) otherwise; each ends with
    a ``scf.yield`` of the results."""
    name = "scf.if"
    OPERANDS = ("cond",)
    ATTRS = ("result_types",)
    REGIONS = 2

    @classmethod
    def infer_types(cls, operands, attrs):
        return list(attrs["result_types"])


class WhileOp(Op):
    """Region 0 (before) takes the loop values and ends with ``scf.condition``;
    region 1 (after) takes the forwarded values and ends with ``scf.yield``."""
    name = "scf.while"
    OPERANDS = ("*inits",)
    ATTRS = ("result_types",)
    REGIONS = 2

    @classmethod
    def infer_types(cls, operands, attrs):
        return list(attrs["result_types"])


def _all_op_classes():
    out, stack = [], [Op]
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            stack.append(sub)
            if sub.name != "op" and "name" in sub.__dict__:
                out.append(sub)
    return out


OPS_BY_NAME = {cls.name: cls for cls in _all_op_classes()}
