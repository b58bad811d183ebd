"""``triton.runtime.cache.get_cache_manager``: Triton's file cache manager API over
tilejit's cache directory (``knobs.cache.dir``), and ``TRITON_CACHE_MANAGER``."""
import os

import pytest

from tilejit.compat import UnsupportedTritonFeature
from tilejit.compat.triton_api import cache as tcache
from tilejit.compat.triton_api.knobs import cache as cache_knobs


class MyManager(tcache.FileCacheManager):
    """A user's subclass (as Liger's ``LigerTritonFileCacheManager``)."""


def test_put_get_and_groups(tmp_path):
    with cache_knobs.scope():
        cache_knobs.dir = str(tmp_path)
        m = tcache.get_cache_manager("ab" * 16)
        assert isinstance(m, tcache.FileCacheManager)
        assert m.key == tcache._base32("ab" * 16)
        assert m.cache_dir.startswith(str(tmp_path)) and os.path.isdir(m.cache_dir)
        assert m.get_file("k.bin") is None and m.get_group("g") is None
        p = m.put(b"\x00\x01", "k.bin")
        q = m.put({"a": 1}, "k.json")
        assert open(p, "rb").read() == b"\x00\x01" and open(q).read() == "{'a': 1}"
        assert m.get_file("k.bin") == p
        m.put_group("g", {"bin": p, "gone": str(tmp_path / "missing")})
        assert m.get_group("g") == {"bin": p}
        # a second manager with the same key sees the same files; no temporary folders left
        assert tcache.get_cache_manager("ab" * 16).get_file("k.json") == q
        assert sorted(os.listdir(m.cache_dir)) == ["__grp__g", "k.bin", "k.json"]


def test_manager_class_from_env_and_knob(tmp_path, monkeypatch):
    with cache_knobs.scope():
        cache_knobs.dir = str(tmp_path)
        monkeypatch.setenv("TRITON_CACHE_MANAGER", f"{__name__}:MyManager")
        assert type(tcache.get_cache_manager("01" * 16)) is MyManager
        monkeypatch.setenv("TRITON_CACHE_MANAGER", "no_colon")
        with pytest.raises(ValueError, match="module.path:ClassName"):
            tcache.get_cache_manager("01" * 16)
        monkeypatch.delenv("TRITON_CACHE_MANAGER")
        cache_knobs.manager_class = MyManager
        assert type(tcache.get_cache_manager("01" * 16)) is MyManager
    assert cache_knobs.manager_class is None


def test_override_and_dump_managers_are_unsupported(tmp_path):
    with pytest.raises(UnsupportedTritonFeature, match="override/dump"):
        tcache.FileCacheManager("KEY", override=True)
