"""``tl.device_print`` / ``print`` lines in Triton's format on the compiled backends
(``pid (x, y, z) idx (i, j)<prefix>(operand n) <value>``, the prefix shaped as Triton's
semantic layer shapes it, the index fields as wide as the dimension's largest index) --
the lines Triton's own test_subprocess.py::test_print expects, the same on every backend
(the interpreter included).  A ``%`` in the prefix is printed as itself (it was a printf
conversion reading an argument never passed: a crash on the cpu backend)."""
from collections import Counter

import numpy as np

import tilejit
import tilejit.language as tl

N = 64
NUM_WARPS = 2


@tilejit.jit
def print_kernel(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.device_print("x ", x)                                  # -> " x: "
    print("", x, tl.full((BLOCK,), 1, tl.int32))              # -> ": (operand n) "
    tl.device_print("h", x, hex=True)                         # -> " h: 0x%04x"
    tl.device_print("", tl.reshape(x, (4, BLOCK // 4)))       # 2-D indices
    print("s:", tl.load(X + 3))                               # a scalar: idx ()
    print("no arg")                                           # no operands
    tl.device_print("p%d%s", x > 0, x.to(tl.uint16) + 65000)  # '%' literal; bool; uint
    tl.device_print("f", x.to(tl.float16) / 4)                # halves as %f


def _lines(capfd):
    return Counter(line for line in capfd.readouterr().out.splitlines() if line.startswith("pid ("))


def test_device_print_lines(backend, capfd):
    x = (np.arange(N) - 3).astype(np.int16)
    print_kernel[(1,)](x, BLOCK=N, num_warps=NUM_WARPS)
    got = _lines(capfd)
    want = Counter()
    for i, v in enumerate(x):
        want[f"pid (0, 0, 0) idx ({i:2}) x: {v}"] += 1
        want[f"pid (0, 0, 0) idx ({i:2}): (operand 0) {v}"] += 1
        want[f"pid (0, 0, 0) idx ({i:2}): (operand 1) 1"] += 1
        want[f"pid (0, 0, 0) idx ({i:2}) h: 0x{int(v) & 0xffff:04x}"] += 1
        want[f"pid (0, 0, 0) idx ({i // 16}, {i % 16:2}): {v}"] += 1
        want[f"pid (0, 0, 0) idx ({i:2}) p%d%s: (operand 0) {int(v > 0)}"] += 1
        want[f"pid (0, 0, 0) idx ({i:2}) p%d%s: (operand 1) {(int(v) + 65000) % 65536}"] += 1
        want[f"pid (0, 0, 0) idx ({i:2}) f: {v / 4:f}"] += 1
    # a scalar (and a print without operands) is printed by every thread on CUDA, as in Triton
    copies = NUM_WARPS * 32 if backend == "cuda" else 1
    want["pid (0, 0, 0) idx () s: 0"] = copies
    want["pid (0, 0, 0) no arg"] = copies
    assert got == want, (got - want, want - got)
