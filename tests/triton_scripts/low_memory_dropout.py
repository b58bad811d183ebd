"""Triton tutorial 04 (low-memory dropout): the seeded kernel, unchanged, on torch CPU tensors."""
import sys

import triton
import triton.language as tl

try:
    import torch
except ImportError:
    print("SKIP low_memory_dropout: torch not installed")
    sys.exit(0)

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def _seeded_dropout(
    x_ptr,
    output_ptr,
    n_elements,
    p,
    seed,
    BLOCK_SIZE: tl.constexpr,
):
    # compute memory offsets of elements handled by this instance
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    # load data from x
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    # randomly prune it
    random = tl.rand(seed, offsets)
    x_keep = random > p
    # write-back
    output = tl.where(x_keep, x / (1 - p), 0.0)
    tl.store(output_ptr + offsets, output, mask=mask)


def seeded_dropout(x, p, seed):
    output = torch.empty_like(x)
    assert x.is_contiguous()
    n_elements = x.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta['BLOCK_SIZE']), )
    _seeded_dropout[grid](x, output, n_elements, p, seed, BLOCK_SIZE=1024)
    return output


torch.manual_seed(0)
x = torch.randn(size=(10000, ), device=DEVICE)
p = 0.5
output = seeded_dropout(x, p=p, seed=123)
output2 = seeded_dropout(x, p=p, seed=123)
output3 = seeded_dropout(x, p=p, seed=512)
assert torch.equal(output, output2), "same seed, same mask"
assert not torch.equal(output, output3), "different seed, different mask"
kept = output != 0
assert torch.equal(output[kept], x[kept] / (1 - p))
frac = kept.float().mean().item()
assert abs(frac - (1 - p)) < 0.03, frac
# the random numbers are Philox's: independent of the block size and the program split
out_small = torch.empty_like(x)
_seeded_dropout[(triton.cdiv(x.numel(), 256), )](x, out_small, x.numel(), p, 123, BLOCK_SIZE=256)
assert torch.equal(out_small, output)
print("PASS low_memory_dropout")
