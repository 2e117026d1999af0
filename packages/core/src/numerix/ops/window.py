"""Window reductions and window scatters (pooling), on the window primitives."""

from __future__ import annotations

__all__: list[str] = []
