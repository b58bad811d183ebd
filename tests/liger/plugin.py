"""pytest plugin: run Liger-Kernel 0.8.5's own tests through tilejit's ``triton`` alias.

    cd <liger-kernel-0.8.5 sdist> && python -m pytest -p tests.liger.plugin \
        --conformance-backend cpu --conformance-sample 10 --conformance-log out.jsonl test/transformers

(``scripts/liger_tests.py`` drives it.)  The alias is installed before pytest loads
Liger's conftest (``pytest_load_initial_conftests``), before ``test/utils.py``, torch, transformers or liger_kernel
are imported; child processes a test starts get it through a ``sitecustomize``.  Liger's
tests pick their device with ``liger_kernel.utils.infer_device()``: ``cpu`` on a machine
without a GPU, ``cuda`` on one (run with ``--conformance-backend cuda`` there).  Nothing
of Liger's source or tests is changed.

The per-test machinery (time limit, outcome classes, JSON log) is the conformance
plugin's (tests/conformance/plugin.py), with test ids relative to Liger's ``test/``
folder (``transformers/test_rms_norm.py::test_correctness[...]``).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance import harness
from tests.conformance import plugin as conformance

HERE = Path(__file__).resolve().parent

pytest_addoption = conformance.pytest_addoption
pytest_runtest_protocol = conformance.pytest_runtest_protocol
pytest_runtest_makereport = conformance.pytest_runtest_makereport


def liger_test_root(config) -> Path:
    """Liger's ``test/`` folder: the rootdir's (the sdist's pyproject.toml sets it)."""
    return Path(str(config.rootpath)) / "test"


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """The alias, before Liger's ``test/conftest.py`` is imported (pytest loads it before
    ``pytest_configure``): that conftest imports ``liger_kernel``, hence ``torch._dynamo``
    and ``torch._inductor``, which probe for Triton once at import (Inductor's
    ``AttrsDescriptor`` choice, its compile threads).  Probed without the alias, Inductor's
    kernels for ``torch.compile`` named an ``AttrsDescriptor`` they never imported (a
    NameError on cpu; on a machine with Triton installed, the real Triton's modules mixed
    with the alias): Liger's chunked losses under ``torch.compile`` failed."""
    ns = early_config.known_args_namespace
    if getattr(ns, "conformance_log", "") and getattr(ns, "conformance_backend", "cpu") != "triton":
        import tilejit.compat
        tilejit.compat.install_triton_alias()


def pytest_configure(config):
    if not config.getoption("--conformance-log"):
        return
    if conformance._select_backend(config):     # alias in this process and its children
        import tilejit.compat                    # ("triton": the real Triton, no alias)
        tilejit.compat.install_triton_alias()
    config._tj_id_root = liger_test_root(config)
    config._tj_log = conformance._Log(config.getoption("--conformance-log"))
    import torch
    if not torch.cuda.is_available():
        config._tj_log = _ReferencePrecisionLog(
            config._tj_log, harness.read_not_applicable(HERE / "reference_precision.txt"))


class _ReferencePrecisionLog:
    """The log, with a value mismatch of a test in ``reference_precision.txt`` (a run
    without CUDA: the test's reference is eager torch float32 on the CPU) written as a
    ``fail`` whose message names the reason, not as a ``wrong_result``."""

    def __init__(self, log, table):
        self._log, self._table = log, table

    def __getattr__(self, name):
        return getattr(self._log, name)

    def write(self, tid, outcome, **extra):
        self._log.write(tid, **reference_precision(tid, {"outcome": outcome, **extra}, self._table))


def reference_precision(tid: str, rec: dict, table: dict) -> dict:
    """``rec`` (an outcome record without its id), a value mismatch of a test listed in
    ``table`` (``reference_precision.txt``) rewritten as a ``fail`` naming the reason."""
    reason = harness.not_applicable_reason(tid, table)
    if reason is None or rec["outcome"] not in ("wrong_result", "fail") \
            or rec.get("exc_type") != "AssertionError" or "reference precision" in rec.get("message", ""):
        return rec
    msg = f"reference precision (tests/liger/reference_precision.txt: {reason}) | {rec.get('message', '')}"
    return {**rec, "outcome": "fail", "message": msg[:400]}


def _sample(items, k, tid):
    """Every k-th parametrisation of each test function (in collection order)."""
    seen: dict[str, int] = {}
    keep = []
    for it in items:
        key = tid(it).split("[", 1)[0]
        seen[key] = seen.get(key, 0) + 1
        if (seen[key] - 1) % k == 0:
            keep.append(it)
    return keep


def pytest_collection_modifyitems(session, config, items):
    log = getattr(config, "_tj_log", None)
    if log is None:
        return
    tid = conformance.test_id
    items[:] = _sample(items, max(1, config.getoption("--conformance-sample")), tid)
    items[:] = items[::max(1, config.getoption("--conformance-stride"))]
    i, n = (int(x) for x in config.getoption("--conformance-shard").split("/"))
    items[:] = [it for j, it in enumerate(items) if j % n == i]
    table = harness.read_not_applicable(HERE / "not_applicable.txt")
    import torch
    gpu_only = ({} if torch.cuda.is_available() else
                harness.read_not_applicable(HERE / "needs_gpu.txt"))
    skip_file = config.getoption("--conformance-skip-ids")
    done = set(Path(skip_file).read_text().split("\n")) if skip_file and Path(skip_file).exists() else set()
    keep, dropped = [], []
    for it in items:
        reason = harness.not_applicable_reason(tid(it), table)
        if tid(it) in done:
            dropped.append(it)
        elif reason is not None:
            log.write(tid(it), "not_applicable", reason=reason)
            dropped.append(it)
        elif harness.not_applicable_reason(tid(it), gpu_only) is not None:
            log.write(tid(it), "skip", reason="needs a GPU: " + harness.not_applicable_reason(tid(it), gpu_only))
            dropped.append(it)
        else:
            keep.append(it)
    items[:] = keep
    config.hook.pytest_deselected(items=dropped)


# a test file that queries the accelerator at import (``getattr(torch, infer_device())
# .get_device_properties(0)``): on a cpu run that is Liger's test code needing a GPU
CPU_DEVICE_AT_IMPORT = ("module 'torch.cpu' has no attribute",)
_COLLECT_FAILURES: list = []


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed and getattr(collector.config, "_tj_log", None) is not None:
        _COLLECT_FAILURES.append((getattr(collector, "path", None), rep))


def pytest_collection_finish(session):
    log = getattr(session.config, "_tj_log", None)
    if log is None:
        return
    root = session.config._tj_id_root
    for path, rep in _COLLECT_FAILURES:
        tid = path.relative_to(root).as_posix() if path is not None else rep.nodeid
        text = str(rep.longrepr)
        if any(m in text for m in CPU_DEVICE_AT_IMPORT):
            log.write(tid, "skip", reason="the file asks the GPU's properties at import "
                      "(torch.cpu has none): Liger's test needs a GPU device")
        else:
            log.write(tid, "collect_error", **conformance._describe(rep.longrepr, None))
