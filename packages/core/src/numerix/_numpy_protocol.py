"""numpy's function protocols on tensors: ``np.sin(t)``, ``np.sum(t)``, ``a_ndarray + t``.

A numpy ufunc or function called with a tensor among its arguments
(``__array_ufunc__``, ``__array_function__``) runs the numerix function of the same
meaning, so the result is a tensor on the operands' backend (eagerly, or traced inside
``jit``). numpy's keywords map onto numerix's (``ddof`` is ``correction``); a keyword
numerix does not take with a value other than numpy's default (``out=``, ``where=``,
``order=``) is refused by name, as is a numpy function numerix does not carry out,
with the numerix function to call instead, or ``np.asarray(t)`` for an explicit copy
to numpy. The values follow numerix's rules (decision 4: ``np.divide`` of integer
tensors is float32).

The methods are attached to :class:`numerix.Tensor` here, from the layer of the ops
they call.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

import numerix.ops as ops
from numerix._tensor import Tensor
from numerix.errors import NumpyFunctionError

__all__: list[str] = []

# numpy ufunc name -> numerix function name, where the names differ
_UFUNC_NAMES = {
    "absolute": "abs", "fabs": "abs", "true_divide": "divide", "power": "pow",
    "mod": "remainder", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
    "arctan2": "atan2", "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh",
    "rint": "round", "conjugate": "conj", "invert": "bitwise_invert",
    "bitwise_not": "bitwise_invert", "left_shift": "bitwise_left_shift",
    "right_shift": "bitwise_right_shift",
}  # fmt: skip

# ufunc.reduce / ufunc.accumulate -> the numerix reduction / scan
_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
           "logical_and": "all", "logical_or": "any"}  # fmt: skip
_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod"}

# numpy functions carried out by the numerix function of the same name (``trace`` is
# not among them: numerix.trace traces a function)
_SAME_NAME = (
    "sum", "prod", "mean", "var", "std", "max", "min", "argmax", "argmin", "all", "any",
    "cumsum", "cumprod", "concatenate", "concat", "stack", "reshape", "transpose",
    "permute_dims", "matrix_transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze",
    "dot", "tensordot", "einsum", "clip", "sort", "argsort", "flip", "ravel", "zeros_like",
    "ones_like", "full_like", "isclose", "allclose", "tril", "triu",
    "take", "take_along_axis", "broadcast_to", "tile", "repeat", "roll", "real", "imag",
    "astype", "cumulative_sum", "split", "meshgrid", "pad", "nonzero",
)  # fmt: skip

# numpy keyword -> numerix keyword
_RENAME = {"ddof": "correction", "a_min": "min", "a_max": "max"}
# functions whose dtype= numerix has as a cast of the operand first
_CAST_FIRST = frozenset({"mean", "var", "std"})
# numpy keywords numerix has no use for (a hint, not a meaning)
_IGNORED = {"einsum": {"optimize"}}


def _describe(args: Any) -> str:
    found: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, Tensor):
            found.append(v.describe())
        elif isinstance(v, (tuple, list)):
            for x in v:
                walk(x)

    walk(args)
    return ", ".join(found)


def _refuse(name: str, args: Any, why: str, fix: str) -> NumpyFunctionError:
    return NumpyFunctionError(f"numpy.{name} on tensors ({_describe(args)}): {why}; {fix}")


def _copy_fix(name: str = "") -> str:
    if name:
        return f"compute it with numpy on an explicit copy: numpy.{name}(np.asarray(t))"
    return "or np.asarray(t) for an explicit copy to numpy"


# numpy's functions written in C have no signature Python can read before numpy 2.3:
# theirs, as numpy documents them
def _concatenate(
    arrays: Any, /, axis: Any = 0, out: Any = None, *, dtype: Any = None, casting: Any = "same_kind"
) -> None:
    """numpy.concatenate's signature."""


def _dot(a: Any, b: Any, out: Any = None) -> None:
    """numpy.dot's signature."""


_C_SIGNATURES: dict[str, Callable[..., Any]] = {
    "concatenate": _concatenate,
    "concat": _concatenate,
    "dot": _dot,
}


@functools.cache
def _signature(fn: Callable[..., Any]) -> inspect.Signature:
    try:
        return inspect.signature(fn)
    except ValueError:  # a builtin without a text signature (numpy < 2.3)
        stub = _C_SIGNATURES.get(getattr(fn, "__name__", ""))
        if stub is None:
            raise
        return inspect.signature(stub)


def _show(value: Any) -> str:
    shape = None if isinstance(value, type) else getattr(value, "shape", None)
    if isinstance(shape, tuple) and not isinstance(value, (int, float, complex)):
        return f"{type(value).__name__} of shape {tuple(shape)}"
    r = repr(value)
    return r if len(r) <= 40 else r[:37] + "..."


