"""torch.compile with Inductor's Triton CPU backend, run as `python -m tilejit run`
(prints SKIP when torch is not installed): Inductor's generated Triton kernels are
compiled and launched by tilejit; the result is compared with eager torch."""
import sys

try:
    import torch
except ImportError:
    print("SKIP torch_compile_cpu: torch not installed")
    sys.exit(0)
from torch._inductor.utils import run_and_get_code


def block(x, w):
    h = torch.nn.functional.layer_norm(x, (x.shape[-1],)) @ w
    return torch.softmax(torch.nn.functional.gelu(h), dim=-1).sum(0)


torch.manual_seed(0)
x, w = torch.randn(32, 64), torch.randn(64, 48)
compiled = torch.compile(block, options={"cpu_backend": "triton"})
out, code = run_and_get_code(compiled, x, w)
assert "@triton.jit" in "".join(code), "Inductor generated no Triton kernels"
torch.testing.assert_close(out, block(x, w), rtol=1e-4, atol=1e-5)
print("PASS torch_compile_cpu")
