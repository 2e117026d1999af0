"""Tensors you can see: a tensor's HTML view in Jupyter (``Tensor._repr_html_``) and
images (:func:`image`, ``Tensor.to_image``) written as PNG with the standard library.

A tensor's text and HTML views show what numpy prints: every value of a tensor of at
most 100 elements, else the first and last 3 along each longer axis with "..." between.
Only those edge values go to the host: they are gathered by slicing on the tensor's own
backend, so showing a large tensor on a device copies at most ``6 ** ndim`` elements.
"""

from __future__ import annotations

import base64
import html
import math
import os
import struct
import sys
import zlib
from typing import Any

import numpy as np

from numerix._meeting import DEALLOCATED, check_concrete
from numerix._tensor import _REPR_EDGE_ITEMS, _REPR_LIMIT, Tensor
from numerix.errors import ArgumentError, DTypeError, ShapeError
from numerix.ops._core import as_tensor, is_concrete
from numerix.ops.indexing import getitem
from numerix.ops.shape import concatenate

__all__ = ["image", "Image"]

#: The most pixels (height × width) :func:`image` encodes: 2**26, an 8192 × 8192 image.
#: A larger one is refused (ShapeError) rather than held three times in host memory
#: (values, rows, compressed) for a picture no notebook shows whole.
MAX_PIXELS = 1 << 26

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: PNG colour type of each channel count: grey, (grey as H×W×1), RGB, RGBA.
_COLOUR_TYPE = {1: 0, 3: 2, 4: 6}
_MODE = {1: "grey", 3: "RGB", 4: "RGBA"}
_CELL_SEP = "|"  # between the values numpy formats at once; never part of a number


# ---------------------------------------------------------------- the values shown
def _summarized(t: Tensor) -> bool:
    # numpy's rule, with the text repr's threshold: more elements than the limit
    return math.prod(t.shape) > _REPR_LIMIT


def edge_values(t: Tensor) -> np.ndarray:
    """The values a view of ``t`` shows, on the host: all of them when ``t`` has at most
    the repr's limit of elements, else only the first and last 3 along each longer
    axis (``6 ** ndim`` elements at most), gathered on ``t``'s backend before the copy.
    bfloat16 comes back as float32, which numpy prints."""
    x = t
    if _summarized(t):
        e = _REPR_EDGE_ITEMS
        for axis, n in enumerate(t.shape):
            if n > 2 * e:
                lead = (slice(None),) * axis
                x = concatenate(
                    [getitem(x, (*lead, slice(0, e))), getitem(x, (*lead, slice(n - e, n)))],
                    axis=axis,
                )
    a = x.backend.to_numpy(x)
    if t.dtype.name == "bfloat16":
        a = a.astype(np.float32)
    return a


def printed_values(t: Tensor) -> tuple[np.ndarray, int]:
    """An array and the threshold with which ``np.array2string(a, threshold=...,
    edgeitems=3)`` prints what it prints for all of ``t``'s values, with only the edges
    copied to the host.

    For a large tensor the edges get one filler element in the middle of each longer
    axis, which numpy's summary replaces with "...", and the threshold 0 makes numpy
    summarize: numpy formats a summarized array from its edges only, so the text is the
    same, digit for digit, as for the whole array."""
    a = edge_values(t)
    if not _summarized(t):
        return a, _REPR_LIMIT
    e = _REPR_EDGE_ITEMS
    for axis, n in enumerate(t.shape):
        if n > 2 * e:
            head, tail = np.split(a, [e], axis=axis)
            filler = np.take(a, [0], axis=axis)
            a = np.concatenate([head, filler, tail], axis=axis)
    return a, 0


def _cells(values: np.ndarray) -> list[str]:
    """Each of ``values`` (C order) as numpy prints it, all in one format."""
    if values.size == 0:
        return []
    text = np.array2string(
        values.reshape(-1),
        threshold=sys.maxsize,
        max_line_width=sys.maxsize,
        separator=_CELL_SEP,
    )
    return [c.strip() for c in text[1:-1].split(_CELL_SEP)]


def _positions(n: int, summarized: bool) -> list[int | None]:
    # the indices of one axis a view shows; None where "…" stands for the middle
    e = _REPR_EDGE_ITEMS
    if summarized and n > 2 * e:
        return [*range(e), None, *range(n - e, n)]
    return list(range(n))


# ---------------------------------------------------------------- HTML
_BOX = "font-family: monospace; font-size: 12px; overflow-x: auto"
_TABLE = "border-collapse: collapse; text-align: right"
_HEAD = "padding: 1px 6px; color: #888; font-weight: normal; text-align: right"
_CELL = "padding: 1px 6px; text-align: right"


