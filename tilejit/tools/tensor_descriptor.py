"""Host-side tensor descriptors: ``TensorDescriptor(base, shape, strides, block_shape)``.

Passed as a kernel argument, a descriptor arrives in the kernel as a
``tl.tensor_descriptor`` (``desc.load(offsets)``, ``desc.store(offsets, value)``):
its base pointer, shape and strides are runtime values, its block shape, padding
and element type part of the specialization (runtime/descriptors.py).  The fields
are plain attributes, so an autotune ``pre_hook`` may set ``desc.block_shape``
before each launch (Triton's fused-attention tutorial does).  ``base`` is any array
tilejit accepts (numpy, torch, cupy, ...); shape and strides are in elements and the
last stride must be 1.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List

__all__ = ["TensorDescriptor"]


@dataclass
class TensorDescriptor:
    base: Any
    shape: List[int]
    strides: List[int]
    block_shape: List[int]
    padding: str = "zero"

    def __post_init__(self):
        rank = len(self.shape)
        if not 1 <= rank <= 5:
            raise ValueError(f"TensorDescriptor: rank must be 1 to 5, got {rank}")
        if len(self.strides) != rank or len(self.block_shape) != rank:
            raise ValueError(f"TensorDescriptor: shape, strides and block_shape must have one "
                             f"entry per dimension (rank mismatch: {list(self.shape)}, "
                             f"{list(self.strides)}, {list(self.block_shape)})")
        if int(self.strides[-1]) != 1:
            raise ValueError(f"TensorDescriptor: the last dimension must be contiguous "
                             f"(last stride 1), got strides {list(self.strides)}")
        if self.padding not in ("zero", "nan"):
            raise ValueError(f"TensorDescriptor: padding must be 'zero' or 'nan', got "
                             f"{self.padding!r}")

    @staticmethod
    def from_tensor(tensor: Any, block_shape: List[int], padding: str = "zero"):
        """A descriptor over all of ``tensor`` (torch: ``tensor.stride()``; numpy:
        ``strides`` divided by the item size)."""
        stride = getattr(tensor, "stride", None)
        if callable(stride):
            strides = list(stride())
        else:
            strides = [s // tensor.itemsize for s in tensor.strides]
        return TensorDescriptor(tensor, list(tensor.shape), strides, block_shape, padding)
