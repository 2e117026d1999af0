"""Composites written once from primitives: softmax, logsumexp, norm, split, one_hot, ..."""

from __future__ import annotations

__all__: list[str] = []
