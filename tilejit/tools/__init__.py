"""Host-side tools (``triton.tools`` under the Triton alias): ``tensor_descriptor``."""
