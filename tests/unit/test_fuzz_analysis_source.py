"""Fuzz the analysis through the frontend: random index expressions written as kernel
*source*, launched with ``kernel[grid](...)`` on the interpreter with the claim checker
on (``check_analysis``), and on the CPU backend when available (bit-exact agreement).

Bounded for CI; ``TILEJIT_FUZZ_EXAMPLES=N`` runs N examples instead.
"""
import importlib.util
import itertools
import os
import random
import sys

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from tilejit.runtime.options import use_options

EXAMPLES = int(os.environ.get("TILEJIT_FUZZ_EXAMPLES", "0") or 0)
CONSTS = ["0", "1", "2", "3", "4", "7", "8", "16", "31", "64", "1000", "-1", "-4", "-8", "-16",
          "2147483647", "-2147483648", "65536"]
OPS = ["+", "-", "*", "//", "%", "<<", ">>", "&", "|", "^", "//", "%", ">>", "&"]
_counter = itertools.count()

TEMPLATE = '''
import tilejit
import tilejit.language as tl


@tilejit.jit
def kernel(src_ptr, dst_ptr, n0, n1, n2, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    pid = tl.program_id(0)
    x = {expr}
    tl.store(dst_ptr + pid * BLOCK + offs, x)
'''


class _Src:
    def __init__(self, r: random.Random):
        self.r = r

    def leaf(self):
        r = self.r
        return r.choice([
            "offs", "offs", "(pid * BLOCK + offs)", "(offs - {c})".format(c=r.choice(["8", "16", "3", "n0"])),
            "(BLOCK - 1 - offs)", "pid", "n0", "n1", "n2", r.choice(CONSTS),
            "tl.load(src_ptr + (offs & 63))",
            "(offs * {s} + {o})".format(s=r.choice(["2", "4", "-1", "n1"]), o=r.choice(CONSTS)),
            # tutorial 03's `(pid_m * BLOCK_SIZE_M + arange) % M`: by an argument (never 0;
            # specialised when a multiple of 16) or a constant
            "((pid * BLOCK + offs) {op} {d})".format(op=r.choice(["%", "//"]),
                                                     d=r.choice(["n0", "n1", "n2", "16", "48"])),
        ])

    def expr(self, depth):
        r = self.r
        if depth <= 0:
            return self.leaf()
        kind = r.choice(["bin", "bin", "bin", "bin", "where", "minmax", "neg", "leaf", "load"])
        if kind == "leaf":
            return self.leaf()
        a = self.expr(depth - 1)
        if kind == "neg":
            return f"(-{a})" if a not in CONSTS else "(-offs)"
        if kind == "load":
            return f"tl.load(src_ptr + ({a} & 63))"
        b = self.expr(depth - 1) if r.random() < 0.5 else r.choice(CONSTS)
        if a in CONSTS and b in CONSTS:     # Python would fold it (possibly out of int32)
            b = "offs"
        if kind == "where":
            return f"tl.where({a} {r.choice(['<', '>=', '==', '!='])} {b}, {a}, {b})"
        if kind == "minmax":
            return f"tl.{r.choice(['minimum', 'maximum'])}({a}, {b})"
        op = r.choice(OPS)
        if op in ("//", "%"):
            b = f"tl.where({b} == 0, 1, {b})"
        if op in ("<<", ">>"):
            b = f"({b} & 31)"
        return f"({a} {op} {b})"


def make_kernel(seed, tmp_dir):
    r = random.Random(seed)
    expr = _Src(r).expr(r.randint(1, 3))
    name = f"fuzzsrc_{os.getpid()}_{next(_counter)}"
    path = os.path.join(tmp_dir, name + ".py")
    with open(path, "w") as f:
        f.write(TEMPLATE.format(expr=expr))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    block = r.choice([1, 4, 16, 32])
    args = [r.choice([1, 16 * r.randint(-1000, 1000), r.randint(-50, 50), r.randint(-2**31, 2**31 - 1)])
            for _ in range(3)]
    args = [a or 16 for a in args]          # divisors of the `% n` leaves: never 0
    src = np.array([r.randint(-2**31, 2**31 - 1) for _ in range(64)], np.int32)
    return mod.kernel, expr, block, args, r.randint(1, 3), src


def _launch(kernel, block, args, grid, src):
    # the expression is int32 unless promotion widened it: store through an int64 view
    dst = np.zeros(grid * block, np.int64)
    kernel[(grid,)](src, dst, *args, BLOCK=block)
    return dst


@settings(max_examples=EXAMPLES or 30, deadline=None, derandomize=not EXAMPLES,
          suppress_health_check=list(HealthCheck))
@given(st.integers(0, 2**32 - 1))
def test_source_kernels_under_the_checker(tmp_path_factory, seed):
    kernel, expr, block, args, grid, src = make_kernel(seed, str(tmp_path_factory.getbasetemp()))
    with use_options(backend="interpreter", interpret=True, check_analysis=True):
        ref = _launch(kernel, block, args, grid, src)
    from tilejit.backends import available_backends
    if "cpu" in available_backends():
        with use_options(backend="cpu", interpret=False):
            out = _launch(kernel, block, args, grid, src)
        np.testing.assert_array_equal(out, ref, err_msg=expr)


def test_source_fuzzer_generates_the_interesting_shapes():
    exprs = [_Src(random.Random(s)).expr(3) for s in range(200)]
    text = " ".join(exprs)
    for needle in ("BLOCK - 1 - offs", "//", "%", ">>", "tl.where", "tl.load", "pid * BLOCK",
                   "(pid * BLOCK + offs) % n", "(pid * BLOCK + offs) // n"):
        assert needle in text, needle
