"""Indexing primitives."""

from __future__ import annotations

from numerix.primitives._registry import REGISTRY

gather = REGISTRY.declare(
    "gather", "indexing", inputs=("x", "indices"), params=("axes",),
    doc="indices has a last dimension of len(axes) (int64, in range); out has shape "
        "indices.shape[:-1] + the dimensions of x not in axes, in order (Nx semantics)",
)  # fmt: skip
