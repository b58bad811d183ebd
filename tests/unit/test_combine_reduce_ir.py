"""``tt.combine_reduce`` in the IR: text round trip, the verifier's checks of its combine
region, and the interpreter's order (a pairwise tree) on a non-associative combine."""
import numpy as np
import pytest

from tilejit.ir import TileType, int64
from tilejit.ir.parser import parse_function
from tilejit.ir.printer import print_function
from tilejit.ir.verifier import VerificationError, verify_function

ARGMAX = """\
tt.func @k(%x: *fp32) {
  %r = tt.make_range {start = 0, end = 8} : <8xi32>
  %p = tt.splat %x {shape = (8,)} : <8x*fp32>
  %q = tt.addptr %p, %r : <8x*fp32>
  %v = tt.load %q : <8xfp32>
  %m, %i = tt.combine_reduce %v, %r {axis = 0} : (fp32, i32) (
    {
    ^bb0(%a: fp32, %ai: i32, %b: fp32, %bi: i32):
      %c = arith.cmp %a, %b {pred = "ge"} : i1
      %s = arith.select %c, %a, %b : fp32
      %t = arith.select %c, %ai, %bi : i32
      scf.yield %s, %t
    }
  )
  tt.return
}
"""


def test_round_trip_and_verify():
    f = parse_function(ARGMAX)
    verify_function(f)
    text = print_function(f)
    g = parse_function(text)
    assert print_function(g) == text
    assert "tt.combine_reduce" in text


def _op(f):
    return next(o for o in f.walk() if o.name == "tt.combine_reduce")


def _args_of_another_type(op):
    op.body.args[3].type = TileType(int64)


def _one_value_yielded(op):
    term = op.body.ops[-1]
    term.slots["values"] = term.slots["values"][:1]


def _axis_out_of_range(op):
    op.attrs["axis"] = 1


@pytest.mark.parametrize("breaks,needle", [
    (_args_of_another_type, "combine arguments"),       # block args: 2N scalars of the srcs' types
    (_one_value_yielded, "combine yield"),              # N values yielded
    (_axis_out_of_range, "axis 1 out of range"),
])
def test_verifier_rejects(breaks, needle):
    f = parse_function(ARGMAX)
    breaks(_op(f))
    with pytest.raises(VerificationError) as info:
        verify_function(f)
    assert needle in str(info.value), str(info.value)


def test_verifier_rejects_side_effects_in_the_region():
    text = ARGMAX.replace("      scf.yield %s, %t", '      tt.assert %c {msg = "x"}\n      scf.yield %s, %t')
    with pytest.raises(VerificationError) as info:
        verify_function(parse_function(text))
    assert "pure" in str(info.value)


def test_interpreter_order_is_the_pairwise_tree():
    """combine(a, b) = 3a + b is neither commutative nor associative: only the documented
    order (round r pairs x[i], x[i + 2**r], i = 0, 2**(r+1), ...) gives this value."""
    import tilejit
    import tilejit.language as tl

    @tilejit.jit
    def poly(a, b):
        return a * 3 + b

    @tilejit.jit
    def k(x_ptr, out_ptr, N: tl.constexpr):
        tl.store(out_ptr, tl.reduce(tl.load(x_ptr + tl.arange(0, N)), 0, poly))

    from tilejit.runtime.options import use_options
    for n in (2, 4, 8, 16):
        x = np.arange(1, n + 1, dtype=np.int64)
        out = np.zeros(1, np.int64)
        with use_options(backend="interpreter", interpret=True):
            k[(1,)](x, out, N=n)
        v = list(x)
        while len(v) > 1:                   # the tree of adjacent pairs, round by round
            v = [3 * v[j] + v[j + 1] for j in range(0, len(v), 2)]
        assert out[0] == v[0]
