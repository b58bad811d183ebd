"""A failing value analysis is a compile error naming the kernel and its file, on the
cpu and cuda backends alike (no silent fallback to scalar code), and
``TILEJIT_VECTORIZE=0`` (the workaround the message names) compiles without it."""
import pytest

import tilejit
import tilejit.analysis as A
import tilejit.language as tl
from tilejit.runtime.options import use_options


@tilejit.jit
def copy_rows(X, Y, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs))


SIG = {"X": "*fp32", "Y": "*fp32"}


@pytest.fixture
def broken_rule(monkeypatch):
    def transfer(ctx):
        def fail(op, solver):
            raise KeyError(f"no rule for {op.name}")
        return fail
    monkeypatch.setattr(A, "_transfer", transfer)


@pytest.mark.parametrize("target", ["cpu", "cuda:90", "cuda:80"])
def test_failing_analysis_names_the_kernel(broken_rule, target):
    with pytest.raises(A.AnalysisError) as ei:
        tilejit.compile(copy_rows, signature=SIG, constexprs={"BLOCK": 128}, target=target)
    msg = str(ei.value)
    assert "kernel 'copy_rows'" in msg and "test_analysis_failure.py" in msg
    assert "KeyError" in msg and "TILEJIT_VECTORIZE=0" in msg
    assert isinstance(ei.value.__cause__, KeyError)


@pytest.mark.parametrize("target", ["cpu", "cuda:90"])
def test_vectorize_off_compiles_without_the_analysis(broken_rule, target):
    with use_options(vectorize=False):
        k = tilejit.compile(copy_rows, signature=SIG, constexprs={"BLOCK": 128}, target=target)
    assert k is not None


def test_a_failing_fact_lookup_is_an_error_not_scalar_code():
    """The CUDA lowering asks the facts of each value through ``Lowering.axis``: without an
    analysis it assumes nothing (None); a lookup that fails raises (a compile error naming
    the op, from the rule driver), never silently the code made without the facts."""
    from tilejit.backends.cuda.lowering import Lowering

    class Failing:
        def axis(self, value):
            raise KeyError("no facts for this value")
    lw = Lowering.__new__(Lowering)
    lw.facts = None
    assert lw.axis(object()) is None
    lw.facts = Failing()
    with pytest.raises(KeyError, match="no facts for this value"):
        lw.axis(object())
