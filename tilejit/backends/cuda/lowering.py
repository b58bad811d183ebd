"""Tile IR -> LLVM IR (nvptx64): the generic driver and the per-thread helpers.

Every IR value becomes a :class:`Tile`: the list of LLVM values this thread holds
(one per slot of the value's :class:`Layout`; a scalar is one uniform value).
Rules registered in :data:`RULES` (one per op class, in rules_*.py) map the
operands' tiles to the results' tiles.  A missing rule names the op; any error
inside a rule is re-raised with the op's source location.
"""
from __future__ import annotations

from llvmlite import ir

from ...errors import LoweringError as CudaLoweringError
from ...ir.core import RuleTable
from ...ir.types import TileType
from ..llvm.builder_utils import counted_loop
from ..llvm.intrinsics import declare
from . import types as T
from .layout import Layout, kernel_max_vec, make_layout
from .target import DATA_LAYOUT, TRIPLE

RULES = RuleTable("cuda lowering")


class Tile:
    """This thread's registers of one IR value."""
    __slots__ = ("regs", "layout")

    def __init__(self, regs, layout: Layout | None):
        self.regs = list(regs)
        self.layout = layout

    @property
    def scalar(self):
        assert self.layout is None
        return self.regs[0]


class _KernelAttributes(ir.values.FunctionAttributes):
    """Function attributes that also accept LLVM 22's NVVM string attributes
    (``"nvvm.maxntid"="128"``, ``"nvvm.minctasm"``, ``"nvvm.maxnreg"``)."""

    def add(self, name):
        if name.startswith('"nvvm.'):
            return set.add(self, name)
        return super().add(name)


