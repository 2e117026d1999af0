"""Binary kernels of the conv family (mixed into BinaryBackend)."""

from __future__ import annotations


class ConvKernels:
    """numpy kernels of the conv primitives."""

    __slots__ = ()
