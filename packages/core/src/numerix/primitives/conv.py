"""Convolution, N-d, as XLA's ConvGeneralDilated."""

from __future__ import annotations

from numerix.primitives._registry import REGISTRY

_ = REGISTRY
