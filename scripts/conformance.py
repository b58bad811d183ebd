#!/usr/bin/env python
"""Run Triton 3.6's own language tests through tilejit's ``triton`` alias.

    python scripts/conformance.py --backend cpu --sample 10          # 1 in 10, cpu
    python scripts/conformance.py --backend cuda --jobs 8            # the whole set, GPU
    python scripts/conformance.py --backend triton --device cuda     # the real Triton
    python scripts/conformance.py --sample 40 --check tests/conformance/expected.json

Each job is a pytest process with the plugin ``tests/conformance/plugin.py``; a test
that hangs past ``--timeout`` or kills its process is recorded (``timeout``/``crash``)
and the process restarted after it.  The result (counts, pass rate over the applicable
tests, per-test outcomes, failure causes) is written as JSON (``--out``).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.conformance import harness  # noqa: E402

FAILING = ("fail", "wrong_result", "code_text", "error", "timeout", "crash", "collect_error")


def _parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="cpu", choices=("cpu", "interpreter", "cuda", "triton"))
    ap.add_argument("--device", default=None, help="the tests' device (default: cuda for the "
                    "cuda backend, else cpu)")
    ap.add_argument("--sample", type=int, default=1, help="every k-th parametrisation")
    ap.add_argument("--stride", type=int, default=1, help="then every n-th test of that")
    ap.add_argument("--jobs", type=int, default=1, help="pytest processes in parallel")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per test")
    ap.add_argument("--files", nargs="*", default=None, help="upstream test files (names)")
    ap.add_argument("-k", dest="keyword", default=None, help="pytest -k expression")
    ap.add_argument("--out", default=None, help="result JSON (default bench/results/...)")
    ap.add_argument("--check", default=None, help="expected.json: exit 1 on a regression")
    ap.add_argument("--write-expected", default=None, help="write the run's failures as "
                    "the expected.json for this selection")
    ap.add_argument("--summary-md", default=None, help="also write failures by cause (markdown)")
    ap.add_argument("--rescore", default=None, help="recompute an earlier result JSON's counts "
                    "(not_applicable.txt applied again) instead of running")
    ap.add_argument("--merge", nargs="+", default=None, help="combine the outcomes of earlier "
                    "result JSONs (runs of parts of one selection: --files, -k) into one result")
    ap.add_argument("--only", default=None, help="a file of test ids (one a line): run only "
                    "those of the selection (e.g. an earlier run's timeouts, with a longer --timeout)")
    ap.add_argument("--shard", default="0/1", metavar="I/N", help="run part I of N of the "
                    "selection (split by a hash of the test id; --merge the N result files)")
    ap.add_argument("--exclude", nargs="*", default=[], help="test ids not to run (known hangs)")
    ap.add_argument("--deadline", type=float, default=None, help="stop after S seconds in all "
                    "and report what ran (the tests not reached are counted as not_run)")
    ap.add_argument("--quiet", action="store_true")
    return ap.parse_args(argv)


def _files(args):
    lang = harness.upstream_dir() / harness.TEST_SUBDIR
    if args.files:
        return [str(lang / f) for f in args.files]
    return sorted(str(p) for p in lang.glob("test_*.py"))


def _pytest_cmd(args, shard, log, done):
    cmd = [sys.executable, "-m", "pytest", "-p", "tests.conformance.plugin", "-p",
           "no:cacheprovider", "-q", "--no-header", "--continue-on-collection-errors", "-rN", "--tb=no", "-W", "ignore",
           "--rootdir", str(ROOT), "-c", os.devnull,
           "--device", args.device, "--conformance-backend", args.backend,
           "--conformance-sample", str(args.sample), "--conformance-stride", str(args.stride),
           "--conformance-shard", f"{shard}/{args.jobs}", "--conformance-part", args.shard,
           "--conformance-log", str(log), "--conformance-skip-ids", str(done),
           "--conformance-timeout", str(args.timeout)]
    if args.keyword:
        cmd += ["-k", args.keyword]
    if args.only:
        cmd += ["--conformance-only-ids", str(Path(args.only).resolve())]
    return cmd + _files(args)


def _read_log(log: Path) -> tuple[dict, str | None]:
    """Final outcome per id, and the id that started without an outcome (hang/crash)."""
    final, started = {}, None
    if not log.exists():
        return final, None
    for line in log.read_text().splitlines():
        rec = json.loads(line)
        if rec["outcome"] == "start":
            started = rec["id"]
        else:
            if rec["id"] not in final or final[rec["id"]]["outcome"] in ("pass", "skip"):
                final[rec["id"]] = rec        # a teardown error overrides a pass
            if rec["id"] == started:
                started = None
    return final, started


def _run_shard(args, shard, tmp: Path, env, stop, procs, command=None):
    """One pytest process at a time for ``shard``, restarted after a test that hung or
    crashed it, until ``stop`` (--deadline).  ``command(args, shard, log, done)``: its
    command line (default :func:`_pytest_cmd`; scripts/liger_tests.py passes its own)."""
    command = command or _pytest_cmd
    log, done = tmp / f"shard{shard}.jsonl", tmp / f"shard{shard}.done"
    while not stop.is_set():
        final, _ = _read_log(log)
        done.write_text("\n".join(list(final) + list(args.exclude)))
        proc = procs[shard] = subprocess.Popen(
            command(args, shard, log, done), cwd=ROOT, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out, _ = proc.communicate()
        final, hung = _read_log(log)
        if stop.is_set():                 # stopped at --deadline: the running test is not_run
            return
        if hung is None:
            if proc.returncode not in (0, 1, 5) and not args.quiet:
                print(out[-3000:], file=sys.stderr)
            return
        dog = Path(f"{log}.watchdog")
        trace = dog.read_text() if dog.exists() else ""
        dog.unlink(missing_ok=True)
        kind = "timeout" if "Timeout (" in trace else "crash"
        where = [ln.strip() for ln in trace.splitlines() if "File " in ln][:4]
        tail = " | ".join(where or out.strip().splitlines()[-3:])[:400]
        with open(log, "a") as f:
            f.write(json.dumps({"id": hung, "outcome": kind, "exc_type": kind,
                                "message": f"process exited ({proc.returncode}): {tail}",
                                "where": ""}) + "\n")


def _asserts_code_text(rec) -> bool:
    """An earlier run's assertion failure whose subject is compiled code's text (its
    message quotes the code, or the upstream line asserts on ``.asm[...]``)."""
    if rec["outcome"] not in ("wrong_result", "fail") or \
            rec.get("exc_type") not in ("AssertionError", "KeyError"):
        return False
    if rec["exc_type"] == "AssertionError" and harness.is_code_text(rec.get("message", "")):
        return True
    found = _upstream_line(rec)
    return found is not None and found[1] < len(found[0]) and ".asm[" in found[0][found[1]]


# the first line of numpy's and torch's value-comparison failures
_VALUE_COMPARISON = ("Not equal to tolerance", "Arrays are not equal", "Arrays are not almost equal",
                     "Tensor-likes are not", "Scalars are not")


def _compared_values(rec) -> bool:
    """An earlier run's failure raised by numpy's or torch's value comparison (the plugin
    once counted those ``fail``: the line that raises reads ``raise ...(msg)``)."""
    return rec["outcome"] == "fail" and rec.get("exc_type") == "AssertionError" and \
        rec.get("message", "").startswith(_VALUE_COMPARISON)


def _upstream_line(rec):
    """(lines of the upstream file, 0-based index) of an outcome's ``where``, or None."""
    fname, _, lineno = rec.get("where", "").rpartition(":")
    try:
        lines = (harness.upstream_dir() / harness.TEST_SUBDIR / fname).read_text().splitlines()
        return lines, int(lineno) - 1
    except (OSError, ValueError):
        return None


