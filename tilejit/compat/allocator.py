"""``triton.set_allocator`` under the Triton alias: accepted and ignored.

Triton needs a scratch allocator for tensor descriptors made inside a kernel on
CUDA (``tl.make_tensor_descriptor`` writes a TMA descriptor to global memory);
tilejit lowers descriptors to masked pointer tiles and needs no scratch memory.
"""


def set_allocator(allocator):
    """Accepted for Triton scripts; tilejit needs no scratch memory (no effect)."""
    if allocator is not None and not callable(allocator):
        raise TypeError("set_allocator expects a callable (size, alignment, stream) -> buffer")


class NullAllocator:
    """Triton's default allocator (``triton.runtime._allocation.NullAllocator``): calling
    it is an error; ``triton.set_allocator(NullAllocator())`` restores the default."""

    def __call__(self, size: int, alignment: int, stream):
        raise RuntimeError("Kernels that require device memory for scratch space need an "
                           "allocator. Use triton.set_allocator to specify an allocator.")
