"""Dot operand tiles packed once and shared by the programs of one chunk (CPU backend).

In the tutorial matmul every program copies its own A tile and packs its own B tile at
every K step, so each A row block is copied ``N / BN`` times and each B column block
``M / BM`` times (bench/results/cpu_matmul_notes.md: 15-20% of the time at 1024^3 and
2048^3).  A BLAS packs each element once.  Here a fused dot loop
(``lower_dot_loop``) may keep an operand's packed copy in a per-chunk cache that the
later programs of the same ``run_chunk`` call (one thread, consecutive programs, x
fastest) read instead of packing again.

**When (:func:`plan`).**  An operand tile is shared when

* it is read in place (``lower_dot_loop._in_place``: an unmasked, non-volatile load
  of the compute type, nothing writing memory between it and the dot);
* the dot loop is an op of the kernel's top-level block (it runs once per program)
  and no op before it in that block writes memory (nothing in the program can have
  changed the tile's memory before the loop, which writes none itself);
* the kernel has no atomics (programs have no way to order their accesses, so a
  program never reads another's writes);
* the load's pointer tile does not depend on program id axis 0 or 1 (:func:`pid_deps`:
  every value a ``tt.get_program_id`` of that axis flows into, through loop-carried
  values and branch conditions too).  Two programs whose ids differ only on such
  axes then load the same addresses at the same iteration, which hold the same
  values: the tile is keyed by the ids of the axes it does depend on and the
  iteration number.

So a shared tile holds exactly what the program's own load would read, unless another
program of the launch wrote that memory during the launch: a data race, whose result
Triton leaves unspecified (programs run in any order, in parallel).

**How.**  ``run_chunk`` (codegen.py) gives every program of a chunk of at least two
programs one scratch area: an entry of a process-wide table (:data:`TABLE`) claimed
atomically for the chunk and released at its end, whose ``malloc``'d area is kept
(so its pages stay mapped from one launch to the next) and grown when a kernel needs
more.  The area holds a header with the chunk's program count, then per shared
operand (a *site*) ``slots`` tags of two i64 words (``dep + 1``, trip) zeroed at the
chunk's start, then the slots' packed tiles.  The slot of trip ``j`` of the fused
loop: ``j`` when the operand does not depend on axis 0 (the programs that share it
run one after another), else ``j * count + dep`` (``dep``: the linear index of the
program's ids on the axes it depends on, ``count`` how many there are), used only
when the chunk spans more than one row of axis 0.  A program packs a missed tile
into its slot and tags it; a trip beyond the slots, a chunk of one program or no free
entry packs into the program's own buffer as before.
"""
from __future__ import annotations

from typing import NamedTuple

import llvmlite.ir as ir

from ...ir import ops
from ..llvm.types import I64

HEADER = 64                  # bytes: word 0 the chunk's program count
TAGS_MAX = 64 << 10          # bytes of tags for every site together (data follows)
TAG = 16                     # bytes per tag: (dep + 1, iteration)
MAX_SLOTS = 1024             # per site
CAP_BYTES = (4 << 20, 16 << 20)     # per site: operand free of axis 0 (B), or not (A)
_ALL = frozenset((0, 1, 2))


class Site(NamedTuple):
    dep: tuple               # program id axes the operand depends on
    tags: int                # byte offset of its tags in the scratch
    data: int                # byte offset of its slots
    slots: int
    slot_bytes: int


class Scratch:
    """The scratch layout of one kernel (kept on the lowering context)."""

    def __init__(self):
        self.tag_bytes = 0
        self.data_bytes = 0

    @property
    def total(self) -> int:
        return TAGS_MAX + self.data_bytes


def scratch_of(ctx) -> Scratch | None:
    """The kernel's scratch layout, or None when no site was allocated."""
    return getattr(ctx, "dot_scratch", None)


