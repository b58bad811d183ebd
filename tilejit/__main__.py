"""``python -m tilejit``: demo, run, dump, cache, bench.

    python -m tilejit demo [...]                 the guided demo (tilejit/demo.py)
    python -m tilejit run script.py [args...]    run a Triton script on tilejit
    python -m tilejit explain script.py [...]    run it, printing each kernel's paths and why
    python -m tilejit dump FILE KERNEL -s '*fp32,*fp32,i32' -c BLOCK=1024 --stage llir
    python -m tilejit cache info|clear
    python -m tilejit bench [script.py [args...]]
    python -m tilejit --version

The same commands are installed as the ``tilejit`` console script.
"""
from __future__ import annotations

import argparse
import os
import sys


def _cmd_demo(args) -> int:
    from tilejit.demo import main
    rest = (["--backend", args.backend] if getattr(args, "backend", None) else []) + list(args.rest)
    return main(rest) or 0


def run_script(path: str, argv: list[str]) -> int:
    """Run ``path`` as ``__main__`` with ``triton`` (and ``torchinductor``) aliased."""
    import runpy
    from tilejit.compat import (UnsupportedTritonFeature, UnsupportedTritonModule,
                                install_inductor_alias, install_triton_alias)
    install_triton_alias()
    install_inductor_alias()
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [path] + list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        runpy.run_path(path, run_name="__main__")
    except (UnsupportedTritonFeature, UnsupportedTritonModule) as e:
        print(f"tilejit: unsupported Triton feature in {path}: {e}", file=sys.stderr)
        return 2
    except SystemExit as e:
        code = e.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return 0


def _cmd_run(args) -> int:
    if not os.path.exists(args.script):
        print(f"tilejit run: no such file: {args.script}", file=sys.stderr)
        return 2
    return run_script(args.script, args.args)


def _cmd_explain(args) -> int:
    """``run``, with ``options.explain`` on: each kernel's paths are printed as it compiles."""
    if not os.path.exists(args.script):
        print(f"tilejit explain: no such file: {args.script}", file=sys.stderr)
        return 2
    from tilejit.runtime.options import use_options
    with use_options(explain=True):
        return run_script(args.script, args.args)


def _cache_source(given) -> str:
    """Where the cache directory's name came from (runtime/options.py's order)."""
    if given:
        return "--dir"
    if os.environ.get("TILEJIT_CACHE_DIR", ""):
        return "TILEJIT_CACHE_DIR"
    if os.path.isabs(os.environ.get("XDG_CACHE_HOME", "").strip()):
        return "XDG_CACHE_HOME ($XDG_CACHE_HOME/tilejit)"
    return "the default (~/.cache/tilejit; XDG_CACHE_HOME unset or not absolute)"


def _cmd_cache(args) -> int:
    from tilejit.runtime.cache import get_cache
    c = get_cache(args.dir)
    if args.action == "info":
        info = c.info()
        where = info["dir"] or "(memory)"
        print(f"tilejit cache: {where}" + ("  (memory only: " + info.get("reason", "") + ")"
                                           if info.get("memory_only") else ""))
        print(f"  location from {_cache_source(args.dir)}")
        cap = info.get("max_bytes") or 0
        limit = f"limit {cap} bytes ({cap / 2**20:.0f} MiB; TILEJIT_CACHE_SIZE)" if cap else "no limit"
        print(f"  {info['entries']} entries, {info['bytes']} bytes, {limit}")
        for ns, v in sorted(info["namespaces"].items()):
            print(f"  {ns}: {v['entries']} entries, {v['bytes']} bytes")
    else:
        n = c.clear()
        print(f"tilejit cache: removed {n} entries from {c.dir}")
    return 0