class Lowering:
    """Lowers one ``ir.Function`` to an LLVM module holding one PTX kernel."""

    def __init__(self, func, arch: int, num_warps: int = 4, facts=None, vectorize: bool = True,
                 sanitize: bool = False, tuning=None, fp_fusion: bool = True, reflect_ftz: bool = True):
        from .sanitize import wants_reports
        self.func, self.arch, self.num_warps = func, arch, num_warps
        self.tuning = tuning if tuning is not None else _default_tuning()  # CudaTuning: strategy switches
        self.fp_fusion = fp_fusion          # enable_fp_fusion: float + - * may contract into fma
        self.reflect_ftz = reflect_ftz      # enable_reflect_ftz: fp32 exp2 flushes subnormal results
        self.sanitize = bool(sanitize)                  # bounds checks (sanitize.py)
        self.reports = wants_reports(func, sanitize)    # + buffer table and error record params
        self.accesses, self.asserts, self.failed = [], [], None
        self.pipeline = not self.sanitize               # sanitize: accesses stay in program order
        self.plan = None                    # plan.CudaPlan: every decision, made before lowering
        self.iter_slices = {}               # load -> its pipeline.IterSlice (plan.iter_slice)
        self._async_plans = {}              # scf.for -> async_pipeline.AsyncPlan (prepare)
        self.ring_rejects = {}              # dot loop -> why it keeps the register path
        self.forced_ml = {}                 # dot -> MmaLayout forced by a row region (mma_rows)
        self.hoisted_a = {}                 # dot -> A fragments read before its loop (mma_rows)
        self.ring_b = {}                    # dot -> its B tile's ring stage (rows_ring, per iteration)
        self._yielded = None                # the tiles a region's terminator yields (rules_control)
        self._print_fmts = {}               # format text -> its global string (device_print)
        self.threads = num_warps * 32
        self.facts, self.vectorize = facts, vectorize
        self.module = ir.Module(name=func.name)
        self.module.triple = TRIPLE
        self.module.data_layout = DATA_LAYOUT
        self.values: dict = {}
        self.smem_bytes = 0
        self._slot_index: dict = {}
        self._layouts: dict = {}
        self.max_vec = kernel_max_vec(func, facts, self.threads)  # chunk width of blocked layouts (layout.py)
        self._smem = None
        self.arch_specific = False          # uses sm_90a-only instructions (wgmma)
        self._flat = {}                     # (value, block) -> (mma tile, its blocked copy)
        self.deferred = {}                  # op -> info: lowered by its consumer (lower_op skips)
        self.smem_window = None             # max scratch bytes asked while a cp.async ring is live
        self.region_ops = set()             # ops lowered in the mma / row layouts (mma_rows)
        self.keep_layout = False            # get() returns region tiles as they are (mma_rows)
        self.remat = None                   # remat.Remat while lowering (lower())
        self.wgmma_ring_dots = {}           # dot -> (its loop, row region?): lowered in a wgmma ring
        self.reg_cap = None                 # registers per thread capped at (occupancy.py), or None
        self.kernel = self._declare_kernel()

    # ---- module and kernel ---------------------------------------------------
    def _declare_kernel(self):
        params = [T.param_type(a.value.type.element) for a in self.func.arguments]
        if self.reports:
            params += [T.GLOBAL_PTR, T.GLOBAL_PTR]        # buffer table, error record
        fn = ir.Function(self.module, ir.FunctionType(T.VOID, params), self.func.name)
        fn.calling_convention = "ptx_kernel"
        fn.attributes = _KernelAttributes()
        fn.attributes.add("nounwind")
        fn.attributes.add(f'"nvvm.maxntid"="{self.threads}"')      # .maxntid: ptxas budgets registers
        attrs = self.func.attrs
        if attrs.get("maxnreg"):
            fn.attributes.add(f'"nvvm.maxnreg"="{int(attrs["maxnreg"])}"')
        if attrs.get("min_ctas_per_sm"):
            fn.attributes.add(f'"nvvm.minctasm"="{int(attrs["min_ctas_per_sm"])}"')
        return fn

    def lower(self) -> str:
        entry = self.kernel.append_basic_block("entry")
        self.b = ir.IRBuilder(entry)
        self.tid = self.sreg("tid.x")
        self.lane = self.b.and_(self.tid, self.i32(31))
        self.warp = self.b.lshr(self.tid, self.i32(5))
        for arg, p in zip(self.func.arguments, self.kernel.args):
            el = arg.value.type.element
            v = p
            if not isinstance(el, T.PointerType) and el.kind == "bool":
                v = self.b.icmp_unsigned("!=", p, ir.Constant(T.I8, 0))
            self.values[arg.value] = Tile([v], None)
        from .plan import plan_kernel
        self.remat = plan_kernel(self).remat    # every decision first (plan.py)
        self.lower_block(self.func.block)
        if not self.b.block.is_terminated:
            self.b.ret_void()
        from .occupancy import cap_registers
        cap_registers(self)                 # two CTAs per SM for wgmma-ring kernels (occupancy.py)
        self.plan.reg_cap = self.reg_cap
        self._finish_smem()
        return str(self.module)

    def lower_block(self, block, args=None):
        if args is not None:
            for a, t in zip(block.args, args):
                self.values[a] = t
        for op in block.ops:
            self.lower_op(op)

    def lower_op(self, op):
        if op in self.deferred:     # lowered by the op that consumes it
            return
        if self.remat is not None:
            self.remat.before(op)
        if op in self.region_ops:
            from .mma_rows import lower_region
            rule = lower_region
        else:
            rule = None
        try:
            rule = rule or RULES.lookup(type(op))
        except NotImplementedError as e:
            raise NotImplementedError(f"{e} (at {op.loc})") from None
        try:
            results = rule(self, op)
        except (NotImplementedError, CudaLoweringError):
            raise
        except Exception as e:  # a bug or an unsupported case: say where
            raise CudaLoweringError(f"cuda backend failed on {op.name} at {op.loc}: "
                                    f"{type(e).__name__}: {e}") from e
        for v, t in zip(op.results, results or ()):
            self.values[v] = t
        if self.remat is not None:
            self.remat.after(op)

    def get(self, value) -> Tile:
        """The value's tile in the blocked layout (an mma accumulator is converted)."""
        t = self.values[value]
        if t.layout is not None and not isinstance(t.layout, Layout) and not self.keep_layout:
            from .mma_rows import TransposedLayout, transposed_to_flat
            from .rules_mma import to_flat
            key = (value, self.b.block)     # reused where the conversion dominates
            if self._flat.get(key, (None,))[0] is not t:
                flat = (transposed_to_flat(self, t, value.type.shape, value.type.element)
                        if isinstance(t.layout, TransposedLayout) else to_flat(self, t))
                self._flat[key] = (t, flat)
            return self._flat[key][1]
        return t

    def raw(self, value) -> Tile:
        """The value's tile in whatever layout it was produced."""
        return self.values[value]

    # ---- layouts and indices ---------------------------------------------------
    def layout(self, type_or_shape) -> Layout | None:
        shape = type_or_shape.shape if isinstance(type_or_shape, TileType) else tuple(type_or_shape)
        if not shape:
            return None
        if shape not in self._layouts:
            self._layouts[shape] = make_layout(shape, self.threads, self.max_vec)
        return self._layouts[shape]

    def tile_like(self, ty: TileType, regs) -> Tile:
        return Tile(regs, self.layout(ty))

    def nslots(self, ty: TileType) -> int:
        lay = self.layout(ty)
        return 1 if lay is None else lay.nslots

    def in_entry(self):
        """Builder positioned at the end of the entry block's prologue (for hoisting)."""
        return self.b

    def raw_index(self, lay: Layout, slot: int):
        """Unwrapped element index of ``slot``: (r*T + tid)*V + j."""
        tv = self.b.mul(self.tid, self.i32(lay.vec)) if lay.vec > 1 else self.tid
        return self.b.add(tv, self.i32(lay.slot_base(slot)))

    def axis(self, value):
        """The axis analysis' facts of ``value`` (``AxisInfo``; nothing known for a value made
        after it ran), or None without an analysis: callers then assume nothing.  A failing
        lookup is an error, never silently scalar code."""
        return None if self.facts is None else self.facts.axis(value)

    def elem_index(self, lay: Layout, slot: int):
        """Flat (row-major) element index held in ``slot`` by this thread."""
        key = (lay, slot, self.b.block)
        if key not in self._slot_index:
            e = self.raw_index(lay, slot)
            if not lay.exact:
                e = self.b.urem(e, self.i32(lay.numel))
            self._slot_index[key] = e
        return self._slot_index[key]

    def owned(self, lay: Layout | None, slot: int):
        """i1: this slot is the first copy of its element (None when always true)."""
        if lay is None or lay.exact:
            return None
        return self.b.icmp_unsigned("<", self.raw_index(lay, slot), self.i32(lay.numel))

    def multi_index(self, shape, flat):
        """Row-major multi-index of a flat i32 index (a list of i32 values)."""
        out = []
        for d in reversed(shape[1:]):
            out.append(self.b.urem(flat, self.i32(d)))
            flat = self.b.udiv(flat, self.i32(d))
        out.append(flat)
        return out[::-1]

    def flat_index(self, shape, idx):
        acc = None
        for d, i in zip(shape, idx):
            acc = i if acc is None else self.b.add(self.b.mul(acc, self.i32(d)), i)
        return acc if acc is not None else self.i32(0)

    # ---- small helpers ---------------------------------------------------------
    def i32(self, v):
        return ir.Constant(T.I32, int(v))

    def intrinsic(self, name: str, ret, args):
        return declare(self.module, name, ret, list(args))   # one per module, shared with backends/llvm

    def call(self, name, ret, args, argtypes=None):
        fn = self.intrinsic(name, ret, argtypes or [a.type for a in args])
        return self.b.call(fn, list(args))

    def sreg(self, name):
        return self.call(f"llvm.nvvm.read.ptx.sreg.{name}", T.I32, [])

    def barrier(self):
        self.call("llvm.nvvm.barrier.cta.sync.aligned.all", T.VOID, [self.i32(0)])

    def shfl_xor(self, v, mask: int):
        """Butterfly shuffle of any scalar LLVM value up to 64 bits."""
        ty = v.type
        bits = ty.width if isinstance(ty, ir.IntType) else {T.F16: 16, T.BF16: 16, T.F32: 32, T.F64: 64}[ty]
        as_int = v if isinstance(ty, ir.IntType) else self.b.bitcast(v, ir.IntType(bits))
        parts = []
        if bits == 64:
            lo = self.b.trunc(as_int, T.I32)
            hi = self.b.trunc(self.b.lshr(as_int, ir.Constant(T.I64, 32)), T.I32)
            parts = [lo, hi]
        else:
            parts = [as_int if bits == 32 else self.b.zext(as_int, T.I32)]
        outs = [self.call("llvm.nvvm.shfl.sync.bfly.i32", T.I32,
                          [self.i32(-1), p, self.i32(mask), self.i32(31)]) for p in parts]
        if bits == 64:
            lo, hi = (self.b.zext(o, T.I64) for o in outs)
            r = self.b.or_(lo, self.b.shl(hi, ir.Constant(T.I64, 32)))
        else:
            r = outs[0] if bits == 32 else self.b.trunc(outs[0], ir.IntType(bits))
        return r if isinstance(ty, ir.IntType) else self.b.bitcast(r, ty)

    # ---- shared memory -----------------------------------------------------------
    def smem(self, nbytes: int, align: int = 16):
        """The dynamic shared-memory base (``ptr addrspace(3)``); reserves ``nbytes`` and
        aligns the base to ``align`` bytes (1024 for swizzled tensor-core tiles)."""
        self.smem_bytes = max(self.smem_bytes, (nbytes + 15) // 16 * 16)
        if self.smem_window is not None:
            self.smem_window = max(self.smem_window, nbytes)
        if self._smem is None:
            g = ir.GlobalVariable(self.module, ir.ArrayType(T.I8, 0), "tj_smem", addrspace=3)
            g.linkage = "external"
            g.align = 16
            g.type = T.SHARED_PTR      # opaque pointer (llvmlite types globals)
            self._smem = g
        self._smem.align = max(self._smem.align, align)
        return self._smem

    def smem_addr(self, base, byte_offset):
        return self.b.gep(base, [byte_offset], source_etype=T.I8)

    def _finish_smem(self):
        pass

    # ---- structured loops ---------------------------------------------------------
    def counted_loop(self, n: int, body, carried):
        """Emit ``for k in range(n)`` (n >= 1) with loop-carried LLVM values; ``body(k, vals)``
        returns the next values.  Returns the final values (backends/llvm's counted loop)."""
        return counted_loop(self.b, self.kernel, self.i32(0), self.i32(n), body, carried=carried,
                            name="cl", nonempty=True)

    def guarded(self, cond, fn):
        """Run ``fn()`` (emitting code, returning nothing) only where ``cond`` holds."""
        if cond is None:
            fn()
            return
        then = self.kernel.append_basic_block("g.then")
        done = self.kernel.append_basic_block("g.done")
        self.b.cbranch(cond, then, done)
        self.b.position_at_end(then)
        fn()
        self.b.branch(done)
        self.b.position_at_end(done)


def lower_function(func, arch: int, num_warps: int = 4, facts=None, vectorize=True):
    """Lower ``func``; returns (LLVM IR text, shared-memory bytes)."""
    lw = lower_kernel(func, arch, num_warps, facts, vectorize)
    return lw.text, lw.smem_bytes


def _default_tuning():
    from ...runtime.options import CudaTuning
    return CudaTuning()


def lower_kernel(func, arch: int, num_warps: int = 4, facts=None, vectorize=True, sanitize=False,
                 tuning=None, fp_fusion=True, reflect_ftz=True):
    """Lower ``func``; returns the :class:`Lowering` (``text``, ``smem_bytes``; for
    sanitize mode and asserts ``reports``, ``accesses``, ``asserts``: see sanitize.py).
    ``tuning``: the ``CudaTuning`` (runtime/options.py; default: as shipped);
    ``fp_fusion`` / ``reflect_ftz``: the kernel's ``enable_fp_fusion`` /
    ``enable_reflect_ftz`` (runtime/options.py ``launch_choice``)."""
    from . import rules_elementwise, rules_memory, rules_tiles, rules_reduce, rules_control  # noqa: F401
    from . import rules_atomic, rules_inline_asm  # noqa: F401
    from . import rules_combine_reduce  # noqa: F401  (tt.combine_reduce)
    from . import rules_gather  # noqa: F401  (tt.gather, tt.histogram)
    lw = Lowering(func, arch, num_warps, facts, vectorize, sanitize, tuning, fp_fusion, reflect_ftz)
    lw.text = lw.lower()
    return lw
