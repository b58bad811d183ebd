"""pytest plugin: run Triton 3.6's language tests through tilejit (``scripts/conformance.py``).

    pytest -p tests.conformance.plugin --device cpu --conformance-backend cpu \
        --conformance-sample 10 --conformance-log out.jsonl ../shared/conformance/triton-3.6/language

Collects the upstream files by path (loaded by :mod:`tests.conformance.harness`), keeps
every k-th parametrisation of each test function, deselects the tests listed in
``not_applicable.txt``, and appends one JSON line per test to ``--conformance-log``
(a ``start`` line before it runs, so that a driver can tell which test hung or crashed).
"""
from __future__ import annotations

import faulthandler
import json
import os
import re
import shutil
import signal
import subprocess
import traceback
import types
from pathlib import Path

import pytest

from tests.conformance import harness

HERE = Path(__file__).resolve().parent
_upstream_conftest = None


def pytest_addoption(parser):
    g = parser.getgroup("conformance")
    # the upstream conftest's option; its default there is "cuda"
    g.addoption("--device", action="store", default="cpu")
    g.addoption("--conformance-backend", default="cpu",
                choices=("cpu", "interpreter", "cuda", "triton"),
                help="tilejit backend; 'triton': the real Triton, no alias")
    g.addoption("--conformance-sample", type=int, default=1,
                help="keep every k-th parametrisation of each test function")
    g.addoption("--conformance-stride", type=int, default=1,
                help="then keep every n-th test of the sample (a smaller CI selection)")
    g.addoption("--conformance-shard", default="0/1", help="i/n: this process's share")
    g.addoption("--conformance-part", default="0/1", help="I/N: this run's share of the "
                "selection (by a hash of the test id: the same on every machine)")
    g.addoption("--conformance-log", default="", help="append per-test JSON lines here")
    g.addoption("--conformance-skip-ids", default="", help="file of test ids already run")
    g.addoption("--conformance-only-ids", default="", help="file of the only test ids to run")
    g.addoption("--conformance-timeout", type=float, default=120.0,
                help="seconds per test (then a soft interrupt; +15 s: the process exits)")


SITECUSTOMIZE = """\
# written by tests/conformance/plugin.py: `import triton` in a child process is tilejit
from tilejit.compat import install_triton_alias
install_triton_alias()
"""


def _alias_in_children(config):
    """Child processes a test starts (``python print_helper.py``) get the alias too."""
    import tempfile
    d = Path(tempfile.mkdtemp(prefix="tj-conformance-site-"))
    (d / "sitecustomize.py").write_text(SITECUSTOMIZE)
    config.add_cleanup(lambda: shutil.rmtree(d, ignore_errors=True))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(d), str(harness.PROJECT), os.environ.get("PYTHONPATH")]))


def _select_backend(config):
    backend = config.getoption("--conformance-backend")
    if backend == "triton":
        return False
    _alias_in_children(config)
    os.environ["TILEJIT_BACKEND"] = backend
    if backend == "interpreter":
        # tilejit's interpreter runs the compiled IR behind the same frontend, so the tests
        # take their compiled-code paths (TRITON_INTERPRET=1 would make them exec patched
        # source and expect Triton's InterpreterError)
        os.environ["TILEJIT_INTERPRET"] = "1"
    from tilejit.runtime.options import set_options
    set_options(None)
    return True


def pytest_configure(config):
    global _upstream_conftest
    if not config.getoption("--conformance-log") and not _in_upstream(config):
        return
    device = config.getoption("--device")
    use_alias = _select_backend(config)
    harness.install(device, use_alias=use_alias, config=config)
    _upstream_conftest = harness.load_conftest(device)
    _upstream_conftest.pytest_configure(config)
    holder = types.ModuleType("tj_upstream_fixtures")
    for name in ("device", "fresh_triton_cache", "fresh_knobs", "fresh_knobs_except_libraries",
                 "with_allocator"):
        setattr(holder, name, getattr(_upstream_conftest, name))
    config.pluginmanager.register(holder, "tj_upstream_fixtures")
    config._tj_log = _Log(config.getoption("--conformance-log"))


def _in_upstream(config):
    return any(str(harness.upstream_dir()) in str(Path(a).resolve()) for a in config.args)


class UpstreamModule(pytest.Module):
    """An upstream test file, loaded with the harness's load-time rewrites."""

    def _getobj(self):
        return harness.import_test_module(self.path.stem)


def pytest_pycollect_makemodule(module_path, parent):
    if _upstream_conftest is None:
        return None
    if harness.upstream_dir() in Path(module_path).resolve().parents:
        return UpstreamModule.from_parent(parent, path=module_path)
    return None


def test_id(item) -> str:
    """``file::name[params]`` relative to the upstream language folder (or to the folder
    another suite's plugin set as ``config._tj_id_root``: tests/liger/plugin.py)."""
    root = getattr(item.config, "_tj_id_root", None)
    name = item.path.relative_to(root).as_posix() if root else item.path.name
    return f"{name}::{item.name}"


