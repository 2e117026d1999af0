"""Tracing a function into a :class:`~numerix.defn.expr.Graph`: arguments, templates,
the active trace, and :func:`trace`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from numerix import dtypes
from numerix._tensor import Tensor
from numerix.backend import Backend
from numerix.defn.expr import (
    NUMBER_DTYPES,
    Graph,
    PlainTree,
    active_trace,
    plain_flatten,
    trace_flat,
)
from numerix.dtypes import DType
from numerix.errors import ShapeError, TracingError
from numerix.ops._core import resolve
from numerix.ops.creation import asarray

# active_trace, trace_flat and NUMBER_DTYPES are the recorder's (numerix.defn.expr);
# they are importable from here too
__all__ = [
    "Template", "template", "trace", "active_trace", "trace_flat", "flatten", "flatten_args",
    "flatten_plain",
    "leaf_spec", "NUMBER_DTYPES",
]  # fmt: skip


class Template:
    """The shape and dtype of an argument, without values (see :func:`template`)."""

    __slots__ = ("backend", "dtype", "shape")

    def __init__(self, shape: tuple[int, ...], dtype: DType, backend: Backend | None) -> None:
        self.shape = shape
        self.dtype = dtype
        self.backend = backend

    def __repr__(self) -> str:
        dims = "".join(f"[{d}]" for d in self.shape)
        return f"Template<{self.dtype.short}{dims}>"


def template(shape: Any, dtype: Any = dtypes.float32, backend: Any = None) -> Template:
    """An argument of ``shape`` and ``dtype`` without values, for :func:`numerix.compile`
    and :func:`numerix.trace` (``Nx.template``).

    :param shape: an int or a sequence of ints.
    :param dtype: a numerix dtype or its name (default float32).
    :param backend: the backend the compiled program will receive it on (default: the
        default backend when compiling).

    >>> import numerix as nx
    >>> nx.template((2, 3), nx.float32)
    Template<f32[2][3]>

    A negative dimension is refused:

    >>> nx.template((-1,))
    Traceback (most recent call last):
    ...
    numerix.errors.ShapeError: template: dimensions must be non-negative ints, got (-1,)
    """

    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    if not all(type(d) is int and d >= 0 for d in dims):
        raise ShapeError(f"template: dimensions must be non-negative ints, got {dims!r}")
    be = None if backend is None else resolve(backend, "template")
    return Template(dims, dtypes.as_dtype(dtype), be)


def leaf_spec(x: Any, op: str) -> tuple[tuple[int, ...], DType]:
    """``(shape, dtype)`` of an argument leaf: a tensor, a template or a Python number."""
    t = type(x)
    if t is Tensor or t is Template:
        return x.shape, x.dtype
    d = NUMBER_DTYPES.get(t)
    if d is not None:
        return (), d
    raise TracingError(
        f"{op}: an argument is a {t.__name__} ({x!r:.60}); arguments must be tensors, "
        f"Python numbers, or tuples/lists/dicts of them. Pass other values as static "
        f"arguments (numerix.jit(fn, static_argnames=(...)))"
    )


def flatten(tree: Any, op: str) -> tuple[list[Any], Any]:
    """The leaves and structure of an argument tree (numpy arrays become tensors)."""
    import optree

    leaves, treedef = optree.tree_flatten(tree)
    return _numpy_as_tensors(leaves), treedef


def _numpy_as_tensors(leaves: list[Any]) -> list[Any]:
    """``leaves`` with its numpy arrays and scalars made tensors (in place)."""
    for i, x in enumerate(leaves):
        if isinstance(x, (np.ndarray, np.generic)):
            leaves[i] = asarray(x)
    return leaves


def flatten_args(args: tuple[Any, ...], kwargs: dict[str, Any], op: str) -> tuple[list[Any], Any]:
    """:func:`flatten` of ``(args, kwargs)``: tensors and Python numbers passed positionally
    are their own leaves, and tuples, lists, dicts (keys all str or all int) and None
    around them a :class:`~numerix.defn.expr.PlainTree` too (no optree); anything else is
    flattened by optree."""
    if not kwargs:
        for x in args:
            t = type(x)
            if t is not Tensor and t not in NUMBER_DTYPES:
                break
        else:
            return list(args), PlainTree("args", len(args))
    return flatten_plain((args, kwargs), op)


def flatten_plain(tree: Any, op: str) -> tuple[list[Any], Any]:
    """:func:`flatten`, with a :class:`~numerix.defn.expr.PlainTree` (no optree) for a
    tree of tuples, lists, dicts and None around tensors, numbers, numpy values and
    templates; the same leaves, in the same order, either way."""
    flat = plain_flatten(tree, Template)
    if flat is None:
        return flatten(tree, op)
    _numpy_as_tensors(flat[0])
    return flat


def trace(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Graph:
    """Trace ``fn`` on ``args`` into its expression graph, which prints as a listing.

    Arguments are tensors, :func:`template` s or Python numbers (dynamic 0-d tensors of
    the default dtype), in tuples, lists and dicts; only their shapes and dtypes are read.
    Follows Nx (``Nx.Defn.debug_expr``) and ``jax.make_jaxpr``.

    >>> import numerix as nx
    >>> print(nx.trace(lambda x: nx.exp(x - nx.max(x)), nx.template((3,))))
    parameter a                                                 f32[3]
    b = reduce [ a, kind: 'max', axes: (0,), keepdims: False ]  f32
    c = subtract [ a, b ]                                       f32[3]
    d = exp [ c ]                                               f32[3]

    An argument that is neither a tensor nor a number is refused:

    >>> nx.trace(lambda s: s, "text")
    Traceback (most recent call last):
    ...
    numerix.errors.TracingError: trace: an argument is a str ('text'); ...
    """
    leaves, tree = flatten((args, kwargs), "trace")
    specs = [leaf_spec(x, "trace") for x in leaves]
    return trace_flat(fn, specs, tree, parent=active_trace(), op="trace")