def _cmd_dump(args) -> int:
    from tilejit.compat.dump import dump_stages
    try:
        stages = dump_stages(args.file, args.kernel, args.signature, args.constexpr,
                             target=args.target, spec=args.spec, num_warps=args.num_warps)
    except Exception as e:  # the message is the interface here; no traceback
        print(f"tilejit dump: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    if args.stage in (None, "list"):
        print("stages:", " ".join(stages))
        return 0
    names = list(stages) if args.stage == "all" else [args.stage]
    for name in names:
        if name not in stages:
            print(f"tilejit dump: no stage {name!r}; stages: {' '.join(stages)}", file=sys.stderr)
            return 1
        if len(names) > 1:
            print(f"// ----- {name} -----")
        print(stages[name].rstrip("\n"))
    return 0


def _cmd_bench(args) -> int:
    if args.script:
        return run_script(args.script, args.args)
    from tilejit.compat.quickbench import main
    return main()


def _versions() -> str:
    """The versions that decide what tilejit compiles: Python, numpy, llvmlite's LLVM."""
    import platform
    import llvmlite
    import llvmlite.binding as llvm
    llvm_text = f"llvmlite {llvmlite.__version__}, LLVM {'.'.join(map(str, llvm.llvm_version_info))}"
    import numpy
    return f"Python {platform.python_version()}, numpy {numpy.__version__}, {llvm_text}"


def build_parser(prog: str = "python -m tilejit") -> argparse.ArgumentParser:
    from tilejit import __version__
    p = argparse.ArgumentParser(prog=prog,
                                description="tilejit: a compiler for Triton-language kernels "
                                "(`tilejit ...` and `python -m tilejit ...` are the same).")
    p.add_argument("--version", action="version", version=f"tilejit {__version__} ({_versions()})")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    d = sub.add_parser("demo", help="the guided demo", description="Run tilejit's demo.")
    d.add_argument("--backend", default=None, choices=("interpreter", "cpu", "cuda"),
                   help="run on this backend instead of the default")
    d.add_argument("rest", nargs=argparse.REMAINDER, help="arguments for the demo")
    d.set_defaults(func=_cmd_demo)
    r = sub.add_parser("run", help="run a Triton script on tilejit",
                       description="Run SCRIPT with `triton`, `triton.language`, `triton.testing` "
                       "(and `torchinductor`) resolved to tilejit. Unsupported Triton features "
                       "fail with a message naming them (exit status 2).")
    r.add_argument("script")
    r.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    r.set_defaults(func=_cmd_run)
    u = sub.add_parser("dump", help="print a compilation stage of a kernel",
                       description="Compile KERNEL from FILE for a signature and target and print "
                       "one stage: the tile IR, each pass, analysis facts, LLVM IR, assembly, PTX. "
                       "--stage list shows the stages, --stage all prints every one.")
    u.add_argument("file")
    u.add_argument("kernel")
    u.add_argument("-s", "--signature", required=True,
                   help="argument types in order or by name: '*fp32,*fp32,i32' or 'x=*fp32,n=i32'")
    u.add_argument("-c", "--constexpr", action="append", default=[], metavar="NAME=VALUE",
                   help="a constexpr value (repeatable)")
    u.add_argument("--spec", action="append", default=[], metavar="NAME=DIV[:1]",
                   help="specialization of an argument: divisibility, ':1' for equal to 1")
    u.add_argument("-t", "--target", default="cpu",
                   help="cpu (default), interpreter, cuda, cuda:80, cuda:90 (PTX needs no GPU)")
    u.add_argument("--num-warps", type=int, default=4, help="CUDA launch shape (default 4)")
    u.add_argument("--stage", default="list", help="stage name, 'list' or 'all'")
    u.set_defaults(func=_cmd_dump)
    x = sub.add_parser("explain", help="run a Triton script, printing each kernel's paths",
                       description="Run a Triton script on tilejit (as `run`) and print, as each "
                       "kernel compiles, the path of every load, store, dot and reduction (vector "
                       "width, cp.async ring or not) and, where a faster path was not taken, the "
                       "fact not proven and where it was lost (file:line:col).  Same as "
                       "TILEJIT_EXPLAIN=1.")
    x.add_argument("script")
    x.add_argument("args", nargs=argparse.REMAINDER)
    x.set_defaults(func=_cmd_explain)
    c = sub.add_parser("cache", help="show or clear the disk cache",
                       description="Inspect (info) or empty (clear) the compiled-kernel cache "
                       "(TILEJIT_CACHE_DIR, else $XDG_CACHE_HOME/tilejit, else ~/.cache/tilejit; "
                       "size limit TILEJIT_CACHE_SIZE).")
    c.add_argument("action", choices=("info", "clear"))
    c.add_argument("--dir", default=None, help="cache directory (default: the configured one)")
    c.set_defaults(func=_cmd_cache)
    b = sub.add_parser("bench", help="run a benchmark script, or a quick built-in benchmark",
                       description="With SCRIPT, run it like `run` (Triton benchmark scripts "
                       "using triton.testing work unchanged); without, time a vector add on "
                       "the selected backend against numpy.")
    b.add_argument("script", nargs="?")
    b.add_argument("args", nargs=argparse.REMAINDER)
    b.set_defaults(func=_cmd_bench)
    return p


def main(argv=None, prog: str = "python -m tilejit") -> int:
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    return args.func(args)


def cli() -> int:
    """The ``tilejit`` console script."""
    return main(prog="tilejit")


if __name__ == "__main__":
    sys.exit(main())
