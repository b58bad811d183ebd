"""The ctypes cuLaunchKernel path of the cuda driver and its fallback to cuda-bindings
(no GPU needed: libcuda and the bindings are replaced by recorders)."""
import pytest

from tilejit.backends.cuda import driver


class _Bindings:
    def __init__(self, err=0):
        self.calls, self.err = [], err

    def cuLaunchKernel(self, fn, *rest):
        self.calls.append((fn,) + rest)
        return (self.err,)


@pytest.fixture
def raw_state(monkeypatch):
    state = {"fn": None, "loaded": True, "ok": False}
    monkeypatch.setattr(driver, "_RAW", state)
    return state


def test_raw_launch_is_used_and_confirmed(raw_state):
    seen = []
    raw_state["fn"] = lambda *a: seen.append(a) or 0
    cu = _Bindings()
    assert driver._launch(cu, ("fn", 1234), (2, 1, 1), 128, 0, 7, 999) == 0
    assert seen[0][0] == 1234 and seen[0][1:4] == (2, 1, 1) and seen[0][8] == 7 and seen[0][9] == 999
    assert not cu.calls and raw_state["ok"]


def test_first_raw_failure_falls_back_to_bindings_for_good(raw_state):
    raw_state["fn"] = lambda *a: 400           # CUDA_ERROR_INVALID_HANDLE
    cu = _Bindings()
    assert driver._launch(cu, ("fn", 1234), (1, 1, 1), 32, 0, 0, 5) == 0
    assert cu.calls and cu.calls[0][0] == "fn"
    assert raw_state["fn"] is None
    driver._launch(cu, ("fn", 1234), (1, 1, 1), 32, 0, 0, 5)
    assert len(cu.calls) == 2


def test_errors_after_a_confirmed_raw_launch_are_reported(raw_state):
    raw_state["fn"], raw_state["ok"] = (lambda *a: 719), True     # launch failure
    cu = _Bindings()
    assert driver._launch(cu, ("fn", 1), (1, 1, 1), 32, 0, 0, 5) == 719
    assert not cu.calls


def test_objects_without_a_handle_use_the_bindings(raw_state):
    raw_state["fn"] = lambda *a: pytest.fail("no raw launch without a handle")
    cu = _Bindings(err=0)
    assert driver._handle("fn") is None
    assert driver._launch(cu, ("fn", None), (1, 1, 1), 32, 0, 0, 5) == 0 and cu.calls
