"""Fallbacks of the shape family (see :mod:`numerix.ops.fallbacks`)."""

from __future__ import annotations