def pid_deps(func) -> dict:
    """``{value: frozenset of program id axes it may depend on}`` for every value of
    ``func`` that depends on one (absent: none).  Loops are iterated to a fixpoint; a
    value computed under a branch depends on its condition; ``scf.while`` results,
    inline assembly and atomics are taken to depend on every axis."""
    dep: dict = {}

    def get(v):
        return dep.get(v, frozenset())

    def union(vals):
        out = frozenset()
        for v in vals:
            out |= get(v)
        return out

    def put(vals, d):
        for v in vals:
            if d:
                dep[v] = d

    def block(blk, ctl):
        for op in blk.ops:
            visit(op, ctl)

    def visit(op, ctl):
        ins = union(op.operands) | ctl
        if isinstance(op, ops.ProgramIdOp):
            put(op.results, ins | {op.axis})
        elif isinstance(op, ops.ForOp):
            _for(op, ctl)
        elif isinstance(op, ops.IfOp):
            inner = ctl | get(op.cond)
            for r in op.regions:
                block(r.block, inner)
            ys = [union(vs) for vs in zip(*(r.block.terminator.values for r in op.regions))] \
                if all(r.block.terminator is not None for r in op.regions) else []
            for i, res in enumerate(op.results):
                put([res], inner | (ys[i] if i < len(ys) else _ALL))
        elif op.regions or isinstance(op, ops.InlineAsmOp) or op.has_trait("side_effect"):
            for r in op.regions:
                for blk in r.blocks:
                    put(blk.args, _ALL)
                    block(blk, _ALL)
            put(op.results, _ALL)
        else:
            put(op.results, ins)

    def _for(op, ctl):
        body = op.body
        head = ctl | get(op.lb) | get(op.step)
        carried = [get(v) | ctl for v in op.inits]
        while True:
            put([body.args[0]], head)
            for a, c in zip(body.args[1:], carried):
                put([a], c | head)
            block(body, ctl)
            ys = [get(v) for v in body.terminator.values] if body.terminator else [_ALL] * len(carried)
            new = [c | y for c, y in zip(carried, ys)]
            if new == carried:
                break
            carried = new
        for r, c in zip(op.results, carried):
            put([r], c | head | get(op.ub))

    block(func.block, frozenset())
    return dep


def _writes(op) -> bool:
    return any(o.has_trait("writes_memory") for o in op.walk())


def loop_may_share(ctx, loop) -> bool:
    """Whether dot loop ``loop`` may share its operands at all (module docstring)."""
    func = ctx.func
    blk = func.block
    if loop.parent is not blk:
        return False
    if any(isinstance(o, (ops.AtomicRMWOp, ops.AtomicCASOp)) for o in func.walk()):
        return False
    return not any(_writes(o) for o in blk.ops[:blk.ops.index(loop)])


def _deps_of(ctx, load):
    deps = getattr(ctx, "dot_pid_deps", None)
    if deps is None:
        deps = ctx.dot_pid_deps = pid_deps(ctx.func)
    return deps.get(load.ptr, frozenset())


def may_share(ctx, loop, value) -> bool:
    """Whether dot operand ``value`` of dot loop ``loop`` may be shared, as far as the
    IR tells (:func:`plan` also needs it read in place): an unmasked, non-volatile
    load whose pointer depends on program id axis 0 or 1 but not both."""
    ld = value.op
    return (isinstance(ld, ops.LoadOp) and ld.mask is None and not ld.volatile
            and loop_may_share(ctx, loop) and not {0, 1} <= _deps_of(ctx, ld))


