"""Binary kernels of the sort family (mixed into BinaryBackend)."""

from __future__ import annotations


class SortKernels:
    """numpy kernels of the sort primitives."""

    __slots__ = ()
