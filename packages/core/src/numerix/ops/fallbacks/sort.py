"""Fallbacks of the sort family (see :mod:`numerix.ops.fallbacks`)."""

from __future__ import annotations