def plan(ctx, loop, load, slot_bytes) -> Site | None:
    """A scratch site for the in-place operand ``load`` of dot loop ``loop`` whose
    packed tile takes ``slot_bytes``, or None when it may not be shared."""
    d = _deps_of(ctx, load)
    if {0, 1} <= d:              # free of axis 2 at most: programs rarely share that way
        return None
    sc = scratch_of(ctx) or Scratch()
    cap = CAP_BYTES[0 in d]
    slots = min(MAX_SLOTS, cap // slot_bytes)
    if slots < 2 or HEADER + sc.tag_bytes + slots * TAG > TAGS_MAX:
        return None
    ctx.dot_scratch = sc
    slot_bytes = -(-slot_bytes // 64) * 64
    site = Site(tuple(sorted(d)), HEADER + sc.tag_bytes, TAGS_MAX + sc.data_bytes, slots, slot_bytes)
    sc.tag_bytes += slots * TAG
    sc.data_bytes += slots * slot_bytes
    return site


def _c(x):
    return ir.Constant(I64, x)


def lookup(ctx, site: Site, j):
    """``(use, hit, slot)``: whether iteration ``j`` (i64) of the program uses a
    shared slot, whether that slot holds its tile already, the slot's address."""
    b = ctx.b
    scratch = ctx.scratch
    wide = lambda v: b.zext(v, I64)      # noqa: E731  (program ids are non-negative i32)
    dep, count = _c(0), _c(1)
    for ax in site.dep:
        dep = b.add(dep, b.mul(wide(ctx.pid[ax]), count))
        count = b.mul(count, wide(ctx.nprog[ax]))
    progs = b.load(scratch, typ=I64)
    if 0 in site.dep:
        slot = b.add(b.mul(j, count), dep)
        use = b.icmp_signed(">", progs, wide(ctx.nprog[0]))
    else:
        slot = j
        use = b.icmp_signed(">", progs, _c(1))
    use = b.and_(use, b.icmp_unsigned("<", slot, _c(site.slots)))
    slot = b.select(use, slot, _c(0))
    tag = b.gep(scratch, [b.add(_c(site.tags), b.mul(slot, _c(TAG)))], source_etype=ir.IntType(8))
    key = b.add(dep, _c(1))
    seen = b.select(use, tag, scratch)       # without a scratch area: the header (not a tag)
    w0 = b.load(seen, typ=I64)
    w1 = b.load(b.gep(seen, [_c(8)], source_etype=ir.IntType(8)), typ=I64)
    hit = b.and_(use, b.and_(b.icmp_unsigned("==", w0, key), b.icmp_unsigned("==", w1, j)))
    data = b.gep(scratch, [b.add(_c(site.data), b.mul(slot, _c(site.slot_bytes)))], source_etype=ir.IntType(8))
    return use, hit, data, (tag, key, j)


def mark(ctx, tag_key) -> None:
    """Record the slot of ``tag_key`` (from :func:`lookup`) as holding its tile."""
    b = ctx.b
    tag, key, j = tag_key
    b.store(key, tag)
    b.store(j, b.gep(tag, [_c(8)], source_etype=ir.IntType(8)))


_SYMBOLS = {}
ENTRIES = 64                 # scratch areas kept for the process (one per running chunk)
TABLE = "tilejit_dot_scratch"   # i64[ENTRIES][4]: busy, area, bytes, unused


def _symbol(name):
    """The address the JIT resolves ``name`` to: a C library function, or
    :data:`TABLE` (allocated here, once per process)."""
    if name not in _SYMBOLS:
        import ctypes
        import llvmlite.binding as llvm
        if name == TABLE:
            obj = (ctypes.c_int64 * (4 * ENTRIES))()
            addr = ctypes.addressof(obj)
        else:
            obj = getattr(ctypes.CDLL(None), name)
            addr = ctypes.cast(obj, ctypes.c_void_p).value
        if name == TABLE or not llvm.address_of_symbol(name):
            llvm.add_symbol(name, addr)
        _SYMBOLS[name] = obj             # kept alive
    return _SYMBOLS[name]


def _libc(module, name, ret, args):
    """Declare C library function ``name`` in ``module`` (made visible to the JIT)."""
    _symbol(name)
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, args), name=name)
    return fn


def _table(module):
    _symbol(TABLE)
    g = module.globals.get(TABLE)
    if g is None:
        g = ir.GlobalVariable(module, ir.ArrayType(I64, 4 * ENTRIES), name=TABLE)
        g.linkage = "external"
    return g


