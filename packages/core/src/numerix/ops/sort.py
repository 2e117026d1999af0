"""Sorting, top_k and cumulative ops."""

from __future__ import annotations

__all__: list[str] = []