def _header(t: Tensor, state: str) -> str:
    fields = [
        ("dtype", t.dtype.name),
        ("shape", str(t.shape)),
        ("backend", t.backend.name),
        ("device", str(t.backend.device)),
    ]
    parts = ", ".join(f"{k} <b>{html.escape(v)}</b>" for k, v in fields)
    note = f" — {html.escape(state)}" if state else ""
    return f"<div><b>Tensor</b> <code>{html.escape(t.describe())}</code>: {parts}{note}</div>"


def _table(t: Tensor, values: np.ndarray, summarized: bool) -> str:
    shape2 = (1, *t.shape) if t.ndim == 1 else t.shape
    rows = _positions(shape2[0], summarized)
    cols = _positions(shape2[1], summarized)
    cells = _cells(values)
    width = values.shape[-1] if t.ndim else 1
    out = [f'<table style="{_TABLE}">', "<tr>"]
    if t.ndim == 2:
        out.append(f'<th style="{_HEAD}"></th>')
    for j in cols:
        out.append(f'<th style="{_HEAD}">{"…" if j is None else j}</th>')
    out.append("</tr>")
    r = 0  # the row of `values` (the edges only) that the next shown row reads
    for i in rows:
        out.append("<tr>")
        if t.ndim == 2:
            out.append(f'<th style="{_HEAD}">{"…" if i is None else i}</th>')
        c = 0
        for j in cols:
            if i is None or j is None:
                text = "…"
            else:
                text = html.escape(cells[r * width + c])
                c += 1
            out.append(f'<td style="{_CELL}">{text}</td>')
        out.append("</tr>")
        if i is not None:
            r += 1
    out.append("</table>")
    return "".join(out)


def tensor_html(t: Tensor) -> str:
    """``Tensor._repr_html_``: dtype, shape, backend and device, then the values numpy
    prints (the same values as the text repr): the value of a 0-d tensor, a table for 1-d
    and 2-d (rows and columns, "…" for the summarized middle), numpy's text in a
    ``<pre>`` for 3-d and more. A traced or deallocated tensor says so, with no values.
    Self-contained: inline styles, no script, every text escaped."""
    if t.data is None and t.backend is DEALLOCATED:
        return f'<div style="{_BOX}">{_header(t, "deallocated")}</div>'
    if not is_concrete(t):
        state = "traced: its values exist only when the function runs"
        return f'<div style="{_BOX}">{_header(t, state)}</div>'
    summarized = _summarized(t)
    state = ""
    if summarized:
        e = _REPR_EDGE_ITEMS
        state = f"summarized as numpy prints it: the first and last {e} along each longer axis"
    if math.prod(t.shape) == 0:
        body = "<div><i>no values</i></div>"
    elif t.ndim == 0:
        body = f"<div>{html.escape(np.array2string(edge_values(t)))}</div>"
    elif t.ndim <= 2:
        body = _table(t, edge_values(t), summarized)
    else:
        a, threshold = printed_values(t)
        text = np.array2string(a, threshold=threshold, edgeitems=_REPR_EDGE_ITEMS, separator=", ")
        body = f"<pre>{html.escape(text)}</pre>"
    return f'<div style="{_BOX}">{_header(t, state)}{body}</div>'


