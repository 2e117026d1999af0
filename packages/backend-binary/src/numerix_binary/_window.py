"""Binary kernels of the window family (mixed into BinaryBackend)."""

from __future__ import annotations


class WindowKernels:
    """numpy kernels of the window primitives."""

    __slots__ = ()
