"""``triton.set_allocator`` under the Triton alias: accepted and ignored.

Triton needs a scratch allocator for tensor descriptors made inside a kernel on
CUDA (``tl.make_tensor_descriptor`` writes a TMA descriptor to global memory);
tilejit lowers descriptors to masked pointer tiles and needs no scratch memory.
"""


def set_allocator(allocator):
    """Accepted for Triton scripts; tilejit needs no scratch memory (no effect)."""
    if allocator is not None and not callable(allocator):
        raise TypeError("set_allocator expects a callable (size, alignment, stream) -> buffer")
