"""Lowering rules for elementwise ops: arithmetic, comparisons, math, casts, select, addptr.

Each rule maps the operands' slots one by one; the layout is the operands'.  The
arithmetic, comparisons, casts, select and addptr of one slot are the shared LLVM rules
(``backends/llvm/scalar.py``, ``casts.py``) under the NVPTX capabilities -- the same
lowering as the cpu backend's, so integer ``//`` and ``%`` are defined for a zero divisor
and ``INT_MIN // -1`` on both.  What is CUDA's own: the math functions (approximate
hardware units where precise enough) and the memory-bound fast paths of ``CudaTuning``.
"""
from __future__ import annotations

from llvmlite import ir

from ...ir import ops
from ...ir.types import float32 as _F32_DT
from ..llvm import f64math, mathlib
from ..llvm.capabilities import NVPTX
from ..llvm.casts import lower_cast
from ..llvm.scalar import lower_elementwise
from . import types as T
from .lowering import RULES, Tile

# Fast paths (bench/results/memory_bound_notes.md), checked on an H200 (the cuda e2e and
# GPU suites, tests/e2e/test_layer_norm_memory_bound.py among them): ``CudaTuning``'s
# wide_umulhi, uniform_divisor and chunk_constant_cmp (False: the plain lowering).


def _map(lw, op, fn, *tiles):
    lay = tiles[0].layout
    return [Tile([fn(*xs) for xs in zip(*(t.regs for t in tiles))], lay)]


def _slot_rule(lw, op):
    """``(*slot values) -> value``: ``op`` on one slot by the shared LLVM rule."""
    ins = [v.type.element for v in op.operands]
    out = op.result.type.element
    return lambda *xs: lower_elementwise(lw.b, op, list(xs), ins, out, caps=NVPTX, contract=lw.fp_fusion)


@RULES.register(ops.ElementwiseOp)
def _elementwise(lw, op):
    """Unary ops, select, addptr, casts, bitcasts: the shared rule, slot by slot."""
    return _map(lw, op, _slot_rule(lw, op), *(lw.get(v) for v in op.operands))


@RULES.register(ops.ConstantOp)
def _constant(lw, op):
    ty = op.type
    c = T.const(ty.element, op.value)
    return [lw.tile_like(ty, [c] * lw.nslots(ty))]


def _umulhi(lw, el, x, y):
    """32-bit umulhi as one ``mul.wide.u32`` (IMAD.WIDE.U32: both halves in one
    instruction); an i32 multiply of the same operands in this block takes its low half
    (Philox's rounds multiply each counter by a constant for both halves).  The halves
    come out as two i32 results, so LLVM keeps no 64-bit value alive."""
    b = lw.b
    pair = ir.LiteralStructType([T.I32, T.I32])
    text = "{ .reg .b64 t; mul.wide.u32 t, $2, $3; mov.b64 {$0, $1}, t; }"
    r = b.asm(ir.FunctionType(pair, [x.type, y.type]), text, "=r,=r,r,r", [x, y], False)
    lo, hi = b.extract_value(r, 0), b.extract_value(r, 1)
    cache = lw.wide_products
    cache[(b.block, id(x), id(y))] = cache[(b.block, id(y), id(x))] = (x, y, lo)
    return hi


def _mul_lo(lw, x, y):
    hit = lw.wide_products.get((lw.b.block, id(x), id(y))) if x.type == ir.IntType(32) else None
    if hit is not None and {id(hit[0]), id(hit[1])} == {id(x), id(y)}:
        return hit[2]
    return lw.b.mul(x, y)


@RULES.register(*ops.BINARY_OPS)
def _binary(lw, op):
    el = op.lhs.type.element
    cls = type(op)
    x, y = lw.get(op.lhs), lw.get(op.rhs)
    if cls is ops.UmulhiOp and el.bits == 32 and lw.tuning.wide_umulhi:
        return _map(lw, op, lambda a, c: _umulhi(lw, el, a, c), x, y)
    if cls is ops.MulOp and not T.is_float(el):
        return _map(lw, op, lambda a, c: _mul_lo(lw, a, c), x, y)
    if lw.tuning.uniform_divisor and cls is ops.TrueDivOp and el == _F32_DT \
            and len(y.regs) > 1 and all(r is y.regs[0] for r in y.regs):
        return [Tile(_div_by_uniform(lw, x.regs, y.regs[0]), x.layout)]
    if lw.tuning.chunk_divide and cls is ops.TrueDivOp and el == _F32_DT and len(y.regs) > 1:
        return [Tile(_div_chunk(lw, x.regs, y.regs), x.layout)]
    return _map(lw, op, _slot_rule(lw, op), x, y)


