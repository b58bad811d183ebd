"""``TILEJIT_PTX_CHECK=80,90``: every kernel compiled for a host backend (cpu,
interpreter) is compiled for those CUDA architectures as well, and its PTX assembled by
ptxas where ptxas is installed.  The CPU tier of the CUDA backend: the end-to-end tests
run this way on machines without a GPU, so a kernel whose CUDA lowering breaks (an
internal error, or PTX that ptxas rejects) fails its test there, not first on a GPU.

A ``CompilationError`` or ``LaunchOptionError`` from the CUDA compile is a limit the
backend reports to users (shared memory beyond the architecture's, more than 32 warps...): the check accepts it, since the kernel
would get that clear error on a GPU too.  Anything else is a compiler bug and raises
:class:`PtxCheckError` naming the kernel and the architecture."""
from __future__ import annotations

from ..errors import PtxCheckError  # noqa: F401  (raised here; tests catch it from this module)


def parse_archs(text: str) -> tuple:
    """'80,90' -> (80, 90); 'cuda:90' and 'sm_90' are accepted too; '0', 'off' -> ()."""
    if str(text).strip().lower() in ("", "0", "off", "no", "none"):
        return ()
    archs = []
    for part in str(text).replace(";", ",").split(","):
        part = part.strip().lower().removeprefix("cuda:").removeprefix("sm_")
        if part:
            if not part.isdigit():
                raise ValueError(f"TILEJIT_PTX_CHECK: {text!r} is not a list of CUDA "
                                 f"architectures such as '80,90'")
            archs.append(int(part))
    return tuple(archs)


def check_cuda_ptx(build, options, name: str) -> list:
    """Compile ``build()`` (a fresh tile-IR function per call: the CUDA backend rewrites
    the function it compiles) for each architecture of ``options.ptx_check`` and assemble
    the PTX.  Returns the PTX texts (None where the backend reported a user limit)."""
    from ..backends import get_backend
    from ..backends.cuda import target as tgt
    from ..errors import CompilationError
    from ..errors import LaunchOptionError
    texts = []
    for arch in parse_archs(options.ptx_check):
        func = build()
        func.attrs["target"] = f"cuda:{arch}"
        try:
            ptx = get_backend("cuda").compile(func, options).asm["ptx"]
        except (CompilationError, LaunchOptionError):    # a limit users get on a GPU too
            texts.append(None)
            continue
        except Exception as e:
            raise PtxCheckError(f"{name}: the CUDA backend failed on this kernel for sm_{arch} "
                                f"({type(e).__name__}: {e})") from e
        if tgt.find_ptxas():
            try:
                _assemble_once(ptx, arch)
            except RuntimeError as e:
                raise PtxCheckError(f"{name}: ptxas rejected the PTX for sm_{arch}: {e}") from e
        texts.append(ptx)
    return texts


def _assemble_once(ptx: str, arch: int) -> None:
    """``ptxas(ptx, arch)``, skipped when this ptxas binary accepted this exact text
    before (a verdict kept in the disk cache, namespace ``ptxas-ok``: ptxas is a
    subprocess of 0.06-0.12 s per kernel and architecture, paid by every CPU compile of
    the test suite).  Rejections are not kept: they raise every time."""
    import os
    from ..backends.cuda import target as tgt
    from .cache import get_cache, make_key
    exe = tgt.find_ptxas()
    st = os.stat(exe)
    key = make_key("tilejit-ptxas-ok", os.path.realpath(exe), st.st_size, st.st_mtime_ns, int(arch), ptx)
    cache = get_cache()
    if cache.get(key, namespace="ptxas-ok") == b"ok":
        return
    tgt.ptxas(ptx, arch)
    cache.put(key, b"ok", namespace="ptxas-ok")
