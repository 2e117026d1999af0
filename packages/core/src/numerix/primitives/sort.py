"""Sorting and cumulative primitives."""

from __future__ import annotations

from numerix.primitives._registry import REGISTRY

_ = REGISTRY
