"""The express lane (runtime/express.py) must pick the kernel the general rules pick.

Two kinds of checks: the express key separates argument tuples exactly where the
launcher's cache key does (pairwise, no backend needed); and end to end on the
CPU backend, every launch through ``kernel[grid]`` returns the very kernel object
the general rules file under that launch's key, with the right results, while
arguments, constexprs, options and backends change between launches.
"""
import ctypes
import threading

import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends import available_backends
from tilejit.runtime import express
from tilejit.runtime.launch import choose_backend
from tilejit.runtime.launcher import _OPTION_TOKENS, Launcher
from tilejit.runtime.options import get_options, set_options, use_options

needs_cpu = pytest.mark.skipif("cpu" not in available_backends(), reason="cpu backend unavailable")


def _axpb(x_ptr, out_ptr, n, a, BLOCK: tl.constexpr, SHIFT: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m) * a
    if SHIFT:
        v = v + 1
    tl.store(out_ptr + offs, v, mask=m)


def _fresh():
    return tilejit.jit(_axpb)


def _general_key(launcher, vals):
    keys, _values, _bufs, consts, _dev = launcher.bind_values(list(vals))
    return tuple(keys), tuple(consts)


def _variants():
    x = np.arange(64, dtype=np.float32)
    buf = np.zeros(80, np.float64)
    return [
        (x, x, 32, 2.0, 16, True), (x, x, 1, 2.0, 16, True), (x, x, 33, 2.0, 16, True),
        (x, x, 2 ** 31, 2.0, 16, True), (x, x, 2 ** 32, 2.0, 16, True), (x, x, -16, 2.0, 16, True),
        (x[1:], x, 32, 2.0, 16, True), (x[4:], x[4:], 32, 2.0, 16, True), (x[::2], x, 32, 2.0, 16, True),
        (buf, buf, 32, 2.0, 16, True), (buf[2:], buf, 32, 2.0, 16, True), (x.astype(np.int32), x, 32, 2.0, 16, True),
        (x, x, 32, 2, 16, True), (x, x, 32, 1, 16, True), (x, x, 32, True, 16, True), (x, x, 32, 2.0, 32, True),
        (x, x, 32, 2.0, 16, 1), (x, x, 32, 2.0, 16, 1.0), (x, x, 32, 2.0, 16, False), (x, x, 32, 2.0, 16, 0),
        (x, x, 32, 2.0, 16, "a"), (x, x, 32, 2.0, 16, None), (x, x, 32, 2.0, 16.0, True),
        (np.frombuffer(bytes(64), np.float32), x, 32, 2.0, 16, True),
    ]


def test_express_key_separates_exactly_what_the_cache_key_separates():
    launcher = Launcher(_fresh())
    key_of = express.make_key_function(launcher.plan)
    vs = _variants()
    gkeys = [_general_key(launcher, v) for v in vs]
    ekeys = [key_of(v) for v in vs]
    assert None not in ekeys
    for i in range(len(vs)):
        for j in range(len(vs)):
            assert (ekeys[i] == ekeys[j]) == (gkeys[i] == gkeys[j]), (i, j, gkeys[i], gkeys[j])


def test_without_the_pointer_read_the_key_falls_back_to_from_buffer(monkeypatch):
    monkeypatch.setattr(express, "DATA_OFFSET", None)
    launcher = Launcher(_fresh())
    key_of = express.make_key_function(launcher.plan)
    vs = [v for v in _variants() if v[0].flags.c_contiguous and v[0].flags.writeable]
    gkeys = [_general_key(launcher, v) for v in vs]
    for i in range(len(vs)):
        for j in range(len(vs)):
            assert (key_of(vs[i]) == key_of(vs[j])) == (gkeys[i] == gkeys[j])
    x = np.arange(8, dtype=np.float32)
    assert key_of((x[::2], x, 4, 1.0, 16, True)) is None          # the launcher binds these
    assert key_of((np.frombuffer(bytes(32), np.float32), x, 4, 1.0, 16, True)) is None