def _sample(items, k):
    seen: dict[tuple, int] = {}
    keep = []
    for it in items:
        key = (it.path.name, getattr(it, "originalname", it.name))
        n = seen.get(key, 0)
        seen[key] = n + 1
        if n % k == 0:
            keep.append(it)
    return keep


def pytest_collection_modifyitems(session, config, items):
    if _upstream_conftest is None:
        return
    items[:] = _sample(items, max(1, config.getoption("--conformance-sample")))
    items[:] = items[::max(1, config.getoption("--conformance-stride"))]
    items[:] = [it for it in items if harness.in_part(test_id(it), config.getoption("--conformance-part"))]
    i, n = (int(x) for x in config.getoption("--conformance-shard").split("/"))
    items[:] = [it for j, it in enumerate(items) if j % n == i]
    table = harness.read_not_applicable(HERE / "not_applicable.txt")
    done = set()
    skip_file = config.getoption("--conformance-skip-ids")
    if skip_file and Path(skip_file).exists():
        done = set(Path(skip_file).read_text().split("\n"))
    only_file = config.getoption("--conformance-only-ids")
    if only_file:
        only = set(Path(only_file).read_text().split("\n"))
        items[:] = [it for it in items if test_id(it) in only]
    keep, dropped = [], []
    for it in items:
        tid = test_id(it)
        if tid in done:
            dropped.append(it)
            continue
        reason = harness.not_applicable_reason(tid, table)
        if reason is not None:
            config._tj_log.write(tid, "not_applicable", reason=reason)
            dropped.append(it)
        else:
            keep.append(it)
    items[:] = keep
    config.hook.pytest_deselected(items=dropped)



@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed and _upstream_conftest is not None:
        _LOG_FOR_COLLECT.append((getattr(collector, "path", None), rep))


NO_CUDA_TORCH = ("Torch not compiled with CUDA enabled", "Found no NVIDIA driver")


_LOG_FOR_COLLECT: list = []


def pytest_collection_finish(session):
    log = getattr(session.config, "_tj_log", None)
    if log is None:
        return
    log_path = session.config.getoption("--conformance-log")
    selected = Path(f"{log_path}.selected") if log_path else None
    if selected is not None and not selected.exists():    # the shard's tests (after -k), for --deadline
        selected.write_text("\n".join(test_id(it) for it in session.items))
    for path, rep in _LOG_FOR_COLLECT:
        tid = path.name if path is not None else rep.nodeid
        text = str(rep.longrepr)
        reason = harness.not_applicable_reason(tid, harness.read_not_applicable(
            HERE / "not_applicable.txt"))
        if reason is not None:
            log.write(tid, "not_applicable", reason=reason)
        elif any(m in text for m in NO_CUDA_TORCH):   # a module-level torch.cuda call
            log.write(tid, "skip", reason="the file needs torch with CUDA at import")
        else:
            log.write(tid, "collect_error", **_describe(rep.longrepr, None))


class _Timeout(BaseException):
    """Raised in the test by the soft watchdog (a BaseException: tests catch Exception)."""


def _alarm(signum, frame):
    raise _Timeout("conformance harness: test exceeded its time limit")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    log = getattr(item.config, "_tj_log", None)
    if log is None:
        yield
        return
    limit = item.config.getoption("--conformance-timeout")
    log.write(test_id(item), "start")
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    # a hang in native code: the traceback goes to <log>.watchdog (pytest captures fd 2)
    # and the process exits; scripts/conformance.py records a timeout and restarts
    faulthandler.dump_traceback_later(limit + 15, exit=True, file=log.watchdog())
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


WRONG_RESULT_MODULES = ("numpy/testing", "torch/testing", "/_pytest/python_api")


# an assert whose line mentions these checks an error message or compiler output, not a
# computed value: a failure, not a wrong result
_MESSAGE_CHECK = ("str(", "err", "msg", "message", "match", "inner", "outer", ".asm",
                  "warning", ".name", "repr(", "__cause__", "captured", "stdout", "stderr",
                  "returncode")


def _library_code(path: str) -> bool:
    """An installed package's (or an sdist's ``src/``) source, not a test file."""
    return ("/site-packages/" in path or "/src/" in path) and "/test" not in path


