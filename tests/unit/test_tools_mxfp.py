"""triton.tools.mxfp (Triton's MX helper classes, vendored as tilejit.tools.mxfp) agrees
with the e2m1 / e8m0 definitions: every fp4 code, packing order, scale exponents."""
import pytest

torch = pytest.importorskip("torch", reason="tilejit.tools.mxfp works on torch tensors")
from tilejit.tools.mxfp import MXFP4Tensor, MXScaleTensor  # noqa: E402

E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def test_fp4_codes_and_packing():
    vals = torch.tensor([s * v for s in (1.0, -1.0) for v in E2M1])
    t = MXFP4Tensor(vals)
    assert t.data.tolist() == list(range(16))
    assert torch.equal(t.to(torch.float32), vals)
    packed = t.to_packed_tensor(dim=0)
    assert packed.tolist() == [lo | (hi << 4) for lo, hi in zip(range(0, 16, 2), range(1, 16, 2))]


def test_e8m0_scales():
    s = MXScaleTensor(torch.tensor([1.0, 2.0, 0.25, 2.0 ** -127]))
    assert s.data.tolist() == [127, 128, 125, 0]
    assert torch.equal(s.to(torch.float32), torch.tensor([1.0, 2.0, 0.25, 2.0 ** -127]))


def test_alias_resolves():
    from tilejit.compat import TRITON_MODULES
    assert TRITON_MODULES["triton.tools.mxfp"] == ("tilejit.tools.mxfp",)