def test_lazy_buffers_are_the_general_paths_buffers():
    launcher = Launcher(_fresh())
    for vals in _variants():
        if vals[2] != 32 or vals[5] is None:
            continue
        keys, values, bufs, _consts, _dev = launcher.bind_values(list(vals))
        lazy = express.LazyArgs(values, vals, launcher.names)
        assert lazy.buffers == bufs and list(lazy.keepalive) == list(vals)


def test_express_key_declines_what_the_general_rules_must_bind():
    key_of = express.make_key_function(Launcher(_fresh()).plan)
    x = np.zeros(8, np.float32)
    for vals in [(x, x, 2 ** 64, 1.0, 16, True),            # u64 scalar
                 (x, x, np.int64(3), 1.0, 16, True),          # numpy scalar
                 (x, x, None, 1.0, 16, True),                 # None argument (a constexpr)
                 (x, x, 8, 1.0, tl.constexpr(16), True),      # wrapped constexpr
                 (np.ma.masked_array(x), x, 8, 1.0, 16, True),  # ndarray subclass
                 ([1, 2], x, 8, 1.0, 16, True)]:
        assert key_of(vals) is None


def test_data_pointer_offset_reads_what_numpy_reports():
    assert express.DATA_OFFSET is not None          # CPython: the cheap pointer read is on
    base = np.arange(120, dtype=np.int16).reshape(10, 12)
    read = ctypes.c_size_t.from_address
    for a in (base, base[3:, 5:], base[::-3, ::2], base.T, np.zeros(0), base[5, 5:6]):
        assert read(id(a) + express.DATA_OFFSET).value == a.__array_interface__["data"][0]


def _check_launch(k, x, out, n, a, BLOCK=16, SHIFT=True, grid=None, memory=None):
    """Launch through kernel[grid]; the returned kernel must be the general rules'
    choice for these arguments, and the result right (``memory``: what the kernel
    reads from x's data pointer when x is not contiguous)."""
    out[...] = -7
    got = k[grid or (tilejit.cdiv(max(n, 1), BLOCK),)](x, out, n, a, BLOCK=BLOCK, SHIFT=SHIFT)
    launcher = k._launcher
    opts = get_options()
    key = (*_general_key(launcher, (x, out, n, a, BLOCK, SHIFT)), (), _OPTION_TOKENS[opts],
           choose_backend(opts, "cpu"))
    assert got is launcher.cache[key]
    ref = (x if memory is None else memory)[:n].astype(np.float64) * a + (1 if SHIFT else 0)
    np.testing.assert_allclose(out[:n], ref.astype(out.dtype), rtol=1e-6)
    assert (out[n:] == -7).all()
    return got


@needs_cpu
def test_respecialization_through_the_express_lane():
    k = _fresh()
    base = np.arange(100, dtype=np.float32)
    out = np.zeros(100, np.float32)
    with use_options(backend="cpu"):
        for n in (32, 32, 1, 1, 40, 1, 16):                 # int becoming 1 and back
            _check_launch(k, base, out, n, 2.0)
        aligned = _check_launch(k, base, out, 32, 2.0)
        shifted = _check_launch(k, base[1:], out[1:], 32, 2.0)   # pointer alignment changes
        assert shifted is not aligned
        assert _check_launch(k, base, out, 32, 2.0) is aligned
        _check_launch(k, base[::2], out[:50], 32, 2.0, memory=base)   # non-contiguous
        for dt in (np.float64, np.int32, np.float32):      # dtype changes
            _check_launch(k, base.astype(dt), np.zeros(100, dt), 48, 3)
        _check_launch(k, base, out, 32, 3)                 # float scalar becoming an int
        _check_launch(k, base, out, 32, True)              # ... and a bool
        _check_launch(k, base, out, 2 ** 5, 2.0, SHIFT=False)   # constexprs change
        _check_launch(k, base, out, 32, 2.0, SHIFT=1)
        _check_launch(k, base, out, 64, 2.0, BLOCK=32)
        assert k._launcher.express                      # the lane was used


