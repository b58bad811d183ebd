"""Uses a Triton feature tilejit lacks: `python -m tilejit run` must say which (exit 2)."""
import triton
import triton.language as tl

print(tl.bitonic_merge)
print("should not get here")
