"""The Triton language as tilejit compiles it: ``import tilejit.language as tl``.

dtypes and ``constexpr`` come from ``core``; builtins from ``standard`` and ``math``;
Philox random numbers from ``random``.  Type and shape rules live in ``semantic``.
"""
from .core import (constexpr, const, tensor, dtype, pointer_type, pi32_t, block_type, void, int1, int8, int16, int32,
                   int64, uint8, uint16, uint32, uint64, float16, bfloat16, float32, float64,
                   float8e5, float8e4nv, float8e4b15, float8e4b8, float8e5b16, is_builtin, PropagateNan,
                   constexpr_type)
from .standard import (program_id, num_programs, arange, full, zeros, zeros_like, full_like, to_tensor,
                       cast, broadcast_to, broadcast, reshape, view, ravel, expand_dims, permute, trans, join, split, interleave, cat, flip, sort, topk,
                       load, store, where, minimum, maximum, clamp, cdiv, sigmoid, softmax, add, sub, mul,
                       fdiv, reduce, map_elementwise, cumsum, sum, max, min, argmax, argmin, xor_sum, dot, dot_scaled, multiple_of, max_contiguous,
                       max_constancy, assume, debug_barrier, range, condition, static_range, static_assert, static_print,
                       device_assert, device_print)
from .math import (exp, exp2, log, log2, sqrt, rsqrt, sin, cos, floor, ceil, erf, tanh, abs, fma, umulhi,
                   div_rn, sqrt_rn)
from . import math
from .scan import cumprod, associative_scan, histogram, gather
from .inline_asm import inline_asm_elementwise
from .blockptr import (block_ptr, make_block_ptr, advance, tensor_descriptor, make_tensor_descriptor,
                       load_tensor_descriptor, store_tensor_descriptor)
from .atomic import (atomic_add, atomic_max, atomic_min, atomic_and, atomic_or, atomic_xor, atomic_xchg,
                     atomic_cas)
from . import extra
from .helpers import swizzle2d
from . import semantic
from .core import str_to_ty
from .tuples import tuple  # noqa: A004 - Triton's tl.tuple
from .random import (randint, randint4x, rand, rand4x, randn, randn4x, philox, philox_impl,
                     pair_uniform_to_normal, uint_to_uniform_float)

TRITON_MAX_TENSOR_NUMEL = 1 << 20


__all__ = [n for n in dir() if not n.startswith("_")]
