"""PTX of the tutorial and benchmark kernels (and of every CUDA compile a set of tests
makes), saved to a directory, and two such directories compared: the no-regression check
of a change to the cuda backend.  No GPU is needed.

    PYTHONPATH=$PWD python scripts/ptx_snapshot.py save DIR [--arch 90] [--only ROW ...]
    PYTHONPATH=$PWD python scripts/ptx_snapshot.py save-tests DIR tests/unit/test_cuda_ptx.py ...
    python scripts/ptx_snapshot.py compare BEFORE AFTER

``save`` runs each row of bench/bench_tutorials_cuda.py (and bench/bench_corpus_cuda.py's
Liger rows when liger-kernel is installed) at its GPU shapes and configs with CPU torch
tensors, the cuda backend compiling every kernel for ``--arch`` and the launches skipped
(the shapes only decide specialisations: divisibility by 16 and equality to 1).  Each PTX
is written to ``DIR/<row>.<kernel>.<n>.ptx``.  ``save-tests`` runs the given pytest
files in this process and writes the PTX of every CUDA compile they make to
``DIR/<kernel>.<hash of its tile IR, arch, warps, stages, tuning>.ptx``.

``compare`` prints, per file, identical / changed (with the instruction-count changes)
/ only in one directory (a text found on the other side under another name counts as
identical), and exits 1 when any file differs.
"""
from __future__ import annotations

import argparse
import collections
import hashlib
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _install_capture(out_dir: str, arch: int, skip_launch: bool):
    """Wrap the cuda backend's compile so that every PTX it makes is written to
    ``out_dir``; ``skip_launch``: launches do nothing (no GPU)."""
    from tilejit.backends.cuda import backend as cb
    from tilejit.ir.printer import print_function
    seen = collections.Counter()
    orig = cb.CudaBackend.compile

    def compile(self, func, options=None, bounded=True):
        key = "|".join((print_function(func), str(func.attrs.get("target")), str(func.attrs.get("num_warps")),
                        str(func.attrs.get("num_stages")), repr(getattr(options, "cuda", None)),
                        str(getattr(options, "align_version", True)), str(bounded)))
        key = key.replace(os.getcwd(), "")       # the same kernels from another checkout
        kernel = orig(self, func, options, bounded)
        tag = _LABEL[0]
        if tag is None:
            name = f"{func.name}.{hashlib.sha256(key.encode()).hexdigest()[:12]}"
        else:
            seen[(tag, func.name)] += 1
            name = f"{tag}.{func.name}.{seen[(tag, func.name)]}"
        with open(os.path.join(out_dir, name + ".ptx"), "w") as f:
            f.write(kernel.asm["ptx"])
        return kernel
    cb.CudaBackend.compile = compile
    if skip_launch:
        cb.CudaBackend.is_available = lambda self: True
        cb.CudaBackend.default_arch = lambda self: arch
        cb.CudaKernel.launch = lambda self, grid, args, **kw: None
        cb.CudaKernel.device_runner = lambda self, first: None


_LABEL = [None]
# rows whose GPU shapes (vocabulary-sized rows: 128k columns) do not fit a small host:
# compiled at the bench's --smoke shapes instead (their block sizes follow the shapes)
_HOST_TOO_SMALL = ("cross_entropy", "flce", "kl_div", "jsd")


