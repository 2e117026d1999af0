"""Fallbacks of the element-wise family: the transcendental functions (see :mod:`numerix.ops.fallbacks`)."""

from __future__ import annotations
