"""The primitives of the backend contract, declared once in :data:`REGISTRY`."""

from numerix.primitives import (
    conv,
    creation,
    elementwise,
    fft,
    indexing,
    linalg,
    linalg_blocks,
    nn,
    random,
    reduction,
    shape,
    sort,
    window,
)
from numerix.primitives._registry import (
    BLOCKS,
    CONTRACT_VERSION,
    REGISTRY,
    Block,
    Primitive,
    PrimitiveRegistry,
)

__all__ = [
    "REGISTRY",
    "BLOCKS",
    "Block",
    "conv",
    "sort",
    "window",
    "CONTRACT_VERSION",
    "Primitive",
    "PrimitiveRegistry",
    "creation",
    "elementwise",
    "fft",
    "indexing",
    "linalg",
    "linalg_blocks",
    "nn",
    "random",
    "reduction",
    "shape",
]
