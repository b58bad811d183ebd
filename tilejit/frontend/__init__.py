"""Frontend: a ``@tilejit.jit`` kernel's Python AST -> tile IR (``build_ir``)."""
from __future__ import annotations

from ..ir import ops
from ..ir.builder import Builder
from ..ir.core import Function, Loc
from ..ir.types import DType, PointerType, TileType
from ..language import core as lcore
from ..errors import CompilationError, for_user


def build_ir(jitfn, arg_types: dict, constexprs: dict, specialization: dict | None = None,
             launch_options: dict | None = None, *, keep_frames: bool = False) -> Function:
    """Build the tile IR of ``jitfn`` specialized to ``arg_types`` and ``constexprs``.

    Every parameter not in ``constexprs`` becomes an IR argument, in signature order,
    of type ``TileType(arg_types[name])``; ``specialization[name] = (divisibility,
    equal_to_1)`` is recorded on the argument, and an argument equal to 1 is bound to
    ``tl.constexpr(1)`` (Triton's ``("constexpr", 1)``).  A type with a ``build``
    method (``descriptor_arg``: a host TensorDescriptor; ``tuple_arg``: a tuple
    argument) builds its value from several arguments.  ``launch_options``
    (``num_warps``...; part of the launcher's key) are set as the function's attributes
    before the body is built (``tl.extra.cuda.num_warps()``).  Raises
    :class:`tilejit.errors.CompilationError` for mistakes in the kernel, without the
    compiler's frames unless ``keep_frames`` (the runtime passes ``Options.traceback``,
    ``TILEJIT_TRACEBACK=1``).
    """
    from .codegen import CodeGenerator, norm
    specialization = specialization or {}
    func = Function(jitfn.__name__, Loc(jitfn.file, jitfn.first_line, 0, jitfn.__name__))
    func.attrs.update(launch_options or {})
    builder = Builder(func)
    builder.loc = func.loc
    scope = {}
    with lcore.building(builder):
        for p in jitfn.params:
            if p.name in constexprs:
                scope[p.name] = norm(constexprs[p.name])
            elif hasattr(arg_types.get(p.name), "build"):   # a host TensorDescriptor, a tuple
                scope[p.name] = arg_types[p.name].build(
                    p.name, lambda n, t, s: _add_argument(func, n, t, s))
            elif p.name in arg_types:
                ty = _const_if_annotated(p, arg_types[p.name])
                scope[p.name] = _add_argument(func, p.name, ty, specialization.get(p.name))
            else:
                raise TypeError(f"{jitfn.__name__}: no type or value given for parameter '{p.name}'")
        func.constexprs = {k: norm(v) for k, v in constexprs.items()}
        try:
            CodeGenerator(jitfn, builder, scope).generate()
        except CompilationError as e:          # the entry points trim the frames above
            raise for_user(e, keep_frames)
        builder.create(ops.ReturnOp)
    return func


def _const_if_annotated(param, ty):
    """A pointer parameter annotated ``tl.const`` gets a const pointer type."""
    ann = param.annotation
    is_const = ann is lcore.const or (isinstance(ann, str) and ann.split(".")[-1] == "const")
    ty = lcore._unwrap(ty)
    if isinstance(ty, str):
        from ..ir.types import dtype_from_name
        ty = dtype_from_name(ty)
    if is_const and isinstance(ty, PointerType):
        return PointerType(ty.element, ty.address_space, const=True)
    return ty


def _add_argument(func, name, ty, spec):
    ty = lcore._unwrap(ty)
    if isinstance(ty, str):
        from ..ir.types import dtype_from_name
        ty = dtype_from_name(ty)
    if not isinstance(ty, (DType, PointerType)):
        raise TypeError(f"argument '{name}': expected a dtype or pointer type, got {ty!r}")
    divisibility, equal_to_1 = spec if spec is not None else (1, False)
    value = func.add_argument(name, TileType(ty), divisibility, bool(equal_to_1))
    if equal_to_1:             # Triton's ("constexpr", 1): the value 1 as a tl.constexpr
        return lcore.constexpr(1)
    return lcore.tensor(value)


__all__ = ["build_ir"]
