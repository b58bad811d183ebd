"""The public language surface: Triton's names exist, and every builtin documents itself."""
import inspect

import tilejit.language as tl
from tilejit.language.jit_callable import JITCallable

TRITON_NAMES = """
constexpr tensor dtype pointer_type int1 int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16
bfloat16 float32 float64 program_id num_programs arange zeros full zeros_like full_like broadcast_to
broadcast reshape view expand_dims trans permute load store where minimum maximum abs exp exp2 log
log2 sqrt rsqrt sin cos floor ceil erf tanh sigmoid softmax fma cdiv umulhi sum max min argmax argmin
xor_sum dot rand randn randint randint4x multiple_of max_contiguous max_constancy static_range range
static_assert static_print device_assert device_print math extra join split interleave cat flip sort
cumsum reduce clamp fdiv PropagateNan
""".split()


def test_triton_names_exist():
    missing = [n for n in TRITON_NAMES if not hasattr(tl, n)]
    assert not missing


def _public_callables(module):
    for name in dir(module):
        if name.startswith("_"):
            continue
        obj = getattr(module, name)
        if tl.is_builtin(obj) or isinstance(obj, JITCallable) or (inspect.isclass(obj) and
                                                                    obj.__module__.startswith("tilejit.language")):
            yield name, obj


def test_every_builtin_has_a_docstring():
    undocumented = []
    for module in (tl, tl.math, tl.extra.cuda.libdevice):
        for name, obj in _public_callables(module):
            doc = obj.__doc__ if not isinstance(obj, JITCallable) else obj.fn.__doc__
            if not doc or not doc.strip():
                undocumented.append(f"{module.__name__}.{name}")
    assert not undocumented


def test_tensor_methods():
    for name in ("sum", "max", "min", "argmax", "argmin", "xor_sum", "reshape", "view", "expand_dims",
                 "broadcast_to", "trans", "permute", "to", "exp", "log", "sqrt", "abs", "sigmoid",
                 "softmax", "cdiv", "split", "flip", "sort", "cumsum", "reduce", "ravel"):
        assert hasattr(tl.tensor, name), name
