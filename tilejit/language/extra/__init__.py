"""``tl.extra``: vendor function libraries (``tl.extra.cuda.libdevice``)."""
from . import libdevice
from . import cuda

__all__ = ["libdevice", "cuda"]
