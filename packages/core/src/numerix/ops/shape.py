"""Shape ops: reshape, transpose, broadcast_to, expand_dims, squeeze, concatenate, stack, flip,
pad, tile, moveaxis, swapaxes, roll."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from numerix import dtypes
from numerix._meeting import DEALLOCATED
from numerix._shapes import (
    broadcast_shapes as _broadcast_shapes,
)
from numerix._shapes import (
    check_shape,
    check_size,
    normalize_axes,
    normalize_axis,
    size_of,
)
from numerix._tensor import Tensor
from numerix.errors import ArgumentError, DTypeError, ShapeError
from numerix.ops._core import as_tensor, cast, keep_plan, new_out, on_backend, unify
from numerix.ops._fast import Plan, method_op
from numerix.ops.transfer import backend_copy
from numerix.primitives import shape as shape_primitives

__all__ = [
    "reshape", "transpose", "permute_dims", "matrix_transpose", "broadcast_to",
    "broadcast_arrays", "broadcast_shapes", "expand_dims", "squeeze", "concatenate", "concat",
    "stack", "flip", "ravel", "pad", "pad_general", "tile", "moveaxis", "swapaxes", "roll",
]  # fmt: skip


# Plans kept by the fast paths below: what the checks and the rules give for a (shape, ...)
# key, computed once by the general path. Only keys of Python ints are kept (True == 1 and
# numpy ints hash as ints: they take the checks every time, which refuse a bool); a call
# the checks refuse keeps nothing, so it raises again, naming its own operands.
_RESHAPES: dict[tuple[Any, ...], tuple[int, ...]] = {}
_TRANSPOSES: dict[tuple[Any, ...], tuple[Any, tuple[int, ...]]] = {}
_CONCATS: dict[tuple[Any, ...], tuple[int, tuple[int, ...]]] = {}


def reshape(x: Any, /, shape: Any, *, copy: bool | None = None) -> Tensor:
    """The same elements in C order with a new shape; one dimension may be -1 (inferred).

    ``copy`` (array API): True gives a tensor of its own data; None and False may share
    ``x``'s (tensors are never written to, so sharing is never seen).

    >>> import numerix as nx
    >>> nx.reshape(nx.arange(6), (2, -1)).shape
    (2, 3)
    """
    if copy:
        return backend_copy(reshape(x, shape))
    if type(x) is Tensor and type(shape) is tuple:
        # the common case, a tuple of Python ints: its target shape kept per (x.shape,
        # shape), the kernel called with the out the rules give
        for d in shape:
            if type(d) is not int:
                break
        else:
            key = (x.shape, shape)
            target = _RESHAPES.get(key)
            if target is None:
                target = keep_plan(_RESHAPES, key, _reshape_target(x, shape))
            if target == x.shape:
                return x
            return x.backend.reshape(new_out(target, x.dtype, x.backend), x)
    t = as_tensor(x, "reshape")
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)) or not all(
        isinstance(d, int) and not isinstance(d, bool) for d in shape
    ):
        raise ShapeError(f"reshape: shape must be an int or a tuple of ints, got {shape!r}")
    shape = _reshape_target(t, tuple(shape))
    if shape == t.shape:
        return t
    return shape_primitives.reshape.bind(t, shape=shape)


def _reshape_target(t: Tensor, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape ``t`` is reshaped to (its -1 resolved), checked against ``t``'s size, by
    the rule of ``reshape``; ``shape`` holds ints."""
    if shape.count(-1) > 1:
        raise ShapeError(f"reshape: only one dimension can be -1, got {shape}")
    if any(d < -1 for d in shape):
        raise ShapeError(f"reshape: negative dimension in {shape}")
    if -1 in shape:
        known = size_of(tuple(d for d in shape if d != -1))
        if known == 0 or t.size % known:
            raise ShapeError(
                f"reshape: cannot reshape {t.describe()} ({t.size} elements) to {shape}: the "
                f"-1 dimension has no whole size"
            )
        shape = tuple(t.size // known if d == -1 else d for d in shape)
    if size_of(shape) != t.size:
        raise ShapeError(
            f"reshape: cannot reshape {t.describe()} ({t.size} elements) to {shape} "
            f"({size_of(shape)} elements); the sizes must match"
        )
    if not t.size:
        check_size("reshape", shape)
    return shape_primitives.reshape.shape_rule(t.shape, shape=shape)


def _fast_plan(form: str, x: Tensor, shape: tuple[Any, ...]) -> Plan | None:
    """The plan of ``x.reshape(shape)`` for the compiled fast path (:mod:`numerix.ops._fast`):
    the target :func:`reshape` computes, kept in the same table; x itself where it is x's
    shape; None where the Python op takes the call (its errors)."""
    for d in shape:
        if type(d) is not int:
            return None
    key = (x.shape, shape)
    target = _RESHAPES.get(key)
    if target is None:
        try:
            target = keep_plan(_RESHAPES, key, _reshape_target(x, shape))
        except ShapeError:
            return None
    if target == x.shape:
        return None, None, None, None
    return target, None, (), target


method_op("reshape", shape_primitives.reshape, _fast_plan)


def ravel(x: Any, /) -> Tensor:
    """The elements as a 1-d tensor, C order."""
    return reshape(x, (-1,))


def transpose(x: Any, /, axes: Sequence[int] | None = None) -> Tensor:
    """Permute the axes (reverse them when ``axes`` is None), as numpy ``transpose``."""
    if axes is None and type(x) is Tensor:
        return _transposed(x, None)
    t = as_tensor(x, "transpose")
    if axes is None:
        return _transposed(t, None)
    if not isinstance(axes, (tuple, list)):
        raise ShapeError(f"transpose: axes must be a tuple of ints, got {axes!r}")
    perm = tuple(normalize_axis("transpose", a, t.ndim, t.shape) for a in axes)
    if sorted(perm) != list(range(t.ndim)):
        raise ShapeError(
            f"transpose: axes {tuple(axes)} are not a permutation of the {t.ndim} axes of "
            f"{t.describe()}"
        )
    return _transposed(t, perm)


def _transposed(t: Tensor, perm: tuple[int, ...] | None) -> Tensor:
    """``t`` with its axes in the order ``perm`` (a checked permutation; None reverses
    them): the kernel called with the out the rules give, kept per (shape, perm)."""
    key = (t.shape, perm)
    plan = _TRANSPOSES.get(key)
    if plan is None:
        axes = tuple(range(len(t.shape) - 1, -1, -1)) if perm is None else perm
        shape = shape_primitives.transpose.shape_rule(t.shape, axes=axes)
        plan = keep_plan(
            _TRANSPOSES, key, (axes if axes != tuple(range(len(axes))) else None, shape)
        )
    axes, shape = plan
    if axes is None:  # the identity
        return t
    return t.backend.transpose(new_out(shape, t.dtype, t.backend), t, axes=axes)


def permute_dims(x: Any, /, axes: Sequence[int]) -> Tensor:
    """Array API ``permute_dims``: :func:`transpose` with explicit axes."""
    return transpose(x, tuple(axes))


def matrix_transpose(x: Any, /) -> Tensor:
    """Swap the last two axes (array API ``matrix_transpose``)."""
    t = as_tensor(x, "matrix_transpose")
    if t.ndim < 2:
        raise ShapeError(f"matrix_transpose: needs at least 2 dimensions, got {t.describe()}")
    perm = list(range(t.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return transpose(t, perm)


def matrix_transpose_T(x: Tensor) -> Tensor:
    if len(x.shape) != 2:
        raise ShapeError(
            f"T: .T is defined for 2-d tensors, got {x.describe()}; use .mT or transpose(axes)"
        )
    return _transposed(x, None)


def broadcast_to(x: Any, /, shape: Any) -> Tensor:
    """Broadcast ``x`` to ``shape`` by numpy's rules (array API ``broadcast_to``)."""
    t = as_tensor(x, "broadcast_to")
    s = check_shape("broadcast_to", shape)
    if len(s) < t.ndim or _broadcast_shapes("broadcast_to", t.shape, s) != s:
        raise ShapeError(f"broadcast_to: cannot broadcast {t.describe()} to shape {s}")
    if s == t.shape:
        return t
    axes = tuple(range(len(s) - t.ndim, len(s)))
    return shape_primitives.broadcast.bind(t, axes=axes, shape=s)


def broadcast_arrays(*arrays: Any) -> list[Tensor]:
    """Broadcast tensors against each other (array API ``broadcast_arrays``)."""
    _, ts = unify("broadcast_arrays", *arrays)
    s = _broadcast_shapes("broadcast_arrays", *(t.shape for t in ts))
    return [broadcast_to(t, s) for t in ts]


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape tensors of ``shapes`` broadcast to (array API ``broadcast_shapes``);
    no shape gives ``()``.

    >>> import numerix as nx
    >>> nx.broadcast_shapes((2, 1), (3,))
    (2, 3)
    >>> nx.broadcast_shapes((2,), (3,))
    Traceback (most recent call last):
    ...
    numerix.errors.ShapeError: broadcast_shapes: ...
    """
    if not shapes:
        return ()
    checked = []
    for s in shapes:
        r = _int_seq(s)
        if r is None or any(d < 0 for d in r):
            raise ShapeError(
                f"broadcast_shapes: each shape must be a sequence of non-negative ints, got {s!r}"
            )
        checked.append(tuple(r))
    return _broadcast_shapes("broadcast_shapes", *checked)


def expand_dims(x: Any, /, axis: int | Sequence[int] = 0) -> Tensor:
    """Insert size-1 axes at ``axis`` (positions in the result)."""
    t = as_tensor(x, "expand_dims")
    axs = (axis,) if isinstance(axis, int) else tuple(axis)
    n = t.ndim + len(axs)
    pos = normalize_axes("expand_dims", axs, n)
    dims = iter(t.shape)
    shape = tuple(1 if i in pos else next(dims) for i in range(n))
    return reshape(t, shape)


def squeeze(x: Any, /, axis: int | Sequence[int] | None = None) -> Tensor:
    """Remove size-1 axes (all of them when ``axis`` is None)."""
    t = as_tensor(x, "squeeze")
    if axis is None:
        axes = tuple(i for i, d in enumerate(t.shape) if d == 1)
    else:
        axes = normalize_axes("squeeze", axis, t.ndim, t.shape)
        for a in axes:
            if t.shape[a] != 1:
                raise ShapeError(
                    f"squeeze: axis {a} of {t.describe()} has size {t.shape[a]}, not 1"
                )
    return reshape(t, tuple(d for i, d in enumerate(t.shape) if i not in axes))


def concatenate(arrays: Sequence[Any], /, axis: int | None = 0) -> Tensor:
    """Join tensors along an existing axis (``axis=None`` flattens them first); dtypes promote.

    >>> import numerix as nx
    >>> nx.concatenate([nx.tensor([1, 2]), nx.tensor([3])]).tolist()
    [1, 2, 3]
    """
    if type(arrays) in (list, tuple) and len(arrays) > 1 and type(axis) is int:
        # tensors of one dtype on one backend: their axis and out's shape kept per (axis,
        # shapes) when the checks below pass them, the kernel called with that out
        t0 = arrays[0]
        if type(t0) is Tensor and t0.backend is not DEALLOCATED:
            b0, d0 = t0.backend, t0.dtype
            key: list[Any] = [axis]
            for ti in arrays:
                if type(ti) is not Tensor or ti.backend is not b0 or ti.dtype is not d0:
                    break
                key.append(ti.shape)
            else:
                k = tuple(key)
                plan = _CONCATS.get(k)
                if plan is None:
                    plan = keep_plan(_CONCATS, k, _concat_plan(axis, key[1:]))
                ax, shape = plan
                if ax >= 0:
                    return b0.concatenate(new_out(shape, d0, b0), *arrays, axis=ax)
    if not isinstance(arrays, (list, tuple)) or not arrays:
        raise ShapeError("concatenate: expects a non-empty list or tuple of tensors")
    _, ts = unify("concatenate", *arrays)
    if axis is None:
        ts = [reshape(t, (-1,)) for t in ts]
        axis = 0
    nd = ts[0].ndim
    if nd == 0:
        raise ShapeError("concatenate: cannot concatenate 0-d tensors; use stack")
    for t in ts[1:]:
        if t.ndim != nd:
            raise ShapeError(
                "concatenate: tensors must have the same number of dimensions, got "
                + ", ".join(t.describe() for t in ts)
            )
    ax = normalize_axis("concatenate", axis, nd, ts[0].shape)
    for t in ts[1:]:
        if any(a != b for i, (a, b) in enumerate(zip(t.shape, ts[0].shape)) if i != ax):
            raise ShapeError(
                f"concatenate: shapes must match except on axis {ax}, got "
                + ", ".join(str(t.shape) for t in ts)
            )
    d = ts[0].dtype
    for t in ts[1:]:
        d = dtypes.promote_types(d, t.dtype, "concatenate")
    ts = [cast(t, d) for t in ts]
    if len(ts) == 1:
        return ts[0]
    return shape_primitives.concatenate.bind(*ts, axis=ax)


def _concat_plan(axis: int, shapes: list[tuple[int, ...]]) -> tuple[int, tuple[int, ...]]:
    """(the axis, out's shape by the rule) where tensors of ``shapes`` concatenate along
    ``axis``, else (-1, ()): the general path's checks name what is wrong."""
    nd = len(shapes[0])
    a = axis + nd if axis < 0 else axis
    if not 0 <= a < nd:
        return -1, ()
    rest = shapes[0][:a], shapes[0][a + 1 :]
    for s in shapes:
        if len(s) != nd or (s[:a], s[a + 1 :]) != rest:
            return -1, ()
    return a, shape_primitives.concatenate.shape_rule(*shapes, axis=a)


concat = concatenate


def stack(arrays: Sequence[Any], /, axis: int = 0) -> Tensor:
    """Join tensors of one shape along a new axis."""
    if not isinstance(arrays, (list, tuple)) or not arrays:
        raise ShapeError("stack: expects a non-empty list or tuple of tensors")
    _, ts = unify("stack", *arrays)
    s = ts[0].shape
    for t in ts[1:]:
        if t.shape != s:
            raise ShapeError(
                "stack: tensors must have the same shape, got "
                + ", ".join(str(t.shape) for t in ts)
            )
    ax = normalize_axis("stack", axis, len(s) + 1)
    if 0 in s:
        check_size("stack", s[:ax] + (len(ts),) + s[ax:])
    return concatenate([expand_dims(t, ax) for t in ts], axis=ax)


def flip(x: Any, /, axis: int | Sequence[int] | None = None) -> Tensor:
    """Reverse the order of elements along ``axis`` (all axes when None)."""
    t = as_tensor(x, "flip")
    axes = normalize_axes("flip", axis, t.ndim, t.shape)
    if not axes:
        return t
    return shape_primitives.reverse.bind(t, axes=axes)


# ---------------------------------------------------------------- pad


def fit_to(op: str, what: str, value: Any, x: Tensor) -> Tensor:
    """``value`` as a tensor of ``x``'s dtype on ``x``'s backend, refusing any loss.

    Tensors and numpy arrays are strong: their dtype must promote to ``x.dtype`` (the
    promotion table says the cast is lossless). Python scalars and lists are weak, as
    in JAX: they are taken when every value is exact in ``x.dtype`` (floats may round
    into a float dtype), so ``0`` pads a bool tensor and ``300`` does not fit int8.
    """
    if type(value) is Tensor or isinstance(value, (np.ndarray, np.generic)):
        t = on_backend(as_tensor(value, op, x.backend), x.backend)
        if t.dtype is not x.dtype and dtypes.PROMOTION_TABLE[(t.dtype, x.dtype)] is not x.dtype:
            raise DTypeError(
                f"{op}: {what} {t.describe()} cannot be cast to {x.dtype} without loss "
                f"(the result keeps the dtype of {x.describe()}); cast it with astype first"
            )
        return cast(t, x.dtype)
    a = np.asarray(value)
    ok = a.dtype.kind in "biufc"
    if ok:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            r = a.astype(x.dtype.numpy_dtype)
            if x.dtype.kind in "biu" or (a.dtype.kind == "c" and x.dtype.kind == "f"):
                ok = bool(np.all(r.astype(a.dtype) == a))
    if not ok:
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        raise DTypeError(
            f"{op}: {what} {shown} is not exact in {x.dtype} (the result keeps the dtype of "
            f"{x.describe()}); pass values that fit, or cast x first with astype"
        )
    return as_tensor(r, op, x.backend)


def _pad_value(op: str, x: Tensor, value: Any) -> Tensor:
    v = fit_to(op, "pad value", value, x)
    if v.ndim:
        raise ShapeError(f"{op}: the pad value must be a scalar (0-d), got {v.describe()}")
    return v


def _bind_pad(op: str, x: Tensor, v: Tensor, config: tuple[tuple[int, int, int], ...]) -> Tensor:
    shape = shape_primitives.pad_shape_rule(x.shape, v.shape, config=config)
    for ax, d in enumerate(shape):
        if d < 0:
            raise ShapeError(
                f"{op}: padding {config[ax]} crops axis {ax} of {x.describe()} to a negative "
                f"size ({d}); crop at most the padded length"
            )
    check_size(op, shape)
    if all(c == (0, 0, 0) for c in config):
        return x
    return shape_primitives.pad.bind(x, v, config=config)


def pad(x: Any, /, pad_width: Any, *, mode: str = "constant", constant_values: Any = 0) -> Tensor:
    """Pad each axis with a constant before and after, as ``numpy.pad``.

    Follows numpy: ``pad_width`` is an int (every side of every axis), a ``(before,
    after)`` pair (every axis) or one pair per axis, all ``>= 0``. The result keeps
    ``x``'s dtype; ``constant_values`` is one scalar that must be exact in it (see
    :func:`fit_to`). Only ``mode="constant"`` exists for now. For negative (cropping)
    and interior padding use :func:`pad_general`.

    >>> import numerix as nx
    >>> nx.pad(nx.tensor([1, 2]), (1, 2), constant_values=9).tolist()
    [9, 1, 2, 9, 9]

    A negative width raises::

        nx.pad(nx.tensor([1, 2]), -1)  # ShapeError: pad: pad_width must be >= 0 ...
    """
    t = as_tensor(x, "pad")
    if mode != "constant":
        raise ArgumentError(
            f"pad: mode {mode!r} is not supported; only mode='constant' is (build reflect or "
            f"edge padding from numerix.flip / getitem and numerix.concatenate)"
        )
    if isinstance(constant_values, (tuple, list)):
        raise ArgumentError(
            "pad: constant_values must be one scalar; per-axis pairs of values are not "
            "supported (pad one axis at a time with pad_general)"
        )
    w = np.asarray(pad_width)
    if w.dtype.kind not in "iu" or (w.size == 0 and t.ndim):
        raise ShapeError(f"pad: pad_width must be an int or pairs of ints, got {pad_width!r}")
    try:
        pairs = np.broadcast_to(w, (t.ndim, 2))
    except ValueError:
        raise ShapeError(
            f"pad: pad_width {pad_width!r} is not an int, a (before, after) pair or one pair per "
            f"axis of {t.describe()}"
        ) from None
    if (pairs < 0).any():
        raise ShapeError(f"pad: pad_width must be >= 0, got {pad_width!r}; crop with pad_general")
    config = tuple((int(lo), int(hi), 0) for lo, hi in pairs)
    return _bind_pad("pad", t, _pad_value("pad", t, constant_values), config)


def pad_general(x: Any, /, config: Any, *, value: Any = 0) -> Tensor:
    """Pad with low, high and interior padding per axis; negative low/high crop.

    Follows XLA's Pad and ``Nx.pad``: ``config`` holds one ``(low, high, interior)``
    triple of ints per axis. ``interior >= 0`` puts that many ``value`` elements
    between neighbouring elements; then ``low`` / ``high`` elements of ``value`` are
    added before / after (``> 0``) or removed (``< 0``) from the interior-padded axis.
    Axis ``i`` ends up ``low + high + d + max(d - 1, 0) * interior`` long, which must
    be ``>= 0``. The result keeps ``x``'s dtype; ``value`` must be exact in it.

    >>> import numerix as nx
    >>> nx.pad_general(nx.tensor([1, 2, 3]), [(-1, 1, 1)]).tolist()
    [0, 2, 0, 3, 0]

    Cropping more than there is raises::

        nx.pad_general(nx.tensor([1, 2]), [(-2, -1, 0)])  # ShapeError: ... negative size (-1)
    """
    t = as_tensor(x, "pad_general")
    if not isinstance(config, (tuple, list)) or len(config) != t.ndim:
        raise ShapeError(
            f"pad_general: config must hold one (low, high, interior) triple per axis of "
            f"{t.describe()}, got {config!r}"
        )
    norm = []
    for c in config:
        if (
            not isinstance(c, (tuple, list))
            or len(c) != 3
            or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in c)
        ):
            raise ShapeError(
                f"pad_general: each config entry must be a (low, high, interior) triple of ints, "
                f"got {c!r}"
            )
        if c[2] < 0:
            raise ShapeError(f"pad_general: interior padding must be >= 0, got {tuple(c)!r}")
        norm.append((int(c[0]), int(c[1]), int(c[2])))
    return _bind_pad("pad_general", t, _pad_value("pad_general", t, value), tuple(norm))


# ---------------------------------------------------------------- tile


def _int_seq(v: Any) -> tuple[int, ...] | None:
    """``v`` as a tuple of Python ints, or None when it is not an int or sequence of ints."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return (int(v),)
    if isinstance(v, (tuple, list)) and all(
        isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)) for i in v
    ):
        return tuple(int(i) for i in v)
    return None


def tile(x: Any, reps: int | Sequence[int], /) -> Tensor:
    """Repeat the whole tensor ``reps[i]`` times along each axis, as ``numpy.tile``.

    Follows numpy and the array API: a shorter ``reps`` is padded with leading 1s, a
    longer one gives ``x`` leading size-1 axes first.

    >>> import numerix as nx
    >>> nx.tile(nx.tensor([1, 2]), 2).tolist()
    [1, 2, 1, 2]

    A negative count raises::

        nx.tile(nx.tensor([1, 2]), -1)  # ShapeError: tile: reps must be >= 0 ...
    """
    t = as_tensor(x, "tile")
    r = _int_seq(reps)
    if r is None:
        raise ShapeError(f"tile: reps must be an int or a sequence of ints, got {reps!r}")
    if any(i < 0 for i in r):
        raise ShapeError(f"tile: reps must be >= 0, got {reps!r}")
    n = max(len(r), t.ndim)
    r = (1,) * (n - len(r)) + r
    dims = (1,) * (n - t.ndim) + t.shape
    inter = tuple(v for d in dims for v in (1, d))
    big = tuple(v for i, d in zip(r, dims) for v in (i, d))
    out = check_size("tile", tuple(i * d for i, d in zip(r, dims)))
    y = broadcast_to(reshape(t, inter), big)
    return reshape(y, out)


# ---------------------------------------------------------------- moveaxis, swapaxes, roll


def moveaxis(x: Any, source: int | Sequence[int], destination: int | Sequence[int], /) -> Tensor:
    """Move axes to new positions, the others keeping their order (array API ``moveaxis``).

    >>> import numerix as nx
    >>> nx.moveaxis(nx.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)

    Repeated axes raise::

        nx.moveaxis(nx.zeros((2, 3)), (0, 0), (0, 1))  # ShapeError: moveaxis: repeated axis
    """
    t = as_tensor(x, "moveaxis")
    src = _int_seq(source)
    dst = _int_seq(destination)
    if src is None or dst is None:
        raise ShapeError(
            f"moveaxis: source and destination must be ints or sequences of ints, got "
            f"{source!r} and {destination!r}"
        )
    if len(src) != len(dst):
        raise ShapeError(
            f"moveaxis: source {source!r} and destination {destination!r} must have the same "
            f"number of axes"
        )
    s = [normalize_axis("moveaxis", a, t.ndim, t.shape) for a in src]
    d = [normalize_axis("moveaxis", a, t.ndim, t.shape) for a in dst]
    if len(set(s)) != len(s):
        raise ShapeError(f"moveaxis: repeated axis in source {source!r}")
    if len(set(d)) != len(d):
        raise ShapeError(f"moveaxis: repeated axis in destination {destination!r}")
    rest = iter(a for a in range(t.ndim) if a not in s)
    where = dict(zip(d, s))
    return transpose(t, [where[i] if i in where else next(rest) for i in range(t.ndim)])


def swapaxes(x: Any, axis1: int, axis2: int, /) -> Tensor:
    """Interchange two axes, as ``numpy.swapaxes``.

    >>> import numerix as nx
    >>> nx.swapaxes(nx.zeros((2, 3, 4)), 0, 2).shape
    (4, 3, 2)

    An axis out of range raises::

        nx.swapaxes(nx.zeros((2, 3)), 0, 2)  # ShapeError: swapaxes: axis 2 is out of range ...
    """
    t = as_tensor(x, "swapaxes")
    a = normalize_axis("swapaxes", axis1, t.ndim, t.shape)
    b = normalize_axis("swapaxes", axis2, t.ndim, t.shape)
    perm = list(range(t.ndim))
    perm[a], perm[b] = b, a
    return transpose(t, perm)


def roll(
    x: Any, /, shift: int | Sequence[int], *, axis: int | Sequence[int] | None = None
) -> Tensor:
    """Shift elements along axes, those pushed past the end coming back at the start.

    Follows the array API ``roll``: with ``axis=None`` the flattened tensor is rolled
    and the shape restored; ``shift`` and ``axis`` may be sequences of one length (an
    int shift applies to every axis given); an axis given twice adds its shifts.

    >>> import numerix as nx
    >>> nx.roll(nx.tensor([1, 2, 3, 4]), 1).tolist()
    [4, 1, 2, 3]

    Shifts and axes of different lengths raise::

        nx.roll(nx.zeros((2, 3)), (1, 2), axis=0)  # ShapeError: roll: shift (1, 2) and ...
    """
    t = as_tensor(x, "roll")
    sh = _int_seq(shift)
    if sh is None:
        raise ShapeError(f"roll: shift must be an int or a sequence of ints, got {shift!r}")
    if axis is None:
        if len(sh) != 1:
            raise ShapeError(f"roll: with axis=None, shift must be one int, got {shift!r}")
        return reshape(roll(reshape(t, (-1,)), sh[0], axis=0), t.shape)
    ax = _int_seq(axis)
    if ax is None:
        raise ShapeError(f"roll: axis must be an int or a sequence of ints, got {axis!r}")
    if len(sh) == 1:
        sh = sh * len(ax)
    if len(sh) != len(ax):
        raise ShapeError(
            f"roll: shift {shift!r} and axis {axis!r} must have the same length (or shift be "
            f"one int)"
        )
    total = [0] * t.ndim
    for s, a in zip(sh, ax):
        total[normalize_axis("roll", a, t.ndim, t.shape)] += s
    for a, s in enumerate(total):
        d = t.shape[a]
        k = s % d if d else 0
        if k:
            head = _static_slice(t, a, d - k, d)
            tail = _static_slice(t, a, 0, d - k)
            t = concatenate([head, tail], axis=a)
    return t


def _static_slice(t: Tensor, axis: int, lo: int, hi: int) -> Tensor:
    start = [0] * t.ndim
    stop = list(t.shape)
    start[axis], stop[axis] = lo, hi
    return shape_primitives.slice.bind(
        t, start=tuple(start), stop=tuple(stop), strides=(1,) * t.ndim
    )