# |x| and |d| in [2**-60, 2**60]: the quotient, the product q*d and the remainder are
# normal numbers far from overflow, where div.rn.f32's fast path is exact
_DIV_LO, _DIV_HI = 2.0 ** -60, 2.0 ** 60


def _in_div_range(lw, v):
    b = lw.b
    a = lw.call("llvm.fabs.f32", T.F32, [v])
    return b.and_(b.fcmp_ordered(">=", a, ir.Constant(T.F32, _DIV_LO)),
                  b.fcmp_ordered("<=", a, ir.Constant(T.F32, _DIV_HI)))


def _recip(lw, d):
    """1/d correctly rounded for 2**-126 <= |d| < 2**126: rcp.approx and one Newton step
    (rcp.rn.f32's fast path, the instructions ptxas emits for it)."""
    one = ir.Constant(T.F32, 1.0)
    fma = lambda u, v, w: lw.call("llvm.fma.f32", T.F32, [u, v, w])  # noqa: E731
    r0 = lw.b.asm(ir.FunctionType(T.F32, [T.F32]), "rcp.approx.ftz.f32 $0, $1;", "=f,f", [d], False)
    return fma(r0, fma(lw.b.fneg(d), r0, one), r0)


def _in_range(lw, v, lo, hi):
    b = lw.b
    a = lw.call("llvm.fabs.f32", T.F32, [v])
    return b.and_(b.fcmp_ordered(">=", a, ir.Constant(T.F32, lo)), b.fcmp_ordered("<", a, ir.Constant(T.F32, hi)))


def _is_one(v):
    return isinstance(v, ir.Constant) and v.type == T.F32 and v.constant == 1.0


def _div_chunk(lw, xs, ds):
    """``x / d`` (correctly rounded) for a thread's fp32 slots, each with its divisor:
    div.rn.f32's fast path for every slot behind one range check for the chunk, where
    div.rn.f32 branches per slot (and its slow-path call holds registers).  ``1 / d``
    (``tl.sigmoid``) is the reciprocal alone (exact on 2**-126 <= |d| < 2**126);
    otherwise q = x*r, rem = fma(-d, q, x), q' = fma(r, rem, q) (exact for x, d in
    [2**-60, 2**60]).  Outside those ranges every slot takes ``fdiv`` (div.rn.f32)."""
    b = lw.b
    ones = all(_is_one(x) for x in xs)
    ok = None
    for x, d in zip(xs, ds):
        c = _in_range(lw, d, 2.0 ** -126, 2.0 ** 126) if ones else \
            b.and_(_in_div_range(lw, d), _in_div_range(lw, x))
        ok = c if ok is None else b.and_(ok, c)

    def fast():
        out, recips = [], {}
        for x, d in zip(xs, ds):
            r = recips.get(id(d))
            if r is None:
                r = recips[id(d)] = _recip(lw, d)
            out.append(r if ones else _refine(lw, x, d, r))
        return out
    return _fast_or_fdiv(lw, ok, fast, xs, ds)


def _refine(lw, x, d, r):
    fma = lambda u, v, w: lw.call("llvm.fma.f32", T.F32, [u, v, w])  # noqa: E731
    q = lw.b.fmul(x, r)
    return fma(r, fma(lw.b.fneg(d), q, x), q)


def _fast_or_fdiv(lw, ok, fast, xs, ds):
    """``fast()``'s slots where ``ok``, else ``fdiv`` slot by slot (one branch)."""
    b = lw.b
    fast_bb = lw.kernel.append_basic_block("div.fast")
    slow = lw.kernel.append_basic_block("div.slow")
    done = lw.kernel.append_basic_block("div.done")
    b.cbranch(ok, fast_bb, slow)
    b.position_at_end(fast_bb)
    got = fast()
    fast_end = b.block
    b.branch(done)
    b.position_at_end(slow)
    exact = [b.fdiv(x, d) for x, d in zip(xs, ds)]
    b.branch(done)
    b.position_at_end(done)
    out = []
    for f, e in zip(got, exact):
        phi = b.phi(T.F32)
        phi.add_incoming(f, fast_end)
        phi.add_incoming(e, slow)
        out.append(phi)
    return out


