"""Names of the ``triton`` package itself that differ from tilejit's own.

``__version__`` says which Triton API the alias provides (Triton 3.6's, the
language tilejit implements) and, as a local version, tilejit's version; code that
parses ``triton.__version__`` (Inductor does) sees 3.6.  ``compile`` is Triton's
``compile(ASTSource(...), target=..., options=...)``.
"""
from ... import __version__ as _tilejit_version
from .compiler import compile  # noqa: F401

__version__ = f"3.6.0+tilejit{_tilejit_version}"