@needs_cpu
def test_torch_cpu_tensors_take_the_lane_and_numpy_scalars_the_general_path():
    torch = pytest.importorskip("torch")
    k = _fresh()
    x = torch.arange(40, dtype=torch.float32)
    out = torch.zeros(40)
    with use_options(backend="cpu"):
        for _ in range(3):
            k[(3,)](x, out, 40, 2.0, BLOCK=16, SHIFT=False)
            np.testing.assert_array_equal(out.numpy(), x.numpy() * 2)
            k[(3,)](x.numpy(), out.numpy(), np.int32(40), np.float32(3.0), BLOCK=16, SHIFT=False)
            np.testing.assert_array_equal(out.numpy(), x.numpy() * 3)
            k[(3,)](x[1:], out, 39, 2.0, BLOCK=16, SHIFT=False)           # another alignment
            np.testing.assert_array_equal(out.numpy()[:39], x.numpy()[1:] * 2)
        launcher = k._launcher
        assert any(isinstance(key[0], tuple) for key in launcher.express)  # tensors' keys
        for key, run in launcher.express.items():
            if isinstance(key[0], tuple):
                kernel = run([x.data_ptr(), out.data_ptr(), 40, 1.0], (x, out, 40, 1.0, 16, False), 3, 1, 1)
                assert any(kernel is c for c in launcher.cache.values())


def test_express_key_separates_torch_tensors_as_the_cache_key_does():
    torch = pytest.importorskip("torch")
    launcher = Launcher(_fresh())
    key_of = express.make_key_function(launcher.plan)
    x = torch.arange(64, dtype=torch.float32)
    vs = [(x, x, 32, 2.0, 16, True), (x[4:], x, 32, 2.0, 16, True), (x[1:], x, 32, 2.0, 16, True),
          (x.double(), x, 32, 2.0, 16, True), (x.numpy(), x, 32, 2.0, 16, True),
          (x.to(torch.int32), x, 32, 2.0, 16, True), (x[::2], x, 32, 2.0, 16, True)]
    gkeys = [_general_key(launcher, v) for v in vs]
    ekeys = [key_of(v) for v in vs]
    assert None not in ekeys
    for i in range(len(vs)):          # never one entry for two kernels (a numpy array and a
        for j in range(len(vs)):      # tensor alike have two entries for one kernel)
            if ekeys[i] == ekeys[j]:
                assert gkeys[i] == gkeys[j], (i, j)
            elif i != 4 and j != 4:
                assert gkeys[i] != gkeys[j], (i, j)
    assert key_of((torch.zeros(4, device="meta"), x, 32, 2.0, 16, True)) is None


@needs_cpu
def test_options_and_backends_reselect_the_kernel(monkeypatch):
    k = _fresh()
    x = np.arange(50, dtype=np.float32)
    out = np.zeros(50, np.float32)
    with use_options(backend="cpu"):
        plain = _check_launch(k, x, out, 50, 2.0)
        with use_options(backend="cpu", debug=True):
            assert _check_launch(k, x, out, 50, 2.0) is not plain
            assert _check_launch(k, x, out, 50, 2.0) is not plain
        with use_options(backend="cpu", sanitize=True):
            checked = _check_launch(k, x, out, 50, 2.0)
            assert checked.sanitize and _check_launch(k, x, out, 50, 2.0) is checked
        with use_options(backend="interpreter", interpret=True):
            interp = k[(4,)](x, out, 50, 2.0, BLOCK=16, SHIFT=False)
            assert k[(4,)](x, out, 50, 2.0, BLOCK=16, SHIFT=False) is interp
            assert type(interp).__module__.startswith("tilejit.interpreter")
        assert _check_launch(k, x, out, 50, 2.0) is plain
        with_opts = k[(4,)](x, out, 50, 2.0, BLOCK=16, SHIFT=True, num_warps=8)
        assert with_opts is not plain and k[(4,)](x, out, 50, 2.0, BLOCK=16, SHIFT=True) is plain
    monkeypatch.setenv("TILEJIT_BACKEND", "cpu")
    monkeypatch.setenv("TILEJIT_VECTORIZE", "0")
    set_options(None)                                 # re-read the environment
    try:
        again = _check_launch(k, x, out, 50, 2.0)
        assert again is not plain and k._launcher.express_state[0].vectorize is False
        assert _check_launch(k, x, out, 50, 2.0) is again
    finally:
        set_options(None)
        monkeypatch.undo()
        set_options(None)


