"""Shape helpers shared by the shape rules: cached, and raising errors that name the op."""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import cache, lru_cache

from numerix.errors import AxisError, OutOfMemoryError, ShapeError

Shape = tuple[int, ...]

#: The most elements a shape may count, its zero extents left out: numpy's limit (the
#: bytes of the non-zero extents, itemsize times their product, fit a signed 64-bit
#: count) taken at the widest dtype, 16 bytes, so that a shape good for one dtype is
#: good for every dtype an astype or a promotion gives it. XLA aborts the process past
#: it, on an empty shape too ("overflow in static extent product" for (2**59, 0) c128).
MAX_ELEMENTS = 2**59 - 1

#: Shapes of fewer elements than this are not compared with the machine's memory.
_CHECK_MEMORY_FROM = 2**26


@cache
def memory_capacity() -> int:
    """The bytes of memory this machine can give a process: its RAM and swap (read once;
    a platform that does not say gets no limit)."""
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return 2**63
    swap = 0
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("SwapTotal:"):
                    swap = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return ram + swap


def check_bytes(
    op: str, shape: Shape, itemsize: int, n: int | None = None, dtype: str | None = None
) -> None:
    """Raise :class:`~numerix.errors.OutOfMemoryError` naming ``op`` when a tensor of
    ``shape`` and ``itemsize`` bytes per element needs more than :func:`memory_capacity`
    (numpy, JAX and PyTorch would each fail with an error of their own, or the machine
    would swap until the process is killed). Without ``dtype``, ``itemsize`` is a lower
    bound (the shape alone is known)."""
    n = size_of(shape) if n is None else n
    need = n * itemsize
    have = memory_capacity()
    if need > have:
        what = f"a {dtype} tensor" if dtype else "a tensor"
        least = "" if dtype else "at least "
        raise OutOfMemoryError(
            f"{op}: {what} of shape {shape} ({n} elements) needs {least}{_bytes(need)}, more "
            f"than this machine's memory ({_bytes(have)} of RAM and swap); use a smaller "
            f"shape, or process the data in chunks"
        )


def _bytes(n: int) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def check_size(op: str, shape: Shape) -> Shape:
    """``shape`` if a tensor of it can exist at all, else a ShapeError naming ``op``: its
    elements, and for an empty shape the product of its non-zero extents, at most
    :data:`MAX_ELEMENTS` (a backend given more may abort the process). A shape whose
    elements alone (a byte each) outgrow the machine's memory is an
    :class:`~numerix.errors.OutOfMemoryError`."""
    n = size_of(shape)
    if n > MAX_ELEMENTS:
        raise ShapeError(
            f"{op}: shape {shape} has {n} elements, more than any tensor can hold (at most "
            f"2**59 - 1, where sizes in bytes overflow 64 bits); use a smaller shape"
        )
    if n > _CHECK_MEMORY_FROM:
        check_bytes(op, shape, 1, n)
    elif n == 0:
        extents = size_of(tuple(d for d in shape if d))
        if extents > MAX_ELEMENTS:
            raise ShapeError(
                f"{op}: shape {shape} is empty, but its non-zero extents multiply to "
                f"{extents}, more than any tensor can hold (at most 2**59 - 1, where sizes "
                f"in bytes overflow 64 bits; numpy and XLA refuse such a shape, empty or "
                f"not); use a smaller extent"
            )
    return shape


@lru_cache(maxsize=4096)
def _broadcast_pair(a: Shape, b: Shape) -> Shape | None:
    if a == b:
        return a
    n = max(len(a), len(b))
    pa = (1,) * (n - len(a)) + a
    pb = (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(pa, pb):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(out)


def broadcast_shapes(op: str, *shapes: Shape) -> Shape:
    """numpy broadcasting of ``shapes``; ShapeError naming ``op`` when they don't broadcast."""
    out = shapes[0]
    for s in shapes[1:]:
        r = _broadcast_pair(out, s)
        if r is None:
            raise ShapeError(
                f"{op}: shapes {' and '.join(str(tuple(x)) for x in shapes)} cannot be broadcast "
                f"together (dimensions must be equal or 1, aligned from the right); reshape or "
                f"expand_dims one operand so they line up"
            )
        if r != out and r != s:  # grown past both operands: it may be too large
            check_size(op, r)
        out = r
    return out


def normalize_axis(op: str, axis: int, ndim: int, shape: Shape | None = None) -> int:
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise ShapeError(f"{op}: axis must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        where = f"shape {shape}" if shape is not None else f"{ndim} dimensions"
        raise AxisError(
            f"{op}: axis {axis} is out of range for a tensor of {where}; "
            f"valid axes are {-ndim}..{ndim - 1}"
            if ndim
            else f"{op}: axis {axis} is out of range for a 0-d tensor, which has no axes"
        )
    return axis + ndim if axis < 0 else axis


def normalize_axes(
    op: str, axis: int | Sequence[int] | None, ndim: int, shape: Shape | None = None
) -> tuple[int, ...]:
    """Sorted, non-negative, unique axes; ``None`` means every axis."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = [normalize_axis(op, a, ndim, shape) for a in axis]
        if len(set(axes)) != len(axes):
            raise ShapeError(f"{op}: repeated axis in {tuple(axis)}")
        return tuple(sorted(axes))
    return (normalize_axis(op, axis, ndim, shape),)  # type: ignore[arg-type]


def check_shape(op: str, shape: object) -> Shape:
    """Validate a user-given shape (an int or a sequence of non-negative ints)."""
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        raise ShapeError(f"{op}: shape must be an int or a tuple of ints, got {shape!r}")
    out = []
    for d in shape:
        if not (isinstance(d, int) and not isinstance(d, bool)) and not hasattr(d, "__index__"):
            raise ShapeError(f"{op}: shape must contain ints, got {tuple(shape)!r}")
        d = int(d.__index__())
        if d < 0:
            raise ShapeError(f"{op}: negative dimension {d} in shape {tuple(shape)!r}")
        out.append(d)
    return check_size(op, tuple(out))


def size_of(shape: Shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n
