"""Fallbacks of the conv and fft families (see :mod:`numerix.ops.fallbacks`)."""

from __future__ import annotations
