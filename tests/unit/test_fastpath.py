"""The generated fast binder must compute exactly the general path's cache key."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.runtime.fastpath import make_fast_binder
from tilejit.runtime.launcher import Launcher
from tilejit.runtime.options import use_options


@tilejit.jit
def _scale(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr, FLAG: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m) * factor
    if FLAG:
        v = v + 1
    tl.store(out_ptr + offs, v, mask=m)


def _general_key(launcher, vals):
    keys, values, _bufs, consts, _dev = launcher.bind_values(list(vals))
    return tuple(keys), tuple(consts), values


CASES = [
    lambda x, o: (x, o, 32, 2.0, 16, True),        # n % 16 == 0, aligned arrays
    lambda x, o: (x, o, 1, 2.0, 16, False),        # n == 1
    lambda x, o: (x, o, 33, 2.0, 16, 1),           # FLAG=1 (an int, not True)
    lambda x, o: (x[1:], o[1:], 31, 3.0, 16, 1.0),  # misaligned views, FLAG=1.0
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_fast_binder_matches_general_binding(case):
    launcher = Launcher(_scale)
    fast = make_fast_binder(launcher.plan)
    x = np.arange(64, dtype=np.float32)
    o = np.zeros_like(x)
    vals = CASES[case](x, o)
    keys, consts, values, raw, on_gpu = fast(vals)
    gkeys, gconsts, gvalues = _general_key(launcher, vals)
    assert keys == gkeys and consts == gconsts and values == gvalues
    assert [r[1] for r in raw] == values[:2] and not on_gpu


def test_fast_binder_matches_general_binding_for_torch_tensors():
    torch = pytest.importorskip("torch")
    launcher = Launcher(_scale)
    fast = make_fast_binder(launcher.plan)
    for dtype in (torch.float32, torch.float16, torch.int64, torch.bool):
        x = torch.zeros(64, dtype=dtype)
        for vals in ((x, x, 32, 2.0, 16, True), (x[1:], x[1:], 7, 1.5, 16, 3)):
            keys, consts, values, raw, on_gpu = fast(vals)
            assert (keys, consts, values) == _general_key(launcher, vals) and not on_gpu
            assert raw[0] == ("x_ptr", x.data_ptr() + (vals[0].data_ptr() - x.data_ptr()),
                              vals[0].nbytes, vals[0].element_size())
    assert fast((x.view(8, 8).t(), x, 8, 1.0, 16, True)) is None    # non-contiguous: general path
    assert fast((x, np.zeros(4, np.float32), 8, 1.0, 16, True)) is not None   # both on the host


def test_fast_binder_declines_unusual_arguments():
    fast = make_fast_binder(Launcher(_scale).plan)
    x = np.zeros(8, np.float32)
    assert fast((x, x, 2 ** 40, 1.0, 16, True)) is None            # i64 scalar
    assert fast((x, x, 8, 1.0, tl.constexpr(16), True)) is None     # wrapped constexpr
    assert fast((x, x, None, 1.0, 16, True)) is None                # None argument


@pytest.mark.parametrize("backend_name", ["interpreter", "cpu"])
def test_fast_and_general_paths_give_the_same_results(backend_name):
    if backend_name not in tilejit.backends.available_backends():
        pytest.skip("backend not available")
    with use_options(backend=backend_name, interpret=backend_name == "interpreter"):
        x = np.random.default_rng(0).random(100).astype(np.float32)
        results = []
        for flag in (True, False, True, 1.0):          # 1st: general path; later: fast path
            o = np.full_like(x, np.nan)
            _scale[(7,)](x, o, 100, 2.0, BLOCK=16, FLAG=flag)
            results.append(o)
        np.testing.assert_array_equal(results[0], x * 2 + 1)
        np.testing.assert_array_equal(results[1], x * 2)
        np.testing.assert_array_equal(results[2], results[0])
        np.testing.assert_array_equal(results[3], results[0])


def test_launch_options_take_the_fast_path_with_the_general_paths_key(monkeypatch):
    """``kernel[grid](..., num_warps=8)`` (Triton's tutorials, Liger-Kernel): after the
    first launch, repeats skip the general path; the options stay in the cache key, so
    another ``num_warps`` compiles (and runs) its own kernel."""
    x = np.random.default_rng(1).random(100).astype(np.float32)
    general = []
    real = Launcher.call_general

    def counting(self, *a, **k):
        general.append(self.name)
        return real(self, *a, **k)
    monkeypatch.setattr(Launcher, "call_general", counting)
    with use_options(backend="cpu"):
        kernels = []
        for warps in (8, 8, 8, 4, 4, 8):
            o = np.full_like(x, np.nan)
            kernels.append(_scale[(7,)](x, o, 100, 2.0, BLOCK=16, FLAG=True, num_warps=warps))
            np.testing.assert_array_equal(o, x * 2 + 1)
    assert general == ["_scale", "_scale"], general         # the first launch of each num_warps
    assert kernels[0] is kernels[1] is kernels[2] is kernels[5] and kernels[3] is kernels[4]
    assert kernels[3] is not kernels[0]


def test_fast_bind_takes_launch_options_only():
    launcher = Launcher(_scale)
    x = np.zeros(8, np.float32)
    args = (x, x, 8, 1.0)
    vals, lopts = launcher._fast_bind(args, {"BLOCK": 16, "FLAG": True, "num_stages": 2, "num_warps": 8})
    assert vals == args + (16, True) and lopts == (("num_warps", 8), ("num_stages", 2))
    assert launcher._fast_bind(args, {"BLOCK": 16, "FLAG": True, "stream": 0}) is None     # general path
    assert launcher._fast_bind(args, {"BLOCK": 16, "num_warps": 8}) is None               # FLAG missing
    assert launcher._fast_bind(args + (16,), {"BLOCK": 16, "FLAG": 1}) is None            # BLOCK twice
    assert launcher._fast_bind(args + (16, True), {"num_warps": 2}) == (args + (16, True), (("num_warps", 2),))
    assert launcher._fast_bind(args + (16, True, 0), {}) == (args + (16, True, 0), ())     # the caller checks
