"""``tl.static_print`` of a tensor prints Triton's text for it (``str(tensor)``:
``int32[constexpr[128]]``, what Triton's test_subprocess.py::test_print[static_print]
expects), while compiling, and the kernel still runs."""
import uuid

import numpy as np

import tilejit
import tilejit.language as tl


@tilejit.jit
def static_print_kernel(X, Y, BLOCK: tl.constexpr, PLACEHOLDER: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.static_print("", x)
    tl.static_print("2d", tl.reshape(x, (2, BLOCK // 2)).to(tl.float16), tl.sum(x))
    tl.store(Y + tl.arange(0, BLOCK), x + 1)


def test_static_print_tensor_text(backend, capsys):
    x = np.arange(16, dtype=np.int32)
    y = np.zeros_like(x)
    static_print_kernel[(1,)](x, y, BLOCK=16, PLACEHOLDER=str(uuid.uuid4()))
    out = capsys.readouterr().out.splitlines()
    assert " int32[constexpr[16]]" in out, out
    assert "2d fp16[constexpr[2], constexpr[8]] int32[]" in out, out
    np.testing.assert_array_equal(y, x + 1)
