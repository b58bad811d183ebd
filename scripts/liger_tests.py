#!/usr/bin/env python
"""Run Liger-Kernel 0.8.5's own tests, unchanged, through tilejit's ``triton`` alias.

    pip download --no-binary :all: --no-deps liger-kernel==0.8.5 -d /tmp/liger
    tar xzf /tmp/liger/liger_kernel-0.8.5.tar.gz -C /tmp/liger
    pip install liger-kernel==0.8.5 --no-deps && pip install "transformers>=5.0.0"
    python scripts/liger_tests.py --src /tmp/liger/liger_kernel-0.8.5 --sample 10     # cpu
    python scripts/liger_tests.py --src ... --backend cuda --jobs 4                    # GPU

Each job is a pytest process run with Liger's own configuration (the sdist's
``pyproject.toml``: ``pythonpath = src, .``) and the plugin ``tests/liger/plugin.py``,
which installs the alias before anything imports torch or triton.  The device is
Liger's own choice (``liger_kernel.utils.infer_device``: cpu here, cuda on a GPU).  The
test directories are those of Liger's ``make test`` less the ones that are not Triton
code (``--dirs``).  Hangs, crashes, per-test timeouts and the result JSON are handled
as in scripts/conformance.py (the same code).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
_spec = importlib.util.spec_from_file_location("tj_conformance_script", Path(__file__).with_name("conformance.py"))
conformance = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(conformance)

# Liger's ``make test`` runs test/ less convergence, cutedsl, cutile and cute (other DSLs,
# or model training runs); megatron needs Megatron-LM
DIRS = ("test/transformers", "test/chunked_loss", "test/triton", "test/backends")
LIGER_VERSION = "0.8.5"


def find_src(arg: str | None) -> Path:
    """The unpacked liger-kernel sdist (``--src``, ``$TILEJIT_LIGER_SRC``, /tmp/liger/...)."""
    for cand in (arg, os.environ.get("TILEJIT_LIGER_SRC"), f"/tmp/liger/liger_kernel-{LIGER_VERSION}"):
        if cand and (Path(cand) / "test" / "conftest.py").is_file():
            return Path(cand).resolve()
    raise SystemExit("Liger-Kernel's sdist not found: pass --src (the folder of an unpacked "
                     f"liger_kernel-{LIGER_VERSION}.tar.gz) or set TILEJIT_LIGER_SRC")


def _parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", default=None, help="unpacked liger-kernel sdist")
    ap.add_argument("--backend", default="cpu", choices=("cpu", "interpreter", "cuda", "triton"))
    ap.add_argument("--sample", type=int, default=1, help="every k-th parametrisation")
    ap.add_argument("--stride", type=int, default=1, help="then every n-th test of that")
    ap.add_argument("--jobs", type=int, default=1, help="pytest processes in parallel")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per test")
    ap.add_argument("--dirs", nargs="*", default=list(DIRS), help="test folders or files, "
                    "relative to the sdist")
    ap.add_argument("-k", dest="keyword", default=None, help="pytest -k expression")
    ap.add_argument("--exclude", nargs="*", default=[], help="test ids not to run")
    ap.add_argument("--deadline", type=float, default=0.0, help="stop after this many seconds "
                    "and report what ran (the rest not_run)")
    ap.add_argument("--out", default=None, help="result JSON (default bench/results/...)")
    ap.add_argument("--check", default=None, help="expected.json: exit 1 on a regression")
    ap.add_argument("--write-expected", default=None, help="write the run's failures as "
                    "the expected.json for this selection")
    ap.add_argument("--summary-md", default=None, help="also write failures by cause (markdown)")
    ap.add_argument("--from-logs", default=None, metavar="DIR", help="summarize the shard "
                    "logs (shard*.jsonl) of a run that was stopped, instead of running")
    ap.add_argument("--quiet", action="store_true")
    return ap.parse_args(argv)


def pytest_cmd(args, shard, log, done):
    """One pytest process over Liger's tests, with Liger's configuration."""
    cmd = [sys.executable, "-m", "pytest", "-p", "tests.liger.plugin", "-p", "no:cacheprovider",
           "-q", "--no-header", "--continue-on-collection-errors", "-rN", "--tb=no",
           "-W", "ignore", "-o", "log_cli=false",
           "--rootdir", str(args.src), "-c", str(args.src / "pyproject.toml"),
           "--conformance-backend", args.backend,
           "--conformance-sample", str(args.sample), "--conformance-stride", str(args.stride),
           "--conformance-shard", f"{shard}/{args.jobs}",
           "--conformance-log", str(log), "--conformance-skip-ids", str(done),
           "--conformance-timeout", str(args.timeout)]
    if args.keyword:
        cmd += ["-k", args.keyword]
    return cmd + [str(args.src / d) for d in args.dirs]


def main(argv=None) -> int:
    args = _parse(argv)
    args.src = find_src(args.src)
    args.device = "cuda" if args.backend == "cuda" else "device chosen by liger_kernel.utils.infer_device"
    if args.from_logs:
        outcomes = {}
        for log in sorted(Path(args.from_logs).glob("shard*.jsonl")):
            outcomes.update(conformance._read_log(log)[0])
        _rescore(outcomes)
        result = conformance.summarize(args, outcomes, 0.0)
        result["partial"] = f"summarized from the logs of a stopped run ({len(outcomes)} tests)"
    else:
        result = conformance.run(args, command=pytest_cmd)
    result["command"] = "python scripts/liger_tests.py " + " ".join(sys.argv[1:] if argv is None else argv)
    result["suite"] = f"Liger-Kernel {LIGER_VERSION} tests ({', '.join(args.dirs)})"
    result["versions"] = _versions()
    out = Path(args.out) if args.out else (
        ROOT / "bench" / "results" / f"liger_{args.backend}_sample{args.sample}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    c = result["counts"]
    print(f"liger {args.backend}: {c.get('pass', 0)} of {result['applicable']} applicable pass "
          f"({100 * (result['pass_rate'] or 0):.1f}%), wrong results {c.get('wrong_result', 0)}, "
          f"counts {c}, {result['seconds']} s -> {out}")
    if args.summary_md:
        Path(args.summary_md).write_text(conformance.summary_markdown(result))
    if args.write_expected:
        Path(args.write_expected).write_text(
            json.dumps(conformance.expected_from(result, (args.sample, args.stride)), indent=1) + "\n")
    if args.check:
        problems = conformance.check(result, Path(args.check))
        for p in problems:
            print("LIGER REGRESSION:", p)
        return 1 if problems else 0
    return 0


def _rescore(outcomes: dict) -> None:
    """Apply tests/liger's lists again (a log may predate an entry)."""
    from tests.conformance import harness
    here = ROOT / "tests" / "liger"
    na = harness.read_not_applicable(here / "not_applicable.txt")
    import torch
    gpu = {} if torch.cuda.is_available() else harness.read_not_applicable(here / "needs_gpu.txt")
    precision = {} if torch.cuda.is_available() else harness.read_not_applicable(here / "reference_precision.txt")
    from tests.liger.plugin import reference_precision
    for tid in outcomes:
        outcomes[tid] = {"id": tid, **reference_precision(tid, outcomes[tid], precision)}
        if harness.not_applicable_reason(tid, na) is not None:
            outcomes[tid] = {"id": tid, "outcome": "not_applicable",
                             "reason": harness.not_applicable_reason(tid, na)}
        elif harness.not_applicable_reason(tid, gpu) is not None:
            outcomes[tid] = {"id": tid, "outcome": "skip",
                             "reason": "needs a GPU: " + harness.not_applicable_reason(tid, gpu)}


def _versions() -> dict:
    from importlib import metadata
    out = {}
    for dist in ("liger-kernel", "torch", "transformers"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


if __name__ == "__main__":
    sys.exit(main())
