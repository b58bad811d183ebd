"""Kernels shared by unit and end-to-end tests (importable as ``tests.shared_kernels`` from
either tier): the @jit definitions of the tutorial scripts in tests/triton_scripts/, and a
bias + GELU kernel whose bias load ``bias_ptr + offs % C`` needs the sign of ``offs``."""
import ast
import os

import pytest

import tilejit
import tilejit.language as tl

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "tests", "triton_scripts")


def script_kernels(script):
    """Namespace holding the script's @jit functions (its top level otherwise not run)."""
    from tilejit.compat import install_triton_alias
    install_triton_alias()
    path = os.path.join(SCRIPTS, script)
    tree = ast.parse(open(path).read(), path)
    keep = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)) or
            (isinstance(n, ast.FunctionDef) and (n.decorator_list or not n.args.defaults))]
    ns = {"__name__": "tutorial_" + script[:-3], "__file__": path}
    code = compile(ast.Module(body=keep, type_ignores=[]), path, "exec")
    try:
        exec(code, ns)
    except ImportError as e:
        pytest.skip(f"{script}: {e}")
    return ns


@tilejit.jit
def bias_gelu(x_ptr, bias_ptr, out_ptr, n, C, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(bias_ptr + offs % C, mask=mask, other=0.0).to(tl.float32)
    y = x + b
    y = 0.5 * y * (1.0 + tl.erf(y * 0.7071067811865476))
    tl.store(out_ptr + offs, y.to(tl.float16), mask=mask)
