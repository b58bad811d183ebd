"""Generated straight-line argument binding for the repeated-launch fast path.

For each kernel the launcher generates one small Python function from its
parameter list.  It binds the common argument kinds (numpy arrays, Python ints,
floats and bools, simple constexpr values) without loops or per-type dispatch and
returns exactly the cache-key parts the general path (``Launcher.bind_values``)
would compute, so both paths share one cache.  Anything unusual returns ``None``
and the launch takes the general path.
"""
from __future__ import annotations

import ctypes
import sys

import numpy as np

_I32_MIN, _I32_MAX = -2 ** 31, 2 ** 31 - 1


def _array_lines(i, name, spec):
    align = "16 if not a{i} & 15 else 0".format(i=i) if spec else "0"
    return [
        f"    if t{i} is ndarray:",
        f"        d{i} = NP_PTR[v{i}.dtype]",
        f"        if d{i} is None or v{i}.nbytes > {_I32_MAX}: return None",   # launch checks
        f"        try: a{i} = addressof(from_buffer(v{i}))",
        "        except (TypeError, ValueError, BufferError): return None",
        f"        k{i} = (d{i}, {align}, 'cpu')",
        f"        raw.append(({name!r}, a{i}, v{i}.nbytes, v{i}.itemsize))",
        "        host = True",
        f"    elif t{i} is Tensor:",       # contiguous torch tensors, on the host or a GPU
        f"        d{i} = TORCH_PTR.get(v{i}.dtype)",
        f"        if d{i} is None or not v{i}.is_contiguous() or v{i}.numel() > {_I32_MAX}: return None",
        f"        a{i} = v{i}.data_ptr()",
        f"        if v{i}.is_cuda: gpu = True; k{i} = (d{i}, {align}, 'cuda')",
        f"        elif v{i}.is_cpu: host = True; k{i} = (d{i}, {align}, 'cpu')",
        "        else: return None",
        f"        raw.append(({name!r}, a{i}, v{i}.nbytes, v{i}.element_size()))",
    ]


def _scalar_lines(i, spec):
    int_key = (f"('i32', 1 if v{i} == 1 else (16 if not v{i} & 15 else 0))" if spec
               else "('i32', 0)")
    return [
        f"    elif t{i} is int and {_I32_MIN} <= v{i} <= {_I32_MAX}:",
        f"        a{i} = v{i}; k{i} = {int_key}",
        f"    elif t{i} is float:",
        f"        a{i} = v{i}; k{i} = ('fp32', 0)",
        f"    elif t{i} is bool:",
        f"        a{i} = v{i}; k{i} = ('i1', 0)",
        "    else: return None",
    ]


class _NoTensor:
    """Stands for torch.Tensor while torch is not imported (no value has this type)."""


def _torch_names() -> dict:
    """torch.Tensor and its dtype -> pointer-name table, if torch is already imported
    (the fast path never imports torch itself)."""
    torch = sys.modules.get("torch")
    if torch is None or not hasattr(torch, "Tensor"):
        return {"Tensor": _NoTensor, "TORCH_PTR": {}}
    from .arrays import _TORCH_DTYPES
    table = {}
    for name, dt in _TORCH_DTYPES.items():
        tdt = getattr(torch, name.split(".")[1], None)
        if tdt is not None:
            table[tdt] = "*" + dt
    return {"Tensor": torch.Tensor, "TORCH_PTR": table}


def torch_is_imported() -> bool:
    return "torch" in sys.modules


def make_fast_binder(plan):
    """``plan``: [(name, is_constexpr, specialize)] -> ``fast(vals)`` returning
    ``(keys, consts, values, raw_buffers, on_gpu)`` or ``None`` (take the general path)."""
    lines = ["def fast(vals):", "    raw = []", "    host = gpu = False"]
    unpack = ", ".join(f"v{i}" for i in range(len(plan)))
    lines.append(f"    ({unpack},) = vals" if plan else "    pass")
    keys, consts, values = [], [], []
    for i, (name, is_cx, spec) in enumerate(plan):
        if is_cx:   # the same key as launcher._constexpr_key: ints and strs as they are
            lines.append(f"    t{i} = type(v{i})")
            lines.append(f"    if t{i} is float: c{i} = ('float', repr(v{i}))")
            lines.append(f"    elif t{i} is bool: c{i} = ('bool', v{i})")
            lines.append(f"    elif t{i} is int or t{i} is str: c{i} = v{i}")
            lines.append("    else: return None")
            consts.append(f"({name!r}, c{i})")
            continue
        lines.append(f"    t{i} = type(v{i})")
        lines += _array_lines(i, name, spec)
        lines += _scalar_lines(i, spec)
        keys.append(f"k{i}")
        values.append(f"a{i}")
    tup = lambda xs: "(" + "".join(x + ", " for x in xs) + ")"   # noqa: E731
    lines.append("    if host and gpu: return None")      # mixed devices: the general path reports
    lines.append(f"    return {tup(keys)}, {tup(consts)}, [{', '.join(values)}], raw, gpu")
    namespace = {"ndarray": np.ndarray, "addressof": ctypes.addressof,
                 "from_buffer": ctypes.c_char.from_buffer, **_torch_names()}
    from .launcher import _NP_PTR
    namespace["NP_PTR"] = _NP_PTR
    exec(compile("\n".join(lines), "<tilejit fast binder>", "exec"), namespace)
    return namespace["fast"]
