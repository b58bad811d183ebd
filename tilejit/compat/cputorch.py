"""``torch`` with CUDA device requests redirected to the CPU.

``import tilejit.compat.cputorch as torch`` lets a script written for CUDA tensors
run on CPU tensors unchanged apart from that import line: tensor factories
(``empty_strided``, ``zeros``, ``arange``, ...) and ``.to``/``.cuda`` map a ``"cuda"``
device to ``"cpu"``; everything else is the real torch.
"""
from __future__ import annotations

import functools

import torch as _torch

_FACTORIES = ("empty_strided", "empty", "zeros", "ones", "full", "arange", "tensor", "rand",
              "randn", "randint", "zeros_like", "ones_like", "empty_like", "full_like",
              "randn_like", "rand_like", "linspace", "eye", "as_tensor")


def _cpu_device(dev):
    if dev is None:
        return None
    d = _torch.device(dev) if not isinstance(dev, int) else _torch.device("cuda", dev)
    return _torch.device("cpu") if d.type == "cuda" else d


def _redirect(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if "device" in kwargs:
            kwargs["device"] = _cpu_device(kwargs["device"])
        return fn(*args, **kwargs)
    return wrapper


for _name in _FACTORIES:
    globals()[_name] = _redirect(getattr(_torch, _name))

as_strided = _torch.as_strided
device = _torch.device


def rand_strided(size, stride, dtype=None, device="cpu", extra_size=0):
    """``torchdynamo.testing.rand_strided`` on the CPU."""
    from .inductor import rand_strided as _rs
    return _rs(size, stride, dtype=dtype, device=_cpu_device(device), extra_size=extra_size)


def __getattr__(name):
    return getattr(_torch, name)