def _div_by_uniform(lw, xs, d):
    """``x / d`` (correctly rounded) for a thread's fp32 slots ``xs`` sharing one divisor:
    the reciprocal refinement of div.rn.f32's fast path done once (rcp.approx, one
    Newton step), then per slot q = x*r, rem = fma(-d, q, x), q' = fma(r, rem, q) --
    div.rn.f32's own fast-path sequence.  Where any operand is outside the range
    that path is exact on (zeros, subnormals, huge values, inf, NaN), every slot
    takes ``fdiv`` (div.rn.f32) instead."""
    b = lw.b
    r = _recip(lw, d)
    ok = _in_div_range(lw, d)
    for x in xs:
        ok = b.and_(ok, _in_div_range(lw, x))
    return _fast_or_fdiv(lw, ok, lambda: [_refine(lw, x, d, r) for x in xs], xs, [d] * len(xs))


@RULES.register(ops.CmpOp)
def _cmp(lw, op):
    fn = _slot_rule(lw, op)
    x, y = lw.get(op.lhs), lw.get(op.rhs)
    step = _constant_run(lw, op.result, x.layout)
    if step == 1:
        return _map(lw, op, fn, x, y)
    # the analysis proves the result constant over aligned runs of `step` elements
    # of the last dimension: one compare per run (a thread's chunk holds whole runs)
    regs = []
    for s, (a, c) in enumerate(zip(x.regs, y.regs)):
        regs.append(fn(a, c) if s % step == 0 else regs[s - s % step])
    return [Tile(regs, x.layout)]


def _constant_run(lw, value, lay) -> int:
    """Slots per run of one value in a thread's chunk of ``lay``: the largest power of
    two dividing both the chunk size and the proved constancy along the chunk's dimension
    (the last; dim 0 in a dim0_first layout: chunks start at multiples of their size, inside one row
    or column).  1 when unknown."""
    if not lw.tuning.chunk_constant_cmp or lay is None or lay.vec == 1 or lw.facts is None or lw.sanitize \
            or getattr(lw, "in_remat", False):     # (facts of the value, not of its broadcast)
        return 1
    info = lw.axis(value)
    if info is None:
        return 1
    k = info.constancy[0 if lay.dim0_first else -1]     # the chunk's dimension
    step = lay.vec
    while step > 1 and k % step:
        step //= 2
    return step


def _via_f32(lw, x, fn):
    """Compute a half/bfloat function in fp32."""
    if x.type in (T.F16, T.BF16):
        return lw.b.fptrunc(fn(lw.b.fpext(x, T.F32)), x.type)
    return fn(x)


LOG2E = 1.4426950408889634


def _f32_math(lw, fn_name, x):
    """One math function on an fp32 value (approximate hardware units where precise enough)."""
    b, c = lw.b, (lambda v: ir.Constant(T.F32, v))
    if fn_name == "exp":         # as Triton's tl.exp: never flushed
        return lw.call("llvm.nvvm.ex2.approx.f", T.F32, [b.fmul(x, c(LOG2E))])
    if fn_name == "exp2":
        return _exp2(lw, x)
    if fn_name == "log":         # the CPU's polynomial (1 ulp; lg2.approx is 2**-22 absolute)
        return mathlib.log_f32(b, x)
    if fn_name == "log2":
        return b.fmul(mathlib.log_f32(b, x), c(LOG2E))
    if fn_name == "sqrt":
        return lw.call("llvm.sqrt.f32", T.F32, [x])
    if fn_name == "rsqrt":
        return lw.call("llvm.nvvm.rsqrt.approx.f", T.F32, [x])
    if fn_name in ("sin", "cos"):
        return lw.call(f"llvm.nvvm.{fn_name}.approx.f", T.F32, [x])
    if fn_name in ("floor", "ceil"):
        return lw.call(f"llvm.{fn_name}.f32", T.F32, [x])
    if fn_name == "tanh":
        return _tanh_f32(lw, x)
    if fn_name == "erf":      # the CPU's polynomial (within 3 ulp)
        return mathlib.lower_math(b, fn_name, x)
    raise NotImplementedError(f"math.{fn_name}")


