"""Fallbacks of the creation family (see :mod:`numerix.ops.fallbacks`): each computes
its values on the host with numpy, as ``binary`` does, and hands them to the backend
through ``from_numpy`` (under a compiler the host array is a constant of the program)."""

from __future__ import annotations

from typing import Any

import numpy as np

from numerix._tensor import Tensor
from numerix.dtypes import DType
from numerix.ops.fallbacks._common import const
from numerix.primitives import fallback_rule


@fallback_rule("full")
def full(out: Tensor, *, value: Any, shape: tuple[int, ...], dtype: DType) -> Tensor:
    with np.errstate(all="ignore"):  # the core rounded the value to dtype already
        return const(out, np.full(shape, value, dtype=dtype.numpy_dtype))


@fallback_rule("iota")
def iota(out: Tensor, *, axis: int | None, shape: tuple[int, ...], dtype: DType) -> Tensor:
    dt = dtype.numpy_dtype
    if axis is None:
        return const(out, np.arange(int(np.prod(shape, dtype=np.int64)), dtype=dt).reshape(shape))
    view = [1] * len(shape)
    view[axis] = shape[axis]
    return const(out, np.broadcast_to(np.arange(shape[axis], dtype=dt).reshape(view), shape))


@fallback_rule("eye")
def eye(out: Tensor, *, k: int, shape: tuple[int, ...], dtype: DType) -> Tensor:
    *_, n, m = shape
    return const(out, np.broadcast_to(np.eye(n, m, k=k, dtype=dtype.numpy_dtype), shape))


@fallback_rule("arange")
def arange(out: Tensor, *, start: Any, step: Any, shape: tuple[int, ...], dtype: DType) -> Tensor:
    n = shape[0]
    return const(out, np.arange(start, start + n * step, step, dtype=dtype.numpy_dtype)[:n])


@fallback_rule("linspace")
def linspace(
    out: Tensor, *, start: Any, stop: Any, endpoint: bool, shape: tuple[int, ...], dtype: DType
) -> Tensor:
    r = np.linspace(start, stop, shape[0], endpoint=endpoint)
    if dtype.kind in "iu":
        r = np.floor(r)
    return const(out, r.astype(dtype.numpy_dtype))
