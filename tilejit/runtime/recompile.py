"""``TILEJIT_LOG_RECOMPILES=1``: say why a kernel already compiled is compiled again.

The launcher calls :func:`log_recompile` when a launch misses its in-memory cache of
a kernel that has compiled before.  The message compares the new specialization key
with the closest earlier one and names each argument that changed and how: dtype,
``== 1``, divisibility by 16 (integers), 16-byte alignment (pointers), device,
constexpr value, launch options, options or backend.

Launcher keys have the form ``(arg_keys, consts, launch_opts, options_token,
backend)``: ``arg_keys`` one ``(type_name, spec[, device])`` per runtime argument
(``spec``: 1 for ``== 1``, 16 for divisible by 16 / 16-byte aligned, 0 otherwise),
``consts`` the ``(name, value)`` pairs of constexpr (and ``None``) arguments.
"""
from __future__ import annotations

import os
import sys

ENABLED = os.environ.get("TILEJIT_LOG_RECOMPILES", "").strip().lower() in ("1", "true", "yes", "on")


def _spec_word(type_name: str, spec: int) -> str:
    if type_name.startswith("*"):
        return "16-byte aligned" if spec == 16 else "not 16-byte aligned"
    return {1: "== 1", 16: "divisible by 16"}.get(spec, "not divisible by 16, != 1")


def _parts(k):
    """(type name, spec, device) of an argument key (scalars carry no device)."""
    return k[0], (k[1] if len(k) > 1 else 0), (k[2] if len(k) > 2 else None)


def _named_args(names, key):
    consts = dict(key[1])
    arg_names = [n for n in names if n not in consts]
    return dict(zip(arg_names, key[0])), consts


def describe_changes(names, old_key, new_key) -> list[str]:
    """One phrase per difference between two launcher keys."""
    old_args, old_c = _named_args(names, old_key)
    new_args, new_c = _named_args(names, new_key)
    out = []
    for n in names:
        if n in new_args and n in old_args:
            (ot, os_, od), (nt, ns, nd) = _parts(old_args[n]), _parts(new_args[n])
            if ot != nt:
                out.append(f"{n}: dtype {ot} -> {nt}")
            elif os_ != ns:
                out.append(f"{n}: {_spec_word(ot, os_)} -> {_spec_word(nt, ns)}")
            if od != nd:
                out.append(f"{n}: device {od} -> {nd}")
        elif n in new_c and n in old_c:
            if old_c[n] != new_c[n] or type(old_c[n]) is not type(new_c[n]):
                out.append(f"{n}: constexpr {old_c[n]!r} -> {new_c[n]!r}")
        elif n in new_c:
            out.append(f"{n}: {old_args[n][0]} -> {new_c[n]!r}")
        elif n in old_c:
            out.append(f"{n}: {old_c[n]!r} -> {new_args[n][0]}")
    if old_key[2] != new_key[2]:
        out.append(f"launch options {dict(old_key[2])} -> {dict(new_key[2])}")
    if old_key[3] != new_key[3]:
        out.append("compiler options changed")
    if old_key[4] != new_key[4]:
        out.append(f"backend {old_key[4]} -> {new_key[4]}")
    return out


def explain(name: str, names, old_keys, new_key) -> str:
    """The message for compiling ``new_key`` after ``old_keys`` (closest one wins)."""
    best = min((describe_changes(names, k, new_key) for k in old_keys), key=len)
    n = len(old_keys) + 1
    nth = f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
    return (f"[tilejit] recompiling {name} ({nth} specialization): "
            + ("; ".join(best) if best else "no visible change"))


def log_recompile(launcher, key, file=None) -> None:
    """Print why ``launcher`` compiles ``key`` again (when enabled and not the first)."""
    if not launcher.cache:
        return
    print(explain(launcher.name, launcher.names, list(launcher.cache), key),
          file=file or sys.stderr)
