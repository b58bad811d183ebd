"""Binding a host ``TensorDescriptor`` kernel argument (tilejit/tools/tensor_descriptor.py).

One descriptor parameter becomes several IR arguments: the base pointer, then each
shape entry and each stride (``tilejit.language.blockptr.descriptor_arg``).  Its key
is ``("tensordesc<*dtype[block]>", (base spec, *int keys), device, (base type name,
int keys, block shape, padding))``: the first three read like an array's key (the
recompile log, the device check), the fourth carries what the IR needs.  The fast
launch lanes do not know the type and send such launches to the general path.
"""
from __future__ import annotations

from .launch import _bind_int, binder_for


def _dims(values, what):
    out = []
    for v in values:
        try:
            i = int(v)
        except (TypeError, ValueError):
            raise TypeError(f"descriptor {what} must be ints, got {v!r}") from None
        if i != v:
            raise TypeError(f"descriptor {what} must be ints, got {v!r}")
        out.append(i)
    return out


def bind_descriptor(desc, spec):
    """(key, launch values, ArrayInfo) of a TensorDescriptor argument."""
    rank = len(desc.shape)
    shape, strides = _dims(desc.shape, "shape"), _dims(desc.strides, "strides")
    block = _dims(desc.block_shape, "block_shape")
    if len(strides) != rank or len(block) != rank:
        raise ValueError(f"descriptor rank mismatch: shape {shape}, strides {strides}, "
                         f"block_shape {block}")
    if strides[-1] != 1:
        raise ValueError(f"descriptor's last stride must be 1, got strides {strides}")
    if any(b <= 0 for b in block):
        raise ValueError(f"descriptor block_shape must be positive, got {block}")
    if any(s < 0 for s in shape):
        raise ValueError(f"descriptor shape must be non-negative, got {shape}")
    b = binder_for(type(desc.base))
    if b is None:
        raise TypeError(f"descriptor base has unsupported type {type(desc.base).__qualname__}")
    base_key, addr, info = b(desc.base, spec)
    if info is None:
        raise TypeError("descriptor base must be an array, got a scalar")
    ints = [_bind_int(v, spec) for v in shape + strides]
    int_keys = tuple(k for k, _, _ in ints)
    name = f"tensordesc<{base_key[0]}{block}>"
    key = (name, (base_key[1],) + tuple(k[1] for k in int_keys), base_key[2],
           (base_key[0], int_keys, tuple(block), desc.padding))
    return key, [addr] + [v for _, v, _ in ints], info


def descriptor_arg_from_key(key):
    """The ``descriptor_arg`` build_ir expands for a descriptor key."""
    from ..language.blockptr import descriptor_arg
    base_type, int_keys, block, padding = key[3]
    return descriptor_arg(base_type, key[1][0], int_keys, block, padding)


def is_descriptor_key(key) -> bool:
    return isinstance(key[0], str) and key[0].startswith("tensordesc<")
