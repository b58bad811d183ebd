"""Triton tutorial 01 (vector addition), numpy arrays instead of torch tensors."""
import numpy as np
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


def add(x, y):
    output = np.empty_like(x)
    n_elements = output.size
    grid = lambda meta: (triton.cdiv(n_elements, meta['BLOCK_SIZE']), )
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024)
    return output


rng = np.random.default_rng(0)
size = 98432
x = rng.random(size, dtype=np.float32)
y = rng.random(size, dtype=np.float32)
output = add(x, y)
triton.testing.assert_close(output, x + y, atol=0, rtol=0)
ms = triton.testing.do_bench(lambda: add(x, y), warmup=1, rep=5)
assert ms > 0
print(f"max difference {np.max(np.abs(output - (x + y)))}")
print("PASS vector_add")
