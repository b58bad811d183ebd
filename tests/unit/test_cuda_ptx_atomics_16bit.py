"""16-bit atomics on NVPTX: fp16 add is ``atom.add.noftz.f16``; bf16 add is
``atom.add.noftz.bf16`` on sm_90 and a compare-and-swap loop before it; 16-bit CAS is
``atom.cas.b16``; each kernel assembles with ptxas.  Values: tests/e2e/test_atomics_16bit.py."""
import re

import pytest

import tilejit
from tilejit.backends.cuda import target as tgt

from tests.e2e import test_atomics_16bit as A

needs_ptxas = pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")


def _ptx(kernel, sig, arch, **cx):
    return tilejit.compile(kernel, signature=sig, constexprs=cx, target=f"cuda:{arch}").asm["ptx"]


def _atoms(ptx):
    return set(re.findall(r"atom\.[\w.]+", re.sub(r"//[^\n]*", "", ptx)))


@needs_ptxas
@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("dt", ["fp16", "bf16"])
def test_float16_add(arch, dt):
    sig = {0: f"*{dt}", 1: f"*{dt}", 2: f"*{dt}", 3: "i32"}
    ptx = _ptx(A.add_tile, sig, arch, NZ=4, BLOCK=64)
    atoms = _atoms(ptx)
    if dt == "bf16" and arch < 90:       # no bf16 atom before sm_90: a CAS loop
        assert atoms and all(".cas." in a for a in atoms), atoms
        assert not any("bf16" in a for a in atoms)
    else:
        assert atoms == {f"atom.global.gpu.relaxed.add.noftz.{'f16' if dt == 'fp16' else 'bf16'}"}, atoms
    tgt.ptxas(ptx, arch)


@needs_ptxas
@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("dt", ["fp16", "bf16", "i16", "u16"])
def test_cas_b16(arch, dt):
    ptx = _ptx(A.cas_scalar_kernel, {0: f"*{dt}", 1: f"*{dt}"}, arch)
    assert _atoms(ptx) == {"atom.global.acq_rel.gpu.cas.b16"}
    tgt.ptxas(ptx, arch)
