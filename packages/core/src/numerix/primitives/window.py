"""Window reductions (pooling) and window scatters."""

from __future__ import annotations

from numerix.primitives._registry import REGISTRY

_ = REGISTRY