# ---------------------------------------------------------------- images
class Image:
    """A PNG image of a tensor, which Jupyter shows (``_repr_png_``, ``_repr_html_``).

    ``data`` is the PNG file's bytes, ``shape`` the tensor's (H×W, H×W×1, H×W×3 or
    H×W×4), ``mode`` ``"grey"``, ``"RGB"`` or ``"RGBA"``; :meth:`save` writes the file.
    """

    __slots__ = ("data", "format", "mode", "shape")

    def __init__(self, data: bytes, shape: tuple[int, ...], mode: str) -> None:
        self.data = data
        self.shape = shape
        self.mode = mode
        self.format = "png"

    @property
    def height(self) -> int:
        return self.shape[0]

    @property
    def width(self) -> int:
        return self.shape[1]

    def _repr_png_(self) -> bytes:
        return self.data

    def _repr_html_(self) -> str:
        uri = "data:image/png;base64," + base64.b64encode(self.data).decode("ascii")
        return (
            f'<img src="{uri}" width="{self.width}" height="{self.height}" '
            f'alt="{self.mode} image {self.height}×{self.width}" '
            f'style="image-rendering: pixelated">'
        )

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the PNG file to ``path``."""
        with open(path, "wb") as f:
            f.write(self.data)

    def __repr__(self) -> str:
        return f"Image<png {self.height}×{self.width} {self.mode}, {len(self.data)} bytes>"


def image(t: Any, *, format: str = "png") -> Image:
    """An :class:`Image` of ``t`` that Jupyter shows: H×W (grey), H×W×1, H×W×3 (RGB) or
    H×W×4 (RGBA); uint8 values as they are, float values (any float dtype) in [0, 1]
    scaled by 255 and rounded (numpy's round), bool as 0 and 255. ``t.to_image()`` is the
    same. The PNG is written with zlib from the standard library.

    Refused, each with its fix: another dtype (DTypeError), float values outside [0, 1]
    or NaN (ArgumentError), another shape, an empty image or one of more than
    :data:`MAX_PIXELS` pixels (ShapeError).

    >>> import numerix as nx
    >>> img = nx.image(nx.tensor([[0.0, 0.5], [1.0, 0.25]]))
    >>> img
    Image<png 2×2 grey, ... bytes>
    >>> img.data[:8] == b"\\x89PNG\\r\\n\\x1a\\n", img.shape
    (True, (2, 2))
    """
    if format != "png":
        raise ArgumentError(f"image: the formats are 'png', got format={format!r}")
    x = t if isinstance(t, Tensor) else as_tensor(t, "image")
    check_concrete(x, "image")
    pixels = _pixels(x)
    return Image(_png(pixels), x.shape, _MODE[pixels.shape[2]])


def _pixels(x: Tensor) -> np.ndarray:
    """``x``'s values as H×W×C uint8, after every check."""
    shape = x.shape
    if not (len(shape) == 2 or (len(shape) == 3 and shape[2] in _COLOUR_TYPE)):
        raise ShapeError(
            f"image: takes an H×W (grey), H×W×1, H×W×3 (RGB) or H×W×4 (RGBA) tensor, got "
            f"{x.describe()}; reshape a flat image with t.reshape(height, width), or pick "
            f"one image of a batch with t[i]"
        )
    if shape[0] == 0 or shape[1] == 0:
        raise ShapeError(f"image: a PNG has at least one row and one column, got {x.describe()}")
    if shape[0] * shape[1] > MAX_PIXELS:
        raise ShapeError(
            f"image: encodes at most {MAX_PIXELS} pixels (8192 × 8192), got {x.describe()}; "
            f"show a part (t[:1024, :1024]) or a downsampled view (t[::4, ::4])"
        )
    kind, name = x.dtype.kind, x.dtype.name
    if name != "uint8" and kind not in "fb":
        raise DTypeError(
            f"image: takes uint8, bool or float values in [0, 1], got {x.describe()}; "
            f"cast 0-255 integers with t.astype(numerix.uint8), or scale others to [0, 1] "
            f"and pass floats"
        )
    a = x.backend.to_numpy(x)
    if kind == "b":
        a = np.where(a, np.uint8(255), np.uint8(0))
    elif kind == "f":
        f = a.astype(np.float64)
        outside = ~((f >= 0.0) & (f <= 1.0))  # NaN is outside too
        if outside.any():
            numbers = f[~np.isnan(f)]
            seen = []
            if numbers.size:
                lo, hi = float(numbers.min()), float(numbers.max())
                seen.append(f"values from {lo!r} to {hi!r}")
            if numbers.size < f.size:
                seen.append(f"{f.size - numbers.size} NaN")
            raise ArgumentError(
                f"image: float values must lie in [0, 1], got {' and '.join(seen)} in "
                f"{x.describe()}; clip with t.clip(0, 1), normalise with "
                f"(t - t.min()) / (t.max() - t.min()), or replace NaN with "
                f"numerix.where(numerix.isnan(t), 0, t)"
            )
        a = np.rint(f * 255.0).astype(np.uint8)
    a = np.ascontiguousarray(a, dtype=np.uint8)
    return a.reshape(shape[0], shape[1], 1 if len(shape) == 2 else shape[2])


def _chunk(kind: bytes, body: bytes) -> bytes:
    # length, type, data, and the CRC-32 of type and data (PNG spec, section 5.3)
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _png(pixels: np.ndarray) -> bytes:
    """A PNG file of H×W×C uint8 ``pixels``: 8 bits per sample, no interlace, every row
    with filter type 0 (none) before zlib's compression."""
    height, width, channels = pixels.shape
    header = struct.pack(">IIBBBBB", width, height, 8, _COLOUR_TYPE[channels], 0, 0, 0)
    rows = np.zeros((height, 1 + width * channels), dtype=np.uint8)  # byte 0: the filter
    rows[:, 1:] = pixels.reshape(height, width * channels)
    return b"".join(
        (
            _PNG_SIGNATURE,
            _chunk(b"IHDR", header),
            _chunk(b"IDAT", zlib.compress(rows.tobytes())),
            _chunk(b"IEND", b""),
        )
    )
