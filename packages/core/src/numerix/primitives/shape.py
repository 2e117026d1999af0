"""Shape primitives: reshape, transpose, broadcast, concatenate, slice, reverse."""

from __future__ import annotations

from numerix.primitives._registry import REGISTRY

reshape = REGISTRY.declare(
    "reshape", "shape", inputs=("x",),
    doc="the same elements in C order, in out.shape (sizes equal)",
)  # fmt: skip
transpose = REGISTRY.declare(
    "transpose", "shape", inputs=("x",), params=("axes",),
    doc="out axis i is x axis axes[i] (a permutation)",
)  # fmt: skip
broadcast = REGISTRY.declare(
    "broadcast", "shape", inputs=("x",), params=("axes",),
    doc="x axis i maps to out axis axes[i] (increasing); x's dimensions are equal to out's or 1",
)  # fmt: skip
concatenate = REGISTRY.declare(
    "concatenate", "shape", inputs=("*xs",), params=("axis",),
    doc="join along an existing axis; inputs share out.dtype and all other dimensions",
)  # fmt: skip
slice = REGISTRY.declare(
    "slice", "shape", inputs=("x",), params=("start", "stop", "strides"),
    doc="x[start:stop:strides] per axis, with 0 <= start <= stop <= dim and strides >= 1",
)  # fmt: skip
reverse = REGISTRY.declare(
    "reverse", "shape", inputs=("x",), params=("axes",),
    doc="reverse the order of elements along each of axes",
)  # fmt: skip
