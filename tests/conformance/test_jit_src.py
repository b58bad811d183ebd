"""``JITFunction.src`` starts at the ``def`` line, as Triton's does: torch.compile reads
a user kernel's ``src`` and parses it as a function definition (torch's
``after_aot.write_kernel_dependencies`` prefixes ``def `` to a source that does not start
with it), so a ``src`` holding ``@triton.jit`` failed every Liger test that compiles a
Liger op (``SyntaxError: invalid syntax``).  Locations in error messages still name the
file's lines."""
import ast

import pytest

import tilejit
import tilejit.language as tl


@tilejit.autotune(configs=[tilejit.Config({"B": 16})], key=[])
@tilejit.jit(
    do_not_specialize=[],
)
def decorated_kernel(x_ptr, B: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, B), tl.arange(0, B))


@tilejit.jit
def bad_kernel(x_ptr):
    x = tl.load(x_ptr)
    tl.store(x_ptr, x + undefined_name)  # noqa: F821


def test_src_starts_at_def_and_parses():
    src = decorated_kernel.fn.src
    assert src.startswith("def decorated_kernel("), src[:60]
    tree = ast.parse(src)
    assert isinstance(tree.body[0], ast.FunctionDef) and not tree.body[0].decorator_list
    full = src if src.strip().startswith("def ") else "def " + src     # torch's reading
    ast.parse(full)


def test_error_lines_are_the_files():
    with pytest.raises(tilejit.CompilationError) as info:
        tilejit.compile(bad_kernel, signature={0: "*fp32"}, target="cpu")
    assert f"{bad_kernel.file}:{bad_kernel.first_line + 3}:" in str(info.value), str(info.value)
    assert "undefined_name" in str(info.value)


def test_constexpr_annotation_names_a_triton_module(tmp_path):
    """torch.compile writes a kernel's annotated global ``X: tl.constexpr = ...`` as
    ``X: <constexpr.__module__>.constexpr = ...`` into a file importing only ``triton``
    (Liger's ``_REDUCTION_MODE_NONE``: "NameError: name 'tilejit' is not defined"): under
    the alias the class names Triton's module; without it, tilejit's."""
    import subprocess
    import sys
    code = (
        "import tilejit.language as tjl; before = tjl.constexpr.__module__\n"
        "import tilejit.compat as c; c.install_triton_alias()\n"
        "import triton, triton.language as tl\n"
        "line = f'X: {tl.constexpr.__module__}.{tl.constexpr.__name__} = tl.constexpr(0)'\n"
        "ns = {'triton': triton, 'tl': tl}; exec(line, ns)\n"
        "c.uninstall_triton_alias()\n"
        "print(before, line, ns['X'].value, tjl.constexpr.__module__)\n")
    import os
    from pathlib import Path
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["tilejit.language.core", "X:", "triton.language.core.constexpr", "=",
                                "tl.constexpr(0)", "0", "tilejit.language.core"]