def _is_default(value: Any, default: Any) -> bool:
    if value is default or default is inspect.Parameter.empty:
        return value is default
    return type(value) in (bool, int, float, str, type(None)) and value == default


def _call_same_name(name: str, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``numerix.<name>`` with numpy's arguments bound to numpy's signature and mapped."""
    target = getattr(ops, name)
    sig = _signature(func)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise _refuse(name, args, str(e), f"see numerix.{name}") from None
    theirs = _signature(target).parameters
    ignored = _IGNORED.get(name, ())
    pos: list[Any] = []
    kw: dict[str, Any] = {}
    for pname, value in bound.arguments.items():
        p = sig.parameters[pname]
        if p.kind is p.VAR_POSITIONAL:
            pos.extend(value)
        elif p.kind is p.VAR_KEYWORD:
            for k, v in value.items():
                _map_keyword(name, args, k, v, inspect.Parameter.empty, theirs, kw)
        elif p.kind is p.POSITIONAL_ONLY or p.default is p.empty:
            q = theirs.get(_RENAME.get(pname, pname))
            if q is not None and q.kind is q.KEYWORD_ONLY:  # numpy's required axis= (2.2)
                kw[q.name] = value
            else:
                pos.append(value)
        elif pname == "dtype" and value is not None and name in _CAST_FIRST:
            pos[0] = ops.astype(pos[0], value)  # numpy's mean(a, dtype=d): in d, giving d
        elif pname not in ignored:
            _map_keyword(name, args, pname, value, p.default, theirs, kw)
    return target(*pos, **kw)


def _map_keyword(name: str, args: Any, pname: str, value: Any, default: Any,
                 theirs: Any, kw: dict[str, Any]) -> None:  # fmt: skip
    if pname == "out" and value is not None:
        raise _refuse(
            name,
            args,
            "out= is not supported (tensors are immutable)",
            f"use the tensor numerix.{name} returns",
        )
    mine = _RENAME.get(pname, pname)
    q = theirs.get(mine)
    if q is not None and q.kind not in (q.VAR_POSITIONAL, q.VAR_KEYWORD):
        kw[mine] = value
    elif value is not np._NoValue and not _is_default(value, default):
        raise _refuse(
            name,
            args,
            f"numerix.{name} takes no {pname}= (got {_show(value)})",
            f"call numerix.{name} without it, {_copy_fix()}",
        )


def _round(a: Any, decimals: int = 0, out: Any = None) -> Any:
    _no_out("round", (a,), out)
    return round(a, decimals)


def _where(condition: Any, *xy: Any) -> Any:
    if len(xy) == 1:
        raise _refuse(
            "where", (condition, *xy), "got the condition and one branch",
            "give both branches, or the condition alone for numerix.nonzero of it",
        )  # fmt: skip
    return ops.where(condition, *xy)


def _no_out(name: str, args: Any, out: Any) -> None:
    if out is not None:
        raise _refuse(name, args, "out= is not supported (tensors are immutable)",
                      f"use the tensor numerix.{name} returns")  # fmt: skip


def _outer(a: Any, b: Any, out: Any = None) -> Any:
    # Note: numpy flattens the operands; numerix.outer takes 1-d tensors
    _no_out("outer", (a, b), out)
    return ops.outer(ops.reshape(a, (-1,)), ops.reshape(b, (-1,)))


def _diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    # Note: numpy's diagonal is of axes 0 and 1 by default, numerix's of the last two
    return ops.diagonal(ops.moveaxis(a, (axis1, axis2), (-2, -1)), offset=offset)


def _size(a: Any, axis: int | None = None) -> int:
    return a.size if axis is None else a.shape[axis]


_SPECIAL: dict[Any, Callable[..., Any]] = {
    np.round: _round,
    np.outer: _outer,
    np.diagonal: _diagonal,
    np.where: _where,
    np.shape: lambda a: a.shape,
    np.ndim: lambda a: a.ndim,
    np.size: _size,
}


#: numpy functions that compute nothing numerix would, but read a tensor's memory or
#: write its values out (scikit-learn's plain estimators ask may_share_memory of their
#: input): run by numpy itself on the host arrays the tensors expose (np.asarray: no copy
#: where the backend's data is on the host, binary and torch's cpu).
_ON_HOST_ARRAYS = frozenset(
    f for f in (
        np.may_share_memory, np.shares_memory, np.save, np.savez, np.savez_compressed,
        np.savetxt,
    )
)  # fmt: skip


#: the numpy writers that would keep a bfloat16 tensor only as raw 2-byte void items
#: (ml_dtypes' bfloat16 has no .npy code): numerix.save keeps the dtype
_SAVERS = {np.save: "save", np.savez: "savez", np.savez_compressed: "savez_compressed"}


def _refuse_bfloat16_save(func: Any, args: Any, kwargs: dict[str, Any]) -> None:
    values = [*args[1:], *kwargs.values()]
    if not any(
        isinstance(v, Tensor) and v.dtype.name == "bfloat16"
        for x in values
        for v in (x if type(x) in (list, tuple) else (x,))
    ):
        return
    file = args[0] if args else kwargs.get("file")
    suffix = ".npy" if func is np.save else ".npz"
    # the path as numpy would complete it (it adds the suffix when missing)
    path = (
        repr(file if file.endswith(suffix) else file + suffix) if isinstance(file, str) else "path"
    )
    if func is np.save:
        call = f"numerix.save({path}, t)"
    else:
        call = f"numerix.save({path}, {{'name': t, ...}})"
    raise _refuse(
        _SAVERS[func], values,
        "numpy writes bfloat16 as raw 2-byte void items ('<V2'), which load back as bytes, "
        "not bfloat16",
        f"call {call}, which keeps the dtype (numerix.load reads it back), or save "
        f"np.asarray(t.astype(numerix.float32))",
    )  # fmt: skip


def _host(value: Any) -> Any:
    if isinstance(value, Tensor):
        return np.asarray(value)
    if type(value) in (list, tuple):
        return type(value)(_host(v) for v in value)
    return value


def _functions() -> dict[Any, str]:
    # ops.__all__, not hasattr(ops, name): a family of ops loads on the first use of a name
    public = frozenset(ops.__all__)
    table: dict[Any, str] = {}
    for name in _SAME_NAME:
        func = getattr(np, name, None)
        if func is not None and name in public:
            table.setdefault(func, name)  # np.permute_dims is np.transpose
    return table


_FUNCTIONS = _functions()


def array_function(self: Tensor, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
    """``__array_function__``: a numpy function called with a tensor argument."""
    special = _SPECIAL.get(func)
    if special is not None:
        return special(*args, **kwargs)
    if func in _ON_HOST_ARRAYS:
        if func in _SAVERS:
            _refuse_bfloat16_save(func, args, kwargs)
        return func(*_host(args), **{k: _host(v) for k, v in kwargs.items()})
    name = _FUNCTIONS.get(func)
    if name is not None:
        return _call_same_name(name, func, args, kwargs)
    fname = getattr(func, "__name__", repr(func))
    fix = (
        f"call numerix.{fname} if it is what you mean, {_copy_fix()}"
        if hasattr(ops, fname) and fname != "trace"
        else f"numerix has no {fname}; {_copy_fix(fname)}"
    )
    raise _refuse(fname, args, "numerix does not carry out this numpy function", fix)


def array_ufunc(self: Tensor, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """``__array_ufunc__``: a numpy ufunc (``np.sin``, ``a_ndarray + t``) with a tensor."""
    name = ufunc.__name__
    if method == "__call__":
        target = _UFUNC_NAMES.get(name, name)
        fn = getattr(ops, target, None)
        if fn is None:
            raise _refuse(name, inputs, f"numerix has no {name}", _copy_fix(name))
        _only_defaults(name, inputs, kwargs, ())
        return fn(*inputs)
    table = _REDUCE if method == "reduce" else _ACCUMULATE if method == "accumulate" else {}
    target = table.get(name)
    if target is None or len(inputs) != 1:
        raise _refuse(
            f"{name}.{method}", inputs, "numerix has no such reduction",
            f"use numerix's reductions (numerix.sum, numerix.max ...), {_copy_fix()}",
        )  # fmt: skip
    axis = kwargs.pop("axis", 0)
    keepdims = kwargs.pop("keepdims", False)
    _only_defaults(f"{name}.{method}", inputs, kwargs, ())
    if method == "accumulate":
        return getattr(ops, target)(inputs[0], axis=axis)
    return getattr(ops, target)(inputs[0], axis=axis, keepdims=keepdims)


def _only_defaults(
    name: str, inputs: Any, kwargs: dict[str, Any], allowed: tuple[str, ...]
) -> None:
    for k, v in kwargs.items():
        if k == "out" and all(o is None for o in (v if isinstance(v, tuple) else (v,))):
            continue
        if k in allowed or v is None or (k == "where" and v is True):
            continue
        why = (
            "out= is not supported (tensors are immutable)"
            if k == "out"
            else f"the keyword {k}= is not supported (got {_show(v)})"
        )
        fix = "cast first with t.astype(dtype)" if k == "dtype" else "use the returned tensor"
        raise _refuse(name, inputs, why, f"{fix}, {_copy_fix()}")


Tensor.__array_ufunc__ = array_ufunc  # type: ignore[attr-defined]
Tensor.__array_function__ = array_function  # type: ignore[attr-defined]
