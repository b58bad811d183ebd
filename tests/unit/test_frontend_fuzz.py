"""Random scalar programs (rebinding, if/else, loops, helpers with early returns)
compiled by the frontend and run on the interpreter, against the same program run
by Python with int32 wrap-around and C division.  Longer runs:
TILEJIT_FUZZ_EXAMPLES=500."""
import importlib.util
import os
import random

import numpy as np
from hypothesis import given, settings, strategies as st

from tilejit import interpreter
from tilejit.backends import Buffer, LaunchArgs
from tilejit.frontend import build_ir
from tilejit.ir.types import PointerType, int32
from tilejit.ir.verifier import verify_function

N_VARS = 4
EXAMPLES = int(os.environ.get("TILEJIT_FUZZ_EXAMPLES", "30"))

HEADER = '''import tilejit
import tilejit.language as tl


def w(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def cdiv(a, b):
    q = abs(a) // abs(b)
    return w(q if (a < 0) == (b < 0) else -q)


def crem(a, b):
    return w(a - b * cdiv(a, b))


@tilejit.jit
def helper(x, y):
    if x > y:
        return x - y
    elif x == y:
        return x
    return y * 2 - x


def helper_model(x, y):
    if x > y:
        return w(x - y)
    elif x == y:
        return x
    return w(w(y * 2) - x)

'''


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.loop_vars = []

    def var(self):
        names = [f"v{i}" for i in range(N_VARS)] + self.loop_vars
        return self.r.choice(names)

    def operand(self, depth):
        """A right-hand operand: an expression or a small constant."""
        if self.r.random() < 0.4:
            c = str(self.r.randint(-20, 20))
            return f"({c})", f"({c})"
        return self.expr(depth)

    def expr(self, depth=0):
        """(kernel text, model text) of an int32 expression; its leftmost leaf is a
        variable, so no subexpression is a compile-time constant (those fold with
        Python's arbitrary-precision semantics, as in Triton)."""
        r = self.r
        if depth > 2 or r.random() < 0.3:
            v = self.var()
            return v, v
        k = r.randrange(8)
        a, am = self.expr(depth + 1)
        if k < 5:
            b, bm = self.operand(depth + 1)
            op = ["+", "-", "*", "&", r.choice("|^")][k]
            return f"({a} {op} {b})", f"w({am} {op} {bm})"
        if k == 5:
            d = r.choice([3, 7, -5, 16])
            return (f"({a} // {d})", f"cdiv({am}, {d})") if r.random() < 0.5 else \
                (f"({a} % {d})", f"crem({am}, {d})")
        if k == 6:
            sh = r.randint(0, 5)
            return (f"({a} << {sh})", f"w({am} << {sh})") if r.random() < 0.5 else \
                (f"({a} >> {sh})", f"({am} >> {sh})")
        b, bm = self.expr(depth + 1)
        if r.random() < 0.3:
            c, cm = self.cond()
            return f"({a} if {c} else {b})", f"({am} if {cm} else {bm})"
        if r.random() < 0.5:
            return f"helper({a}, {b})", f"helper_model({am}, {bm})"
        return f"(-{a} + {b})", f"w(w(-{am}) + {bm})"

    def cond(self):
        a, am = self.expr(1)
        b, bm = self.operand(1)
        op = self.r.choice(["<", "<=", ">", ">=", "==", "!="])
        return f"{a} {op} {b}", f"{am} {op} {bm}"

    def block(self, indent, depth):
        lines_k, lines_m = [], []
        for _ in range(self.r.randint(1, 3)):
            k, m = self.stmt(indent, depth)
            lines_k += k
            lines_m += m
        return lines_k, lines_m

    def stmt(self, indent, depth):
        r = self.r
        pad = "    " * indent
        choice = r.random()
        if depth < 2 and choice < 0.2:
            c, cm = self.cond()
            tk, tm = self.block(indent + 1, depth + 1)
            ek, em = self.block(indent + 1, depth + 1)
            return ([f"{pad}if {c}:"] + tk + [f"{pad}else:"] + ek,
                    [f"{pad}if {cm}:"] + tm + [f"{pad}else:"] + em)
        if depth < 2 and choice < 0.27:
            cnt = f"c{depth}"
            limit = r.choice(["2", "n"])
            bk, bm = self.block(indent + 1, depth + 1)
            return ([f"{pad}{cnt} = 0", f"{pad}while {cnt} < {limit}:"] + bk + [f"{pad}    {cnt} += 1"],
                    [f"{pad}{cnt} = 0", f"{pad}while {cnt} < {limit}:"] + bm + [f"{pad}    {cnt} = w({cnt} + 1)"])
        if depth < 2 and choice < 0.4:
            lv = f"i{depth}"
            bound = r.choice(["3", "n", "0", "(n % 4)"])
            bound_m = bound.replace("(n % 4)", "crem(n, 4)")
            self.loop_vars.append(lv)
            bk, bm = self.block(indent + 1, depth + 1)
            self.loop_vars.pop()
            return ([f"{pad}for {lv} in range(0, {bound}):"] + bk,
                    [f"{pad}for {lv} in range(0, {bound_m}):"] + bm)
        target = f"v{r.randrange(N_VARS)}"
        e, em = self.expr()
        if r.random() < 0.3:
            op = r.choice("+-^")
            return [f"{pad}{target} {op}= {e}"], [f"{pad}{target} = w({target} {op} {em})"]
        return [f"{pad}{target} = {e}"], [f"{pad}{target} = {em}"]


def make_program(seed):
    g = Gen(seed)
    init_k = [f"    v{i} = a + {i}" if i % 2 else f"    v{i} = b - {i}" for i in range(N_VARS)]
    init_m = [f"    v{i} = w(a + {i})" if i % 2 else f"    v{i} = w(b - {i})" for i in range(N_VARS)]
    body_k, body_m = g.block(1, 0)
    stores = [f"    tl.store(out_ptr + {i}, v{i})" for i in range(N_VARS)]
    kernel = ["@tilejit.jit", "def kernel(out_ptr, a, b, n):"] + init_k + body_k + stores
    model = ["def model(a, b, n):"] + init_m + body_m + [f"    return [{', '.join(f'v{i}' for i in range(N_VARS))}]"]
    return HEADER + "\n".join(kernel) + "\n\n\n" + "\n".join(model) + "\n"


def load(src, tmp_path, seed):
    path = tmp_path / f"fuzz_kernel_{seed}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@settings(max_examples=EXAMPLES, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), a=st.integers(-2**31, 2**31 - 1), b=st.integers(-1000, 1000),
       n=st.integers(0, 6))
def test_random_programs_match_python(tmp_path_factory, seed, a, b, n):
    src = make_program(seed)
    mod = load(src, tmp_path_factory.mktemp("fuzz"), seed)
    out = np.zeros(N_VARS, np.int32)
    # the frontend's IR, verified and run as built (no passes)
    func = build_ir(mod.kernel, {"out_ptr": PointerType(int32), "a": int32, "b": int32, "n": int32}, {})
    verify_function(func)
    addr = out.ctypes.data
    interpreter.run(func, (1, 1, 1), LaunchArgs([addr, a, b, n], [Buffer("out", addr, out.nbytes, 4)]))
    expect = mod.model(a, b, n)
    assert out.tolist() == expect, src
