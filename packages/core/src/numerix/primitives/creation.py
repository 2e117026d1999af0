"""Creation and host-exchange primitives. ``out`` carries the shape and dtype."""

from __future__ import annotations

from numerix.primitives._registry import REGISTRY, nondifferentiable

iota = REGISTRY.declare(
    "iota", "creation", inputs=(), params=("axis",),
    doc="0, 1, 2, ... along `axis` (broadcast over the other axes); axis=None counts over the "
        "flattened shape",
)  # fmt: skip
full = REGISTRY.declare(
    "full", "creation", inputs=(), params=("value",),
    doc="every element `value` (a Python scalar the core checked fits out.dtype)",
)  # fmt: skip
eye = REGISTRY.declare(
    "eye", "creation", inputs=(), params=("k",),
    doc="ones on the k-th diagonal of the last two axes, zeros elsewhere",
)  # fmt: skip
arange = REGISTRY.declare(
    "arange", "creation", inputs=(), params=("start", "step"),
    doc="start + i*step for i in range(out.shape[0]), computed as numpy.arange does",
)  # fmt: skip
linspace = REGISTRY.declare(
    "linspace", "creation", inputs=(), params=("start", "stop", "endpoint"),
    doc="out.shape[0] evenly spaced values from start to stop, computed as numpy.linspace does",
)  # fmt: skip
from_numpy = REGISTRY.declare(
    "from_numpy", "creation", inputs=("array",),
    doc="adopt a host numpy array of exactly out.dtype and out.shape (no copy where possible)",
)  # fmt: skip

# created from static parameters (or a host array): nothing to differentiate
nondifferentiable("iota", "full", "eye", "arange", "linspace", "from_numpy")
