"""Indexing primitives: gather, and scatter as indexed_add / indexed_put."""

from __future__ import annotations

from numerix import dtypes as D
from numerix.primitives._registry import REGISTRY

gather = REGISTRY.declare(
    "gather", "indexing", inputs=("x", "indices"), params=("axes",),
    doc="indices has a last dimension of len(axes) (int64, in range); out has shape "
        "indices.shape[:-1] + the dimensions of x not in axes, in order (Nx semantics)",
)  # fmt: skip


def indexed_shape_rule(
    x: tuple[int, ...], indices: tuple[int, ...], updates: tuple[int, ...], *, axes: tuple[int, ...]
) -> tuple[int, ...]:
    return x


def indexed_dtype_rule(x: D.DType, indices: D.DType, updates: D.DType, **params: object) -> D.DType:
    return x


indexed_add = REGISTRY.declare(
    "indexed_add", "indexing", inputs=("x", "indices", "updates"), params=("axes",),
    shape_rule=indexed_shape_rule, dtype_rule=indexed_dtype_rule,
    doc="scatter-add (Nx): a copy of x with updates[i] added at x[indices[i]] over axes; indices "
        "(n, len(axes)) int64 in range, updates (n,) + x's other dims in x's dtype; duplicates sum",
)  # fmt: skip
indexed_put = REGISTRY.declare(
    "indexed_put", "indexing", inputs=("x", "indices", "updates"), params=("axes",),
    shape_rule=indexed_shape_rule, dtype_rule=indexed_dtype_rule,
    doc="scatter (Nx): as indexed_add but writing updates[i]; of duplicate indices the last "
        "(largest i) wins, deterministically",
)  # fmt: skip
