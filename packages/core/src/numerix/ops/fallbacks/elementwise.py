"""Fallbacks of the element-wise family: the exact ones (signs, rounding, classification, order, bits) (see :mod:`numerix.ops.fallbacks`)."""

from __future__ import annotations
