"""Xla kernels of the shape-indexing, window, conv, sort, cumulative, fft and linear-algebra
families (mixed into XlaBackend)."""

from __future__ import annotations


class ExtraKernels:
    """Kernels beyond the element-wise, reduction and basic shape families."""

    __slots__ = ()
