"""Convolution, on the conv primitive."""

from __future__ import annotations

__all__: list[str] = []