def _claim(b, module, total):
    """Claim a free entry of :data:`TABLE` (atomically), growing its area to ``total``
    bytes; ``(entry or -1, area or null)``."""
    fn, ptr_t = b.function, ir.PointerType()
    table = _table(module)
    word = lambda e, k: b.gep(table, [_c(0), b.add(b.mul(e, _c(4)), _c(k))])    # noqa: E731
    cell = b.alloca(I64)
    b.store(_c(-1), cell)
    pre = b.block
    head, body, step, done = (fn.append_basic_block("claim." + n) for n in ("head", "body", "step", "done"))
    b.branch(head)
    b.position_at_end(head)
    e = b.phi(I64)
    e.add_incoming(_c(0), pre)
    b.cbranch(b.icmp_signed("<", e, _c(ENTRIES)), body, done)
    b.position_at_end(body)
    res = b.cmpxchg(word(e, 0), _c(0), _c(1), "acquire", "monotonic")
    got = b.extract_value(res, 1)
    with b.if_then(got):
        b.store(e, cell)
    b.cbranch(got, done, step)
    b.position_at_end(step)
    e.add_incoming(b.add(e, _c(1)), step)
    b.branch(head)
    b.position_at_end(done)
    e = b.load(cell, typ=I64)
    area = b.alloca(ptr_t)
    area.type = ptr_t
    b.store(ir.Constant(ptr_t, None), area)
    with b.if_then(b.icmp_signed(">=", e, _c(0))):
        with b.if_then(b.icmp_signed("<", b.load(word(e, 2), typ=I64), _c(total))):
            b.call(_libc(module, "free", ir.VoidType(), [ptr_t]), [b.inttoptr(b.load(word(e, 1), typ=I64), ptr_t)])
            p = b.call(_libc(module, "malloc", ptr_t, [I64]), [_c(total)])
            b.store(b.ptrtoint(p, I64), word(e, 1))
            b.store(b.select(b.icmp_unsigned("!=", p, ir.Constant(ptr_t, None)), _c(total), _c(0)), word(e, 2))
        b.store(b.inttoptr(b.load(word(e, 1), typ=I64), ptr_t), area)
    return e, b.load(area, typ=ptr_t), word


def chunk_scratch(b, module, scratch: Scratch | None, start, end):
    """In ``run_chunk``'s entry: ``(pointer passed to every program, release(b))``.
    With sites and at least two programs in the chunk: an area of :data:`TABLE`
    (kept for the process, so its pages stay mapped between launches), claimed for
    the chunk, its header's program count set and its tags zeroed; else a header
    alone whose count is 0 (no program shares)."""
    ptr_t = ir.PointerType()
    if scratch is None:
        return ir.Constant(ptr_t, None), lambda b: None
    from ..llvm import intrinsics as intr
    i8 = ir.IntType(8)
    hdr = b.alloca(ir.ArrayType(i8, HEADER))
    hdr.align = 64
    hdr.type = ptr_t                 # opaque ``ptr`` (llvmlite types allocas as T*)
    b.store(_c(0), hdr)
    n = b.sub(end, start)
    cell = b.alloca(I64)
    b.store(_c(-1), cell)
    slot = b.alloca(ptr_t)
    slot.type = ptr_t
    b.store(ir.Constant(ptr_t, None), slot)
    table = _table(module)
    with b.if_then(b.icmp_signed(">", n, _c(1))):
        e, area, _ = _claim(b, module, scratch.total + 64)
        b.store(e, cell)
        b.store(area, slot)
    entry, area = b.load(cell, typ=I64), b.load(slot, typ=ptr_t)
    got = b.icmp_unsigned("!=", area, ir.Constant(ptr_t, None))
    base = b.inttoptr(b.and_(b.add(b.ptrtoint(area, I64), _c(63)), _c(-64)), ptr_t)    # 64-byte aligned
    with b.if_then(got):
        b.store(n, base)
        intr.call_overloaded(b, "memset", [b.gep(base, [_c(HEADER)], source_etype=i8), ir.Constant(i8, 0),
                                           _c(scratch.tag_bytes)],
                             ret=ir.VoidType(), overload_types=[ptr_t, I64],
                             extra_args=[ir.Constant(ir.IntType(1), 0)])
    ptr = b.select(got, base, hdr)

    def release(b):
        with b.if_then(b.icmp_signed(">=", entry, _c(0))):
            busy = b.gep(table, [_c(0), b.mul(entry, _c(4))])
            st = b.store_atomic(_c(0), busy, "release", 8)
            del st
    return ptr, release