def classify(excinfo) -> str:
    """``wrong_result``: an AssertionError raised by the test's own comparison of values
    (an ``assert`` in the upstream file or numpy/torch's testing helpers), not by tilejit
    and not one checking an error message or compiler text; ``code_text``: an assert on
    the compiled code's text (PTX, LLVM IR...) after the values were checked; ``timeout``;
    ``fail``: any other exception (an unsupported feature, a crash, a message that
    differs...)."""
    if excinfo is None:
        return "fail"
    if excinfo.errisinstance(_Timeout):
        return "timeout"
    if any(m in str(excinfo.value) for m in NO_CUDA_TORCH) or _in_cpu_torch_cuda(excinfo):
        return "skip"
    frames = traceback.extract_tb(excinfo.tb)
    if excinfo.errisinstance(KeyError) and frames and ".asm[" in (frames[-1].line or ""):
        return "code_text"                # h.asm["ttgir"]: a stage of Triton's compiler
    if not excinfo.errisinstance(AssertionError):
        return "fail"
    inner = frames[-1].filename if frames else ""
    if "/tilejit/" in inner and "/tests/" not in inner:
        return "fail"
    if _library_code(inner) and not any(m in inner for m in WRONG_RESULT_MODULES):
        return "fail"          # a library's own precondition (Liger's ``assert x.is_cuda``)
    line = (frames[-1].line or "") if frames else ""
    if _asserts_code_text(excinfo, line):
        return "code_text"
    if any(m in inner for m in WRONG_RESULT_MODULES):
        return "wrong_result"  # numpy/torch compared values (their line reads ``raise ...(msg)``)
    if any(m in line for m in _MESSAGE_CHECK) or line.strip().startswith("assert False") \
            or _compares_child_output(excinfo):
        return "fail"
    return "wrong_result"


def _compares_child_output(excinfo) -> bool:
    """The failing test compares what a child process printed (``test_print``: the
    lines' format, e.g. index padding and one line per GPU thread), not computed values."""
    tb = excinfo.tb
    while tb.tb_next is not None:
        tb = tb.tb_next
    return any(isinstance(v, subprocess.CompletedProcess) for v in tb.tb_frame.f_locals.values())


def _in_cpu_torch_cuda(excinfo) -> bool:
    """Raised inside ``torch.cuda`` on a torch built without CUDA (``with
    torch.cuda.device(x.device.index)`` on a cpu tensor): the test needs a CUDA torch."""
    frames = traceback.extract_tb(excinfo.tb)
    if not frames or "/torch/cuda/" not in frames[-1].filename:
        return False
    import torch
    return not torch.backends.cuda.is_built()


def _asserts_code_text(excinfo, line: str) -> bool:
    """Whether the failing assert's subject is compiled code's text (``h.asm["ptx"]``, or a
    name bound to it such as ``ptx``): the numbers were right, the code's shape differs."""
    if ".asm[" in line or harness.is_code_text(str(excinfo.value)):
        return True
    tb = excinfo.tb
    while tb.tb_next is not None:
        tb = tb.tb_next
    scope = tb.tb_frame.f_locals
    return any(harness.is_code_text(scope.get(name))
               for name in re.findall(r"[A-Za-z_]\w*", line))


def _describe(longrepr, excinfo):
    if excinfo is not None:
        msg = " | ".join(ln.strip() for ln in str(excinfo.value).strip().splitlines()
                         if ln.strip())
        return {"exc_type": excinfo.type.__name__, "message": msg[:400],
                "where": _where(excinfo)}
    text = str(longrepr).strip().splitlines()
    return {"exc_type": "", "message": (text[-1] if text else "")[:300], "where": ""}


def _where(excinfo):
    for fr in reversed(traceback.extract_tb(excinfo.tb)):
        if "/tilejit/" in fr.filename:
            return f"{fr.filename.split('/tilejit/', 1)[1]}:{fr.lineno}"
    frames = traceback.extract_tb(excinfo.tb)
    return f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    log = getattr(item.config, "_tj_log", None)
    if log is None:
        return
    tid = test_id(item)
    if rep.skipped and call.when in ("setup", "call"):
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        log.write(tid, "skip", reason=str(reason)[:300])
    elif rep.failed and call.when == "call":
        kind = classify(call.excinfo)
        if kind == "skip":
            log.write(tid, "skip", reason="needs torch with CUDA: " + str(call.excinfo.value)[:200])
        else:
            log.write(tid, kind, **_describe(rep.longrepr, call.excinfo))
    elif rep.failed:
        log.write(tid, "error", phase=call.when, **_describe(rep.longrepr, call.excinfo))
    elif rep.passed and call.when == "call":
        log.write(tid, "pass", seconds=round(rep.duration, 3))


class _Log:
    def __init__(self, path):
        self.path = path
        self.f = open(path, "a", buffering=1) if path else None
        self._watchdog = None

    def watchdog(self):
        """The file the hard watchdog writes its traceback to (``<log>.watchdog``)."""
        if self._watchdog is None:
            self._watchdog = open(f"{self.path}.watchdog" if self.path else os.devnull, "w")
        return self._watchdog

    def write(self, tid, outcome, **extra):
        if self.f is not None:
            self.f.write(json.dumps({"id": tid, "outcome": outcome, **extra}) + "\n")
            self.f.flush()
