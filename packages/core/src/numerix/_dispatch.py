"""The one path from the core to a backend: :meth:`Primitive.bind` and the ``out`` it fills.

``prim.bind(*inputs, **params)`` runs the primitive's shape and dtype rules on the
inputs, builds ``out`` (:func:`new_out`), finds the backend the operands meet on
(:func:`numerix._meeting.meeting_backend`, the one rule eager and compiled calls
share) and calls the kernel ``backend.<name>(out, *inputs, **kernel_params)``. A
tracing backend receives that same call and records it as a node, so a traced
function and an eager one go through the same code. Parameters the rules alone read
(:attr:`Primitive.out_params`: the output shape of ``reshape``, the shape and dtype
of ``full``) are not passed to the kernel, which finds them in ``out``.

The element-wise ops keep their precomputed tables (a dict lookup per call instead
of two rule calls) and fill a ready ``out`` themselves; the tables are built from the
same rules (:mod:`numerix.primitives.elementwise`).

**Checking the rules** (``[debug] check_rules = true`` in the configuration, or
``NUMERIX_DEBUG__CHECK_RULES=1``; the conformance kit turns it on): every kernel (and
every native block, ``block_<name>``) of every backend class is wrapped so that its
result is compared with the rules, by its tensor's shape and dtype and by its native
array's (read with the backend's ``to_numpy``). A mismatch raises :class:`RuleCheckError` naming the primitive, the
backend and what differs. When the check is off nothing is wrapped: a kernel call
costs what it costs without this module (decision 25).

This module is in the low layer: it imports the tensor, the meeting rule, the
backend contract and the registry, never the public ops.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from numerix import dtypes
from numerix._meeting import check_concrete, meeting_backend, mismatch_error
from numerix._tensor import Tensor
from numerix.backend import Backend
from numerix.errors import ArgumentError, NumerixError, RuleCheckError
from numerix.primitives._registry import BLOCKS, REGISTRY, Block, Primitive, op_name

__all__ = [
    "new_out", "bind", "block_out", "check_concrete", "move", "RuleCheckError", "check_rules", "check_rules_setting",
    "rule_checks_enabled",
]  # fmt: skip

_new = Tensor.__new__


def new_out(
    shape: tuple[int, ...], dtype: dtypes.DType, backend: Backend, data: Any = None
) -> Tensor:
    """The ``out`` tensor a primitive fills; with ``data``, a tensor holding that payload
    (compilers wrap their values so), unchecked."""
    t = _new(Tensor)
    t.shape = shape
    t.dtype = dtype
    t.backend = backend
    t.data = data
    return t


def move(t: Tensor, target: Backend, op: str) -> Tensor:
    """``t`` on ``target``: the one way a concrete tensor changes backend (DLPack where the
    two backends can share memory, a copy through host memory otherwise). Operands
    meeting on a backend, ``numerix.tensor(t, backend=...)`` and ``backend_transfer``
    all move through here."""
    if t.backend is target:
        return t
    check_concrete(t, op)
    target.check_holds(op, t.dtype)
    out = new_out(t.shape, t.dtype, target)
    done = target.from_dlpack(out, t)
    if done is not None:
        return done
    return target.from_numpy(out, t.backend.to_numpy(t))


def _meet(prim: Primitive, inputs: tuple[Any, ...], target: Backend | None) -> tuple[Backend, Any]:
    """The backend the tensor inputs meet on, and the inputs moved there (a host tensor
    is adopted by the backend's ``from_numpy``; a trace captures a concrete tensor)."""
    tensors = [x for x in inputs if type(x) is Tensor]
    if not tensors:
        if target is None:
            raise ArgumentError(
                f"{prim.name}: no tensor input to take the backend from; pass backend=... "
                f"to {prim.name}.bind"
            )
        return target, inputs
    b = target or tensors[0].backend
    if all(x.backend is b for x in tensors):
        return b, inputs
    met = meeting_backend(prim.name, tensors, target)
    assert met is not None  # there are operands
    moved = []
    for x in inputs:
        if type(x) is Tensor and x.backend is not met:
            if met.is_tracing:
                x = met.capture(x)
            elif x.backend.is_host:
                x = move(x, met, prim.name)
            else:  # pragma: no cover - meeting_backend refused these already
                raise mismatch_error(prim.name, tensors, target)
        moved.append(x)
    return met, tuple(moved)


def bind(prim: Primitive, *inputs: Any, backend: Backend | None = None, **params: Any) -> Any:
    """``prim.bind(*inputs, backend=None, **params)``: see the module.

    :param inputs: the primitive's inputs in declaration order (a sequence input spread
        out), validated and promoted by the public op that binds it.
    :param backend: where to create the output of a primitive without tensor inputs
        (creation); with tensor inputs, the backend they must meet on, if given.
    :param params: the kernel's parameters and the rules-only ones
        (:attr:`Primitive.out_params`).
    """
    out = _new(Tensor)
    if backend is None and len(inputs) == 1 and type(inputs[0]) is Tensor:
        # one tensor input (most shape ops): its backend, nothing to meet
        x = inputs[0]
        b = x.backend
        out.shape = prim.shape_rule(x.shape, **params)
        out.dtype = prim.dtype_rule(x.dtype, **params)
    else:
        # the tensor inputs on one backend (the one given, if any): nothing to meet
        one: Backend | None = backend
        for x in inputs:
            if type(x) is Tensor:
                if one is None:
                    one = x.backend
                elif x.backend is not one:
                    one = None
                    break
        if one is None:
            b, inputs = _meet(prim, inputs, backend)
        else:
            b = one
        out.shape = prim.shape_rule(*[x.shape for x in inputs], **params)
        out.dtype = prim.dtype_rule(*[x.dtype for x in inputs], **params)
    out.backend = b
    out.data = None
    if b.supported_dtypes is not None:  # a backend holding every dtype checks nothing
        b.check_holds(op_name(prim.name, params), out.dtype)
    if prim.out_params:
        for k in prim.out_params:  # the rules' alone (params is this call's own dict)
            del params[k]
    return getattr(b, prim.name)(out, *inputs, **params)


Primitive.bind = bind


def block_out(block: Block, *inputs: Tensor, **params: Any) -> Any:
    """The ``out`` a block fills (:func:`numerix.ops._core.run_block`), from its rules:
    a tensor, or a tuple of tensors where the block has several outputs. The inputs are
    on one backend already (the op has met them)."""
    assert block.shape_rule is not None and block.dtype_rule is not None
    b = inputs[0].backend
    shapes = block.shape_rule(*[x.shape for x in inputs], **params)
    out_dtypes = block.dtype_rule(*[x.dtype for x in inputs], **params)
    if type(out_dtypes) is tuple:
        return tuple(new_out(s, d, b) for s, d in zip(shapes, out_dtypes))
    return new_out(shapes, out_dtypes, b)


# ---------------------------------------------------------------- checking the rules


def _describe(x: Any) -> str:
    if type(x) is Tensor:
        return x.describe()
    shape = getattr(x, "shape", None)
    if shape is not None:
        return f"{type(x).__name__} of shape {tuple(shape)} dtype {getattr(x, 'dtype', '?')}"
    return f"{type(x).__name__} {x!r:.40}"


def check_result(
    prim: Primitive | Block,
    backend: Backend,
    out: Any,
    result: Any,
    inputs: Sequence[Any],
    params: dict[str, Any],
) -> None:
    """Raise :class:`RuleCheckError` unless ``result`` is what the rules of ``prim`` (a
    primitive, or a block: a tuple of outputs where it has several) give for ``inputs``:
    each output tensor's shape and dtype, and its native array's."""
    where = f"{prim.name} on {backend!r}"
    several = type(out) is tuple
    outs = out if several else (out,)
    if any(type(o) is not Tensor for o in outs) or any(not hasattr(x, "shape") for x in inputs):
        return  # a call the core does not make (a kernel called by hand on plain values)
    args = ", ".join(_describe(x) for x in inputs) or "no inputs"
    kw = dict(params)
    for k in getattr(prim, "out_params", ()):
        kw[k] = getattr(out, k)
    assert prim.shape_rule is not None and prim.dtype_rule is not None
    try:
        shapes = prim.shape_rule(*(x.shape for x in inputs), **kw)
        out_dtypes = prim.dtype_rule(*(x.dtype for x in inputs), **kw)
    except NumerixError as e:
        raise RuleCheckError(
            f"{where}: the rules refuse the inputs the kernel was called with ({args}): {e}"
        ) from None
    if not several:
        shapes, out_dtypes, result = (shapes,), (out_dtypes,), (result,)
    elif type(result) is not tuple or len(result) != len(outs):
        raise RuleCheckError(
            f"{where}: the kernel returned a {type(result).__name__}, not the tuple of "
            f"{len(outs)} tensors out; a kernel fills each out's data and returns out"
        )
    for i, (o, r, shape, dtype) in enumerate(zip(outs, result, shapes, out_dtypes)):
        what = f"output {i}" if several else "out"
        _check_one(where, what, args, backend, o, r, shape, dtype)


def _check_one(
    where: str,
    what: str,
    args: str,
    backend: Backend,
    out: Tensor,
    result: Any,
    shape: tuple[int, ...],
    dtype: dtypes.DType,
) -> None:
    if (out.shape, out.dtype) != (shape, dtype):
        raise RuleCheckError(
            f"{where}: the core built {what} as {out.describe()} but the rules give "
            f"{dtype}{list(shape)} for {args}; the op infers its output differently from "
            f"the declared rules"
        )
    if type(result) is not Tensor:
        raise RuleCheckError(
            f"{where}: the kernel returned a {type(result).__name__}, not the tensor {what}; "
            f"a kernel fills out.data and returns out"
        )
    if (result.shape, result.dtype) != (shape, dtype):
        raise RuleCheckError(
            f"{where}: the kernel returned {result.describe()} for {what} but the rules give "
            f"{dtype}{list(shape)} for {args}"
        )
    traced = False
    try:
        native = backend.to_numpy(result)
    except Exception:  # a value with no host copy yet
        # a compiler calling the kernel while its library traces (JAX's tracers, torch's
        # fake tensors): the native array's own shape, and its dtype where the library's
        # dtype is numpy's
        native, traced = result.data, True
    nshape = tuple(getattr(native, "shape", ()))
    try:
        ndtype: Any = dtypes.from_numpy_dtype(np.dtype(native.dtype), where)
    except (AttributeError, TypeError, NumerixError):
        ndtype = dtype if traced else getattr(native, "dtype", type(native).__name__)
    if nshape != shape or ndtype is not dtype:
        raise RuleCheckError(
            f"{where}: the kernel's native array{'' if what == 'out' else ' of ' + what} has "
            f"shape {nshape} and dtype {ndtype} but the rules give shape {shape} and dtype {dtype} for {args}; the "
            f"kernel must put an array of out.shape and out.dtype in out.data"
        )


def _checked(prim: Primitive | Block, impl: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(impl)  # keeps the lowering a @lowers method carries
    def kernel(self: Backend, out: Any, *inputs: Any, **params: Any) -> Any:
        result = impl(self, out, *inputs, **params)
        if not self.is_tracing:
            check_result(prim, self, out, result, inputs, params)
        return result

    kernel._numerix_unchecked = impl  # type: ignore[attr-defined]
    return kernel


#: (class, name, what the class's own __dict__ held there, or None) for each wrapped kernel
_wrapped: list[tuple[type, str, Any]] = []


def _wrap_class(cls: type) -> None:
    if getattr(cls, "is_tracing", False):
        return
    targets: list[tuple[str, Primitive | Block]] = [(p.name, p) for p in REGISTRY]
    targets += [(b.method, b) for b in BLOCKS.values() if b.shape_rule is not None]
    for name, prim in targets:
        impl = getattr(cls, name, None)
        if impl is None or not callable(impl) or hasattr(impl, "_numerix_unchecked"):
            continue
        _wrapped.append((cls, name, cls.__dict__.get(name)))
        setattr(cls, name, _checked(prim, impl))


def _subclass_hook(own: Any) -> Callable[..., None]:
    def init_subclass(cls: type, **kwargs: Any) -> None:
        own.__get__(None, cls)(**kwargs)
        _wrap_class(cls)

    return init_subclass


def _subclasses(cls: type) -> list[type]:
    out = [cls]
    subs: list[type] = cls.__subclasses__()
    for sub in subs:
        out += _subclasses(sub)
    return out


_enabled = False
#: who asks for the check: the settings (``[debug] check_rules``) and :func:`check_rules`
_asked = {"settings": False, "call": False}


def rule_checks_enabled() -> bool:
    """Whether every kernel's result is checked against the rules now."""
    return _enabled


def check_rules(on: bool = True) -> None:
    """Turn the rule check on or off for the process (see the module); the setting
    ``[debug] check_rules`` turns it on too, whichever asks last.

    On, every primitive method of every loaded backend class is wrapped with the check,
    and classes defined later are wrapped as they are defined; off, the methods are
    put back as they were.
    """
    _asked["call"] = on
    _apply()


def check_rules_setting(on: bool) -> None:
    """What the configuration says (read with the environment and the files)."""
    _asked["settings"] = on
    _apply()


def _apply() -> None:
    global _enabled
    on = _asked["settings"] or _asked["call"]
    if on and not _enabled:
        for cls in _subclasses(Backend):
            _wrap_class(cls)
        # backends loaded from now on are wrapped as their classes are defined
        own = Backend.__dict__["__init_subclass__"]
        _wrapped.append((Backend, "__init_subclass__", own))
        Backend.__init_subclass__ = classmethod(_subclass_hook(own))  # type: ignore[assignment]
    elif not on and _enabled:
        while _wrapped:
            cls, name, own = _wrapped.pop()
            if own is None:
                delattr(cls, name)
            else:
                setattr(cls, name, own)
    _enabled = on
