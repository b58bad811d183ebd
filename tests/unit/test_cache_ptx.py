"""The CUDA backend's cache hook: optimized LLVM IR and PTX reused (no GPU needed)."""
import pytest

pytest.importorskip("llvmlite")

import tilejit  # noqa: E402
import tilejit.language as tl  # noqa: E402
from tilejit.backends.cuda import target as tgt  # noqa: E402
from tilejit.runtime import cache as C  # noqa: E402
from tilejit.runtime.options import use_options  # noqa: E402


@tilejit.jit
def _scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3.0, mask=offs < n)


def _ptx(block, tmp_path):
    with use_options(cache_dir=str(tmp_path)):
        k = tilejit.compile(tilejit.jit(_scale.fn), signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"},
                            constexprs={"BLOCK": block}, target="cuda:90")
    return k.asm["ptx"], k.asm["llir_opt"]


def test_second_compile_reads_ptx_from_disk(tmp_path, monkeypatch):
    calls = []
    real = tgt.llvm_to_ptx
    monkeypatch.setattr(tgt, "llvm_to_ptx", lambda *a: calls.append(a) or real(*a))
    first = _ptx(256, tmp_path)
    assert len(calls) == 1 and ".visible .entry" in first[0]
    assert _ptx(256, tmp_path) == first and len(calls) == 1       # a hit: no LLVM, same texts
    other = _ptx(512, tmp_path)                                    # another module: a miss
    assert len(calls) == 2 and other[0] != first[0]
    assert C.FileCache(str(tmp_path)).info()["namespaces"]["ptx"]["entries"] == 2


def test_corrupt_ptx_entry_is_rebuilt(tmp_path, monkeypatch):
    first = _ptx(128, tmp_path)
    c = C.FileCache(str(tmp_path))
    for root, _, files in __import__("os").walk(c.dir + "/ptx"):
        for f in files:
            p = f"{root}/{f}"
            raw = bytearray(open(p, "rb").read())
            raw[len(raw) // 2] ^= 0x55
            open(p, "wb").write(bytes(raw))
    calls = []
    real = tgt.llvm_to_ptx
    monkeypatch.setattr(tgt, "llvm_to_ptx", lambda *a: calls.append(a) or real(*a))
    with pytest.warns(RuntimeWarning):
        again = _ptx(128, tmp_path)
    assert again == first and len(calls) == 1