def _oob(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


@needs_cpu
def test_sanitize_and_cache_changes_through_the_express_lane():
    k = tilejit.jit(_oob)
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(16, np.float32)
    with use_options(backend="cpu"):
        with pytest.raises(tilejit.OutOfBoundsError):
            k[(1,)](x, y, BLOCK=16, sanitize=True)
        with use_options(backend="cpu", sanitize=True):
            for _ in range(3):                         # the express lane reports too
                with pytest.raises(tilejit.OutOfBoundsError):
                    k[(1,)](x, y, BLOCK=16)
        for _ in range(2):
            first = k[(1,)](y, y, BLOCK=16)
        assert k._launcher.express
        k.cache.clear()                                # a cleared cache recompiles
        assert not k._launcher.express
        assert k[(1,)](y, y, BLOCK=16) is not first


@needs_cpu
def test_grids_defaults_and_callables():
    k = _fresh()
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(100, np.float32)
    calls = []

    def grid(meta):
        calls.append(meta["BLOCK"])
        return (tilejit.cdiv(meta["n"], meta["BLOCK"]),)
    with use_options(backend="cpu"):
        for i in range(3):
            out[:] = 0
            k[grid](x, out, 100, 2.0, BLOCK=16, SHIFT=False)
            np.testing.assert_array_equal(out, x * 2)
            assert len(calls) == i + 1                 # the grid callable runs once per launch
        for g in ((7,), (7, 1), (7, 1, 1), [7], 7):
            out[:] = 0
            k[g](x, out, 100, 1.0, BLOCK=16, SHIFT=True)
            np.testing.assert_array_equal(out, x + 1)
        out[:] = 5
        k[(0,)](x, out, 100, 1.0, BLOCK=16, SHIFT=True)
        assert (out == 5).all()                        # an empty grid runs nothing
        k[(1,)](x, out, n=100, a=1.0, BLOCK=16, SHIFT=True)
        k[(1,)](x, out, 100, 1.0, 16, True)
        k[(1,)](x_ptr=x, out_ptr=out, n=100, a=1.0, BLOCK=16, SHIFT=True)
        assert (out[:16] == x[:16] + 1).all()
        with pytest.raises(TypeError, match="unexpected keyword argument 'BLOK'"):
            k[(1,)](x, out, 100, 1.0, BLOK=16, SHIFT=True)


@needs_cpu
def test_concurrent_launches_from_threads():
    k = _fresh()
    rng = np.random.default_rng(0)
    xs = [rng.random(64).astype(np.float32) for _ in range(4)]
    outs = [np.zeros(64, np.float32) for _ in range(4)]
    errors = []

    def work(i):
        try:
            for r in range(200):
                k[(1,)](xs[i], outs[i], 64, float(r), BLOCK=64, SHIFT=False)
                np.testing.assert_array_equal(outs[i], xs[i] * np.float32(r))
        except Exception as e:      # noqa: BLE001 - reported below
            errors.append(e)
    with use_options(backend="cpu"):
        k[(1,)](xs[0], outs[0], 64, 1.0, BLOCK=64, SHIFT=False)
        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors


def _odd_names(args, kwargs, grid, key, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(kwargs + offs, tl.load(args + offs) * grid + key)


@needs_cpu
def test_parameters_named_like_the_lanes_locals():
    k = tilejit.jit(_odd_names)
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    with use_options(backend="cpu"):
        for i in range(3):
            k[(1,)](x, out, grid=i + 2, key=1.5, BLOCK=8)
            np.testing.assert_array_equal(out, x * (i + 2) + 1.5)
            k[lambda meta: (meta["grid"] - 2,)](args=x, kwargs=out, grid=3, key=0.5, BLOCK=8)
            np.testing.assert_array_equal(out, x * 3 + 0.5)
