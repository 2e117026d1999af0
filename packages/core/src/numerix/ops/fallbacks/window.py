"""Fallbacks of the window family (see :mod:`numerix.ops.fallbacks`)."""

from __future__ import annotations
