"""``tl.extra.cuda``: CUDA's libdevice as far as tilejit implements it."""
from . import libdevice

__all__ = ["libdevice"]