def _bench_rows():
    """(key, row) of the tutorial bench and, when liger-kernel imports, the corpus bench."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import bench_tutorials_cuda as bt
    rows = [(k, r) for k, r in bt.BY_KEY.items()]
    try:
        import liger_kernel  # noqa: F401
        import bench_corpus_cuda as bc
        rows += [(k, r) for k, r in bc.BY_KEY.items() if k not in bt.BY_KEY]
    except Exception as e:          # liger-kernel absent: tutorial rows only
        print(f"ptx_snapshot: corpus rows skipped ({type(e).__name__}: {e})", file=sys.stderr)
    return bt, rows


def save(out_dir: str, arch: int, only: list) -> int:
    """The bench rows' PTX (launches skipped) into ``out_dir``."""
    os.makedirs(out_dir, exist_ok=True)
    os.environ["TILEJIT_BACKEND"] = "cuda"
    os.environ["TILEJIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="tj_ptxsnap_")
    from tilejit.compat import install_inductor_alias, install_triton_alias
    install_triton_alias()
    install_inductor_alias()
    from tilejit.runtime.options import set_options
    set_options(None)
    _install_capture(out_dir, arch, skip_launch=True)
    bt, rows = _bench_rows()
    bt.num_sms = lambda dev, small: 132          # the H200's, as the GPU run passes
    failed = 0
    for key, row in rows:
        if only and key not in only:
            continue
        small = any(k in key for k in _HOST_TOO_SMALL)
        _LABEL[0] = key + ("-small" if small else "")
        try:
            case = row.make("cpu", small)
            if case.prepare is not None:
                case.prepare()
            case.run()
            print(f"ptx_snapshot: {key}: ok")
        except Exception as e:
            failed += 1
            print(f"ptx_snapshot: {key}: {type(e).__name__}: {e}", file=sys.stderr)
    return 1 if failed else 0


def save_tests(out_dir: str, tests: list) -> int:
    """Run the pytest files ``tests``; the PTX of every cuda compile they make into
    ``out_dir``, named by kernel and a hash of what was compiled."""
    os.makedirs(out_dir, exist_ok=True)
    os.environ["TILEJIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="tj_ptxsnap_")
    _install_capture(out_dir, 90, skip_launch=False)
    import pytest
    return pytest.main(["-q", "-p", "no:cacheprovider", "-n", "0", *tests])


# ---------------------------------------------------------------- compare
_INSTR = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][\w.:]*)", re.M)


def histogram(ptx: str) -> collections.Counter:
    """Instruction mnemonics (with their type suffixes) counted over the PTX text."""
    body = "\n".join(ln for ln in ptx.splitlines() if not ln.lstrip().startswith(("//", ".", "$", "{", "}")))
    return collections.Counter(m.group(1) for m in _INSTR.finditer(body))


def _files(d):
    out = {}
    for base, _, names in os.walk(d):
        for n in names:
            if n.endswith(".ptx"):
                out[os.path.relpath(os.path.join(base, n), d)] = os.path.join(base, n)
    return out


def _unpaired(a: dict, b: dict) -> tuple:
    """Files of one side whose name the other lacks but whose text it holds under another
    name (``save-tests`` keys hash the tile IR a test handed over, which a test that
    compiles one function object twice may have changed in between): (a's, b's) left."""
    def digest(path):
        return hashlib.sha256(open(path, "rb").read()).hexdigest()
    only_a = {n: digest(a[n]) for n in set(a) - set(b)}
    only_b = {n: digest(b[n]) for n in set(b) - set(a)}
    texts_a, texts_b = set(only_a.values()), set(only_b.values())
    return ([n for n, d in only_a.items() if d not in texts_b],
            [n for n, d in only_b.items() if d not in texts_a],
            sum(1 for d in only_a.values() if d in texts_b))


def compare(before: str, after: str) -> int:
    a, b = _files(before), _files(after)
    left_a, left_b, moved = _unpaired(a, b)
    same = changed = 0
    for name in sorted(left_a):
        print(f"only in before: {name}")
    for name in sorted(left_b):
        print(f"only in after: {name}")
    changed += len(left_a) + len(left_b)
    same += moved
    for name in sorted(set(a) & set(b)):
        ta, tb = open(a[name]).read(), open(b[name]).read()
        if ta == tb:
            same += 1
            continue
        changed += 1
        ha, hb = histogram(ta), histogram(tb)
        delta = {k: hb[k] - ha[k] for k in set(ha) | set(hb) if hb[k] != ha[k]}
        total = sum(hb.values()) - sum(ha.values())
        text = ", ".join(f"{k} {v:+d}" for k, v in sorted(delta.items())) or "same instruction counts"
        print(f"changed: {name}: {sum(ha.values())} -> {sum(hb.values())} instructions ({total:+d}); {text}")
    print(f"{same} identical ({moved} of them under another name), {changed} differing or "
          f"only on one side; {len(a)} files before, {len(b)} after")
    return 1 if changed else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("save")
    s.add_argument("dir")
    s.add_argument("--arch", type=int, default=90)
    s.add_argument("--only", nargs="*", default=[], help="bench row keys (default: all)")
    t = sub.add_parser("save-tests")
    t.add_argument("dir")
    t.add_argument("tests", nargs=argparse.REMAINDER, help="pytest files (and -k ...) whose CUDA compiles are saved")
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    ns = ap.parse_args(argv)
    if ns.cmd == "save":
        return save(ns.dir, ns.arch, ns.only)
    if ns.cmd == "save-tests":
        return save_tests(ns.dir, ns.tests)
    return compare(ns.before, ns.after)


if __name__ == "__main__":
    sys.exit(main())