def _runs_child(rec) -> bool:
    """An earlier run's wrong result in a test that compares a child process's printed
    lines (the plugin now classifies those as failures: see plugin._compares_child_output)."""
    found = _upstream_line(rec)
    if found is None:
        return False
    lines, i = found
    start = next((j for j in range(min(i, len(lines) - 1), -1, -1)
                  if lines[j].lstrip().startswith("def test_")), None)
    return start is not None and any("subprocess.run(" in ln for ln in lines[start:i + 1])


def run(args, command=None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.setdefault("TILEJIT_NUM_THREADS", "1")
    # one thread per pytest process for numpy's BLAS and torch as well: --jobs processes of
    # as many threads as cores each oversubscribe the machine (a 1024x512x512 reference
    # matmul of test_mxfp8_mxfp4_matmul took 49 s instead of 9 s on a loaded 2-core host)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, "1")
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="tj-conformance-") as tmp:
        import threading
        stop, procs = threading.Event(), {}
        threads = [threading.Thread(target=_run_shard, args=(args, i, Path(tmp), env, stop, procs, command))
                   for i in range(args.jobs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(None if not args.deadline else max(0.0, start + args.deadline - time.time()))
        if any(t.is_alive() for t in threads):       # --deadline reached
            stop.set()
            for p in list(procs.values()):
                p.kill()
            for t in threads:
                t.join()
        outcomes = {}
        for i in range(args.jobs):
            outcomes.update(_read_log(Path(tmp) / f"shard{i}.jsonl")[0])
            selected = Path(tmp) / f"shard{i}.jsonl.selected"
            for tid in (selected.read_text().split("\n") if selected.exists() else []):
                if tid and tid not in outcomes:
                    outcomes[tid] = {"id": tid, "outcome": "not_run",
                                     "reason": f"not reached before --deadline {args.deadline} s"}
    return summarize(args, outcomes, time.time() - start)


def _cause(rec) -> str:
    """A failure's cause: its exception type and message with the specifics removed."""
    msg = rec.get("message", "")
    msg = re.sub(r"/\S+?\.py:\d+:\d+: ", "", msg)
    msg = re.sub(r"error in kernel '\w+' \| ", "", msg)
    msg = re.sub(r"'[^']*'|`[^`]*`", lambda m: m.group(0) if len(m.group(0)) < 40 else "'..'",
                 msg)
    msg = re.sub(r"\b0x[0-9a-f]+\b", "0x..", msg)          # object addresses
    msg = re.sub(r"\b\d+\b", "N", msg)
    return f"{rec.get('outcome')}: {rec.get('exc_type', '')}: {msg[:160]}"


# failure categories for the summary: (label, regex over "exc_type: message"), first match
CATEGORIES = [
    ("assertion on (or lookup of) the compiled code's text: PTX / TTGIR", r"^code_text"),
    ("triton.reinterpret / TensorWrapper / str_to_ty", r"reinterpret|TensorWrapper|str_to_ty"),
    ("JITFunction._unsafe_update_src (patched template kernels)", r"_unsafe_update_src"),
    ("triton.TritonError hierarchy / must_use_result", r"TritonError|must_use_result"),
    ("tuple / namedtuple / torch.Size arguments, tl.tuple",
     r"unsupported type builtins\.tuple|torch\.Size|has unsupported type test_tuple|"
     r"`triton\.language\.tuple`"),
    ("3-D / batched tl.dot", r"dot needs \d-[dD] operands|test_dot3d"),
    ("tl.dot_scaled / mxfp", r"dot_scaled|triton\.tools\.mxfp|mxfp"),
    ("fp8 variants (float8e4b15/e4b8/e5b16)", r"float8e4b15|float8e4b8|float8e5b16|fp8e4b15|fp_mantissa"),
    ("tl.dot input_precision bf16x3/bf16x6", r"got 'bf16x"),
    ("atomics on 8/16-bit and bf16 types", r"atomic"),
    ("triton.knobs", r"knobs"),
    ("x.shape == [..] / block_shape == [..]", r"block_shape ==|\.shape =="),
    ("tensor.cast / tensor.item / typed literals", r"'cast'|\.cast|'item'|\.item"),
    ("tl.const / tl.condition / tl.map_elementwise", r"tl\.const|`triton\.language\.const`|condition|map_elementwise"),
    ("libdevice coverage", r"libdevice"),
    ("dtype repr / names", r"triton\.language\.\w+' ==|== 'triton\.language"),
    ("randint / random", r"test_randint|test_rand|philox"),
    ("swizzle2d", r"swizzle"),
    ("value specialization naming (kernel name)", r"test_value_specialization"),
    ("associative_scan / scans", r"scan|cumsum|cumprod"),
    ("device_print format", r"test_print"),
    ("timeouts (hang or slow compile)", r"^timeout|^crash"),
    ("compile errors Triton raises that tilejit does not", r"DID NOT RAISE"),
    ("error message differs from Triton's", r"Regex pattern did not match|match="),
    ("unsupported Triton name (other)", r"UnsupportedTritonFeature|UnsupportedTritonModule|does not support"),
]


def categorize(outcomes: dict) -> list:
    """[(label, count, [example ids])] of the failing outcomes, largest first."""
    groups: dict = {}
    for tid, rec in outcomes.items():
        if rec["outcome"] not in FAILING:
            continue
        text = f"{rec['outcome']}: {rec.get('exc_type', '')}: {rec.get('message', '')} [{tid}]"
        label = next((lab for lab, rx in CATEGORIES if re.search(rx, text)), None)
        if label is None:
            label = "other: " + _cause(rec)[:90]
        groups.setdefault(label, []).append(tid)
    return sorted(((lab, len(ids), ids[:3]) for lab, ids in groups.items()),
                  key=lambda x: -x[1])


def summary_markdown(result: dict) -> str:
    c = result["counts"]
    lines = [f"# Conformance failures: backend {result['backend']}, sample 1/{result['sample']}",
             "", f"`{result['command']}` at {result['commit'][:10]}, {result['date']}.", "",
             f"{c.get('pass', 0)} of {result['applicable']} applicable tests pass "
             f"({100 * (result['pass_rate'] or 0):.1f}%); wrong results: "
             f"{c.get('wrong_result', 0)}; asserts on code text: {c.get('code_text', 0)}; "
             f"counts: {c}."
             + (" **Partial**: stopped at --deadline; `not_run` tests were not reached."
                if result.get("partial") else ""), "",
             "## Failures by cause", "", "| cause | tests | examples |", "| --- | --- | --- |"]
    for label, n, ids in categorize(result["outcomes"]):
        lines.append(f"| {label.replace('|', '/')} | {n} | {'<br>'.join(ids).replace('|', '/')} |")
    for kind, title in (("wrong_result", "Wrong results"),
                        ("code_text", "Assertions on (or lookups of) the compiled code's text")):
        lines += ["", f"## {title}", ""]
        lines += [f"- `{t}`: {r.get('message', '')[:200]}" for t, r in result["outcomes"].items()
                  if r["outcome"] == kind]
    return "\n".join(lines) + "\n"


def summarize(args, outcomes: dict, seconds: float) -> dict:
    counts = Counter(r["outcome"] for r in outcomes.values())
    applicable = sum(counts[k] for k in ("pass",) + FAILING)
    causes = Counter(_cause(r) for r in outcomes.values() if r["outcome"] in FAILING)
    return {
        "command": "python scripts/conformance.py " + " ".join(sys.argv[1:]),
        "backend": args.backend, "device": args.device, "sample": args.sample,
        "stride": args.stride, "shard": getattr(args, "shard", "0/1"),
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "commit": _git_commit(), "seconds": round(seconds, 1),
        "counts": dict(sorted(counts.items())), "applicable": applicable,
        "partial": bool(counts.get("not_run")),
        "pass_rate": round(counts["pass"] / applicable, 4) if applicable else None,
        "causes": [{"count": n, "cause": c} for c, n in causes.most_common()],
        "outcomes": dict(sorted(outcomes.items())),
    }


def _git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True).stdout.strip()
    except OSError:
        return ""


def check(result: dict, expected_path: Path) -> list[str]:
    """What makes CI red: a test failing that is not a known failure, a wrong result
    not listed as known, fewer passes than the recorded floor."""
    exp = json.loads(expected_path.read_text())
    known = (set(exp["known_failing"]) | set(exp["known_wrong_result"])
             | set(exp.get("unmeasured", [])))
    problems = []
    for tid, rec in result["outcomes"].items():
        o = rec["outcome"]
        if o == "wrong_result" and tid not in exp["known_wrong_result"]:
            problems.append(f"{tid}: wrong result (not a known one): {rec.get('message', '')}")
        elif o in FAILING and tid not in known:
            problems.append(f"{tid}: {o}: {rec.get('exc_type', '')}: {rec.get('message', '')}")
    passed = result["counts"].get("pass", 0)
    if passed < exp["pass_floor"]:
        problems.append(f"{passed} tests pass, fewer than the floor {exp['pass_floor']}")
    return problems


def expected_from(result: dict, sample: int) -> dict:
    outs = result["outcomes"]
    return {
        "about": "Known failures of the CI conformance sample (tests/conformance/"
                 "test_conformance_ci.py); remove an id when it passes.",
        "sample": sample[0], "stride": sample[1], "pass_floor": result["counts"].get("pass", 0),
        "known_wrong_result": sorted(t for t, r in outs.items()
                                     if r["outcome"] == "wrong_result"),
        "known_failing": sorted(t for t, r in outs.items()
                                if r["outcome"] in FAILING and r["outcome"] != "wrong_result"),
        "known_hangs": sorted(t for t, r in outs.items() if r["outcome"] in ("timeout", "crash")),
    }


def main(argv=None) -> int:
    args = _parse(argv)
    args.device = args.device or ("cuda" if args.backend == "cuda" else "cpu")
    if args.merge:
        parts = [json.loads(Path(p).read_text()) for p in args.merge]
        for k in ("backend", "device", "sample"):
            setattr(args, k, parts[0][k])
        outcomes = {}
        for part in parts:          # a later part's outcome wins, except a not_run
            for tid, rec in part["outcomes"].items():
                if rec["outcome"] != "not_run" or tid not in outcomes:
                    outcomes[tid] = rec
        args.shard = "+".join(p.get("shard", "0/1") for p in parts)
        result = summarize(args, outcomes, sum(p["seconds"] for p in parts))
        result["command"] = " + ".join(p["command"] for p in parts)
    elif args.rescore:
        old = json.loads(Path(args.rescore).read_text())
        table = harness.read_not_applicable(ROOT / "tests" / "conformance" / "not_applicable.txt")
        for tid, rec in old["outcomes"].items():
            reason = harness.not_applicable_reason(tid, table)
            if reason is not None:
                old["outcomes"][tid] = {"id": tid, "outcome": "not_applicable", "reason": reason}
            elif _asserts_code_text(rec):
                rec["outcome"] = "code_text"
            elif rec["outcome"] == "wrong_result" and _runs_child(rec):
                rec["outcome"] = "fail"
            elif _compared_values(rec):
                rec["outcome"] = "wrong_result"
        for k in ("backend", "device", "sample"):
            setattr(args, k, old[k])
        args.shard = old.get("shard", args.shard)
        result = summarize(args, old["outcomes"], old["seconds"])
        result["command"], result["date"], result["commit"] = (old["command"], old["date"],
                                                                old["commit"])
    else:
        result = run(args)
    out = Path(args.out) if args.out else (
        ROOT / "bench" / "results" / f"conformance_{args.backend}_sample{args.sample}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    c = result["counts"]
    print(f"{args.backend}: {c.get('pass', 0)} of {result['applicable']} applicable pass "
          f"({100 * (result['pass_rate'] or 0):.1f}%), wrong results {c.get('wrong_result', 0)}, "
          f"code text {c.get('code_text', 0)}, "
          f"{'PARTIAL (--deadline), ' if result.get('partial') else ''}"
          f"counts {c}, {result['seconds']} s -> {out}")
    if args.summary_md:
        Path(args.summary_md).write_text(summary_markdown(result))
    if args.write_expected:
        Path(args.write_expected).write_text(
            json.dumps(expected_from(result, (args.sample, args.stride)), indent=1) + "\n")
    if args.check:
        problems = check(result, Path(args.check))
        for p in problems:
            print("CONFORMANCE REGRESSION:", p)
        exp = json.loads(Path(args.check).read_text())
        fixed = [t for t in exp["known_failing"] + exp["known_wrong_result"]
                 if result["outcomes"].get(t, {}).get("outcome") == "pass"]
        if fixed:
            print("now passing (remove from", args.check + "):", *fixed, sep="\n  ")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
