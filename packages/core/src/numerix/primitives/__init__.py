"""The primitives of the backend contract, declared once in :data:`REGISTRY`."""

from numerix.primitives import creation, elementwise, indexing, linalg, reduction, shape
from numerix.primitives._registry import CONTRACT_VERSION, REGISTRY, Primitive, PrimitiveRegistry

__all__ = [
    "REGISTRY",
    "CONTRACT_VERSION",
    "Primitive",
    "PrimitiveRegistry",
    "creation",
    "elementwise",
    "indexing",
    "linalg",
    "reduction",
    "shape",
]
