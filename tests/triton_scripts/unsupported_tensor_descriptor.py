"""Uses a Triton feature tilejit lacks: `python -m tilejit run` must say which (exit 2)."""
import triton
from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: F401

print("should not get here")
