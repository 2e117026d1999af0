"""Creation and host-exchange primitives. ``out`` carries the shape and dtype.

No input fixes their output: the rules read it from the ``shape`` and ``dtype``
parameters (:attr:`~numerix.primitives.Primitive.out_params`), which the kernel finds
in ``out``. ``from_numpy``'s output is its host array's shape and dtype.
"""

from __future__ import annotations

from typing import Any

from numerix import dtypes
from numerix.primitives._registry import REGISTRY, nondifferentiable


def created_shape_rule(*, shape: tuple[int, ...], **params: Any) -> tuple[int, ...]:
    return shape


def created_dtype_rule(*, dtype: dtypes.DType, **params: Any) -> dtypes.DType:
    return dtype


def from_numpy_shape_rule(array: tuple[int, ...]) -> tuple[int, ...]:
    return array


def from_numpy_dtype_rule(array: Any) -> dtypes.DType:
    # the input is a host array: its dtype is numpy's
    return array if type(array) is dtypes.DType else dtypes.from_numpy_dtype(array, "from_numpy")


_CREATED: dict[str, Any] = {"shape_rule": created_shape_rule, "dtype_rule": created_dtype_rule}
_OUT = ("shape", "dtype")

iota = REGISTRY.declare(
    "iota", "creation", inputs=(), params=("axis",), out_params=_OUT, **_CREATED,
    doc="0, 1, 2, ... along `axis` (broadcast over the other axes); axis=None counts over the "
        "flattened shape",
)  # fmt: skip
full = REGISTRY.declare(
    "full", "creation", inputs=(), params=("value",), out_params=_OUT, **_CREATED,
    doc="every element `value` (a Python scalar the core checked fits out.dtype)",
)  # fmt: skip
eye = REGISTRY.declare(
    "eye", "creation", inputs=(), params=("k",), out_params=_OUT, **_CREATED,
    doc="ones on the k-th diagonal of the last two axes, zeros elsewhere",
)  # fmt: skip
arange = REGISTRY.declare(
    "arange", "creation", inputs=(), params=("start", "step"), out_params=_OUT, **_CREATED,
    doc="start + i*step for i in range(out.shape[0]), computed as numpy.arange does",
)  # fmt: skip
linspace = REGISTRY.declare(
    "linspace", "creation", inputs=(), params=("start", "stop", "endpoint"), out_params=_OUT,
    **_CREATED,
    doc="out.shape[0] evenly spaced values from start to stop, computed as numpy.linspace does",
)  # fmt: skip
from_numpy = REGISTRY.declare(
    "from_numpy", "creation", inputs=("array",),
    shape_rule=from_numpy_shape_rule, dtype_rule=from_numpy_dtype_rule,
    doc="adopt a host numpy array of exactly out.dtype and out.shape (no copy where possible)",
)  # fmt: skip

# created from static parameters (or a host array): nothing to differentiate
nondifferentiable("iota", "full", "eye", "arange", "linspace", "from_numpy")
