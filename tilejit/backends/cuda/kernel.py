"""One kernel's lowering, in order: :func:`lower_kernel` makes every decision first
(``plan.plan_kernel``: the ``cuda-plan`` stage), lowers the ops with the rules (the
``rules_*`` modules, imported here so that they register in ``lowering.RULES``; a row
region's ops by ``mma_rows.lower_region``), then caps the registers
(``occupancy.cap_registers``).  ``lowering.Lowering`` itself imports none of them."""
from __future__ import annotations

from . import (rules_atomic, rules_combine_reduce, rules_control, rules_elementwise,  # noqa: F401
               rules_gather, rules_inline_asm, rules_memory, rules_reduce,            # (they register)
               rules_tiles)
from .lowering import Lowering, Tile
from .mma_rows import TransposedLayout, lower_region, transposed_to_flat
from .occupancy import cap_registers
from .plan import plan_kernel
from .rules_mma import to_flat


def flatten(lw, tile: Tile, value) -> Tile:
    """``tile`` of ``value``, held in an mma or transposed layout, in its blocked layout."""
    if isinstance(tile.layout, TransposedLayout):
        return transposed_to_flat(lw, tile, value.type.shape, value.type.element)
    return to_flat(lw, tile)


def lower_kernel(func, arch: int, num_warps: int = 4, facts=None, vectorize=True, sanitize=False,
                 tuning=None, fp_fusion=True, reflect_ftz=True) -> Lowering:
    """Lower ``func``; returns the :class:`~.lowering.Lowering` (``text``, ``smem_bytes``,
    ``plan``; for sanitize mode and asserts ``reports``, ``accesses``, ``asserts``: see
    sanitize.py).  ``tuning``: the ``CudaTuning`` (runtime/options.py; default: as
    shipped); ``fp_fusion`` / ``reflect_ftz``: the kernel's ``enable_fp_fusion`` /
    ``enable_reflect_ftz`` (runtime/options.py ``launch_choice``)."""
    lw = Lowering(func, arch, num_warps, facts, vectorize, sanitize, tuning, fp_fusion, reflect_ftz,
                  region_rule=lower_region, flatten=flatten)
    lw.begin()
    lw.remat = plan_kernel(lw).remat    # every decision first (plan.py)
    lw.lower_block(func.block)
    cap_registers(lw)                   # two CTAs per SM for wgmma-ring kernels (occupancy.py)
    lw.plan.reg_cap = lw.reg_cap
    lw.text = lw.finish()
    return lw