def _exp2(lw, x):
    """fp32 exp2 as Triton's (libdevice ``__nv_exp2f`` under ``nvvm-reflect-ftz``):
    ``ex2.approx.ftz.f32``, results below 2**-126 flushed to 0, unless the kernel's
    ``enable_reflect_ftz`` is off (``ex2.approx.f32``: subnormal results kept, at the cost
    of a range check and two multiplies around each MUFU.EX2)."""
    ftz = ".ftz" if lw.reflect_ftz else ""
    return lw.call(f"llvm.nvvm.ex2.approx{ftz}.f", T.F32, [x])


def _approx(lw, name, x):
    """One ``<name>.approx.ftz.f32`` (MUFU) instruction."""
    return lw.b.asm(ir.FunctionType(T.F32, [T.F32]), f"{name}.approx.ftz.f32 $0, $1;", "=f,f", [x], False)


def _tanh_f32(lw, x):
    """fp32 tanh as libdevice's ``__nv_tanhf`` computes it (within 3 ulp, not
    tanh.approx.f32's 2e-3): x + x**3 P(x*x) below 0.625 (mathlib's polynomial), beyond
    1 - 2/(2**(2|x| log2 e) + 1) with ex2.approx (relative error 2**-22; its argument is
    at least 1.8, so flushing subnormals changes nothing) and rcp.approx refined by one
    Newton step.  Worst near 0.625: 2/(e + 1) <= 0.45 carries ~1.3 * 2**-22 relative
    error, under 2.3 ulp of the result, plus the final rounding.  No IEEE division."""
    b, c = lw.b, (lambda v: ir.Constant(T.F32, v))
    fma = lambda u, v, w: lw.call("llvm.fma.f32", T.F32, [u, v, w])  # noqa: E731
    a = lw.call("llvm.fabs.f32", T.F32, [x])
    a2 = b.fmul(a, a)
    small = fma(b.fmul(a, a2), mathlib._poly(b, mathlib._TANH_SMALL, a2), a)
    ac = mathlib._below(b, a, 20.0)                # tanh is 1.0 in fp32 from 9.01 on; NaN: 20
    s = b.fadd(_approx(lw, "ex2", b.fmul(ac, c(2.0 * LOG2E))), c(1.0))
    r0 = _approx(lw, "rcp", s)
    r = fma(r0, fma(b.fneg(s), r0, c(1.0)), r0)
    big = fma(r, c(-2.0), c(1.0))
    res = b.select(b.fcmp_ordered("<", a, c(0.625)), small, big)
    return mathlib._keep_nan(b, x, lw.call("llvm.copysign.f32", T.F32, [res, x]))


_F64_OK = {"sqrt": "llvm.sqrt.f64", "floor": "llvm.floor.f64", "ceil": "llvm.ceil.f64"}


def _math_one(lw, fn_name, x):
    if x.type == T.F64:
        if fn_name in _F64_OK:
            return lw.call(_F64_OK[fn_name], T.F64, [x])
        if fn_name == "rsqrt":
            return lw.b.fdiv(ir.Constant(T.F64, 1.0), lw.call("llvm.sqrt.f64", T.F64, [x]))
        if fn_name in f64math.FUNCTIONS:
            return f64math.FUNCTIONS[fn_name](lw.b, x)
        # no libdevice: compute in fp32 (documented precision loss)
        return lw.b.fpext(_f32_math(lw, fn_name, lw.b.fptrunc(x, T.F32)), T.F64)
    return _via_f32(lw, x, lambda u: _f32_math(lw, fn_name, u))


for _fn, _cls in ops.MATH_OPS.items():
    RULES.register(_cls)(lambda lw, op, _fn=_fn: _map(lw, op, lambda x: _math_one(lw, _fn, x), lw.get(op.src)))


def cast_value(lw, x, src, dst):
    """Convert one LLVM value from element type ``src`` to ``dst`` (tt.cast semantics):
    the shared rule (``backends/llvm/casts.py``) under the NVPTX capabilities."""
    return lower_cast(lw.b, x, src, dst, NVPTX)
