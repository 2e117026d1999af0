"""Creation: tensor, from_binary, full, zeros, ones, arange, iota, eye, linspace, *_like."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from numerix import dtypes
from numerix._array_api import placement
from numerix._shapes import check_bytes, check_shape, check_size, normalize_axis
from numerix._tensor import Tensor
from numerix.dtypes import DType
from numerix.errors import ArgumentError, DTypeError, ShapeError
from numerix.ops._core import (
    _PY_SCALARS,
    _opt_dtype,
    _scalar_for,
    check_concrete,
    check_scalar_fits,
    from_numpy,
    resolve,
    tensor,
)
from numerix.ops.transfer import backend_copy, backend_transfer
from numerix.primitives import creation as creation_primitives

__all__ = [
    "tensor",
    "asarray",
    "from_numpy",
    "from_binary",
    "to_binary",
    "full",
    "zeros",
    "ones",
    "empty",
    "full_like",
    "zeros_like",
    "ones_like",
    "empty_like",
    "arange",
    "iota",
    "eye",
    "linspace",
    "from_dlpack",
]


def asarray(
    obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None
) -> Tensor:
    """Array API ``asarray``: :func:`tensor`, on ``device`` (a tensor's ``.device``, a
    backend spec or a backend instance; default: the default backend).

    ``copy=True`` always copies; ``copy=None`` copies only where it must; ``copy=False``
    raises ArgumentError (a ValueError) where a copy is needed: unless ``obj`` is a tensor
    kept as it is, or a numpy array a host backend (``binary``) adopts in its dtype.
    """
    t = tensor(obj, dtype=_opt_dtype(dtype, "asarray"), backend=placement("asarray", device))
    if copy:
        return backend_copy(t)
    if copy is False and not _shares(obj, t):
        raise ArgumentError(
            f"asarray: copy=False, but {type(obj).__name__} data becomes {t.describe()} only "
            f"by a copy; give copy=None, or data already of that dtype and place"
        )
    return t


def _shares(obj: Any, t: Tensor) -> bool:
    # whether asarray's result t holds obj's memory (a tensor is immutable: itself is shared)
    if obj is t:
        return True
    if isinstance(obj, np.ndarray) and t.backend.is_host:
        return bool(np.shares_memory(obj, t.backend.to_numpy(t)))
    return False


def from_binary(data: bytes | bytearray | memoryview, dtype: Any, backend: Any = None) -> Tensor:
    """A 1-d tensor from raw bytes in native byte order (``Nx.from_binary``).

    >>> import numerix as nx
    >>> nx.from_binary(bytes([1, 2, 3]), nx.uint8).tolist()
    [1, 2, 3]
    """
    d = dtypes.as_dtype(dtype, "from_binary")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise DTypeError(f"from_binary: expected bytes, got {type(data).__name__}")
    n = memoryview(data).nbytes
    if n % d.itemsize:
        raise ShapeError(
            f"from_binary: {n} bytes is not a whole number of {d} elements ({d.itemsize} bytes "
            f"each); check the dtype or trim the data"
        )
    mv = memoryview(data)
    arr = np.frombuffer(mv if mv.c_contiguous else mv.tobytes(), dtype=d.numpy_dtype)
    return creation_primitives.from_numpy.bind(arr, backend=resolve(backend, "from_binary"))


def to_binary(x: Tensor) -> bytes:
    """The raw bytes of ``x``'s values in C order (``Nx.to_binary``)."""
    check_concrete(x, "to_binary")
    return np.ascontiguousarray(x.backend.to_numpy(x)).tobytes()


def full(
    shape: Any, fill_value: Any, dtype: Any = None, backend: Any = None, *, device: Any = None
) -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value`` (array API ``full``).

    ``dtype`` defaults to the default dtype of the value's kind (int64, float32, ...).
    The tensor is created on ``device`` (array API: a tensor's ``.device``) or
    ``backend`` (numerix's spelling: a backend spec or instance), by default on the
    default backend; so for every creation function.
    """
    backend = placement("full", device, backend)
    s = check_shape("full", shape)
    if type(fill_value) not in _PY_SCALARS:
        if isinstance(fill_value, np.generic) or (
            type(fill_value) is Tensor and fill_value.size == 1
        ):
            fill_value = fill_value.item()
        else:
            raise DTypeError(f"full: fill_value must be a scalar, got {type(fill_value).__name__}")
    d = _opt_dtype(dtype, "full") or dtypes.scalar_dtype(fill_value)
    if d.itemsize > 1:
        check_bytes("full", s, d.itemsize, dtype=d.name)
    check_scalar_fits("full", fill_value, d)
    be = resolve(backend, "full")
    return creation_primitives.full.bind(
        shape=s, dtype=d, value=_scalar_for(fill_value, d, "full"), backend=be
    )


def zeros(shape: Any, dtype: Any = None, backend: Any = None, *, device: Any = None) -> Tensor:
    """A tensor of zeros; ``dtype`` defaults to float32 (array API ``zeros``)."""
    return full(
        check_shape("zeros", shape),
        0,
        _opt_dtype(dtype, "zeros") or dtypes.float32,
        placement("zeros", device, backend),
    )


def ones(shape: Any, dtype: Any = None, backend: Any = None, *, device: Any = None) -> Tensor:
    """A tensor of ones; ``dtype`` defaults to float32 (array API ``ones``)."""
    return full(
        check_shape("ones", shape),
        1,
        _opt_dtype(dtype, "ones") or dtypes.float32,
        placement("ones", device, backend),
    )


def empty(shape: Any, dtype: Any = None, backend: Any = None, *, device: Any = None) -> Tensor:
    """An uninitialised tensor (zeros here: no backend hands out garbage); array API
    ``empty``."""
    return full(
        check_shape("empty", shape),
        0,
        _opt_dtype(dtype, "empty") or dtypes.float32,
        placement("empty", device, backend),
    )


def _like(
    op: str, x: Any, dtype: Any, backend: Any, device: Any
) -> tuple[tuple[int, ...], DType, Any]:
    backend = placement(op, device, backend)
    if type(x) is not Tensor:
        x = tensor(x)
    return x.shape, _opt_dtype(dtype, op) or x.dtype, x.backend if backend is None else backend


def full_like(
    x: Any, /, fill_value: Any, dtype: Any = None, backend: Any = None, *, device: Any = None
) -> Tensor:
    """A tensor of ``x``'s shape (and dtype and device, unless given) filled with
    ``fill_value`` (array API ``full_like``)."""
    s, d, b = _like("full_like", x, dtype, backend, device)
    return full(s, fill_value, d, b)


def zeros_like(x: Any, /, dtype: Any = None, backend: Any = None, *, device: Any = None) -> Tensor:
    """Zeros of ``x``'s shape (and dtype and device, unless given); array API ``zeros_like``."""
    s, d, b = _like("zeros_like", x, dtype, backend, device)
    return full(s, 0, d, b)


def ones_like(x: Any, /, dtype: Any = None, backend: Any = None, *, device: Any = None) -> Tensor:
    """Ones of ``x``'s shape (and dtype and device, unless given); array API ``ones_like``."""
    s, d, b = _like("ones_like", x, dtype, backend, device)
    return full(s, 1, d, b)


def empty_like(x: Any, /, dtype: Any = None, backend: Any = None, *, device: Any = None) -> Tensor:
    """An uninitialised tensor (zeros) of ``x``'s shape (and dtype and device, unless
    given); array API ``empty_like``."""
    s, d, b = _like("empty_like", x, dtype, backend, device)
    return full(s, 0, d, b)


def arange(
    start: Any,
    /,
    stop: Any = None,
    step: Any = 1,
    dtype: Any = None,
    backend: Any = None,
    *,
    device: Any = None,
) -> Tensor:
    """Evenly spaced values in ``[start, stop)`` (numpy / array API ``arange``).

    Integer arguments give int64, any float argument float32, unless ``dtype`` says.

    >>> import numerix as nx
    >>> nx.arange(5).tolist()
    [0, 1, 2, 3, 4]
    """
    if stop is None:
        start, stop = 0, start
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if type(v) not in (int, float) and not isinstance(v, (np.integer, np.floating)):
            raise DTypeError(f"arange: {name} must be a real number, got {v!r}")
    if step == 0:
        raise ShapeError("arange: step must not be zero")
    d = _opt_dtype(dtype, "arange")
    if d is None:
        d = (
            dtypes.int64
            if all(isinstance(v, (int, np.integer)) for v in (start, stop, step))
            else dtypes.float32
        )
    if d.kind not in "iuf":
        raise DTypeError(f"arange: dtype must be integer or real floating, got {d}")
    span = (stop - start) / step
    if not math.isfinite(span):
        raise ShapeError(
            f"arange: start, stop and step must be finite, got {start!r}, {stop!r}, {step!r}"
        )
    n = max(0, math.ceil(span))
    if d.kind in "iu" and n:
        for v in (start, start + (n - 1) * step):
            check_scalar_fits("arange", int(v), d)
    s = check_size("arange", (n,))
    if d.itemsize > 1:
        check_bytes("arange", s, d.itemsize, dtype=d.name)
    be = resolve(placement("arange", device, backend), "arange")
    return creation_primitives.arange.bind(shape=s, dtype=d, start=start, step=step, backend=be)


def iota(shape: Any, axis: int | None = None, dtype: Any = None, backend: Any = None) -> Tensor:
    """0, 1, 2, ... counting along ``axis`` of ``shape`` (``Nx.iota``); ``axis=None``
    counts over the flattened shape. ``dtype`` defaults to int64.

    >>> import numerix as nx
    >>> nx.iota((2, 3), axis=1).tolist()
    [[0, 1, 2], [0, 1, 2]]
    """
    s = check_shape("iota", shape)
    if axis is not None:
        axis = normalize_axis("iota", axis, len(s), s)
    d = _opt_dtype(dtype, "iota") or dtypes.int64
    if d.kind == "b":
        raise DTypeError("iota: dtype must be numeric, got bool")
    be = resolve(backend, "iota")
    return creation_primitives.iota.bind(shape=s, dtype=d, axis=axis, backend=be)


def eye(
    n_rows: int,
    n_cols: int | None = None,
    /,
    *,
    k: int = 0,
    dtype: Any = None,
    device: Any = None,
    backend: Any = None,
) -> Tensor:
    """A 2-d tensor with ones on the ``k``-th diagonal (array API ``eye``); float32 by default."""
    s = check_shape("eye", (n_rows, n_rows if n_cols is None else n_cols))
    if not isinstance(k, int) or isinstance(k, bool):
        raise ShapeError(f"eye: k must be an int, got {k!r}")
    d = _opt_dtype(dtype, "eye") or dtypes.float32
    be = resolve(placement("eye", device, backend), "eye")
    return creation_primitives.eye.bind(shape=s, dtype=d, k=k, backend=be)


def linspace(
    start: Any,
    stop: Any,
    /,
    num: int,
    dtype: Any = None,
    endpoint: bool = True,
    backend: Any = None,
    *,
    device: Any = None,
) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop`` (numpy ``linspace``); float32
    by default."""
    (n,) = check_shape("linspace", (num,))
    for name, v in (("start", start), ("stop", stop)):
        if type(v) not in (int, float, complex) and not isinstance(v, np.number):
            raise DTypeError(f"linspace: {name} must be a number, got {v!r}")
    d = _opt_dtype(dtype, "linspace")
    is_complex = any(isinstance(v, (complex, np.complexfloating)) for v in (start, stop))
    if d is None:
        d = dtypes.complex64 if is_complex else dtypes.float32
    elif is_complex and d.kind != "c":
        raise DTypeError(
            f"linspace: complex bounds {start!r}, {stop!r} do not fit {d}; use a complex dtype"
        )
    if d.kind == "b":
        raise DTypeError("linspace: dtype must be numeric, got bool")
    be = resolve(placement("linspace", device, backend), "linspace")
    return creation_primitives.linspace.bind(
        shape=(n,), dtype=d, start=start, stop=stop, endpoint=bool(endpoint), backend=be
    )


def from_dlpack(
    x: Any, /, *, device: Any = None, copy: bool | None = None, backend: Any = None
) -> Tensor:
    """A tensor of the values of ``x``, any object with ``__dlpack__`` (a numpy array, a
    torch tensor, a JAX array, a tensor): array API ``from_dlpack``.

    The tensor is on ``device`` (or ``backend``), by default where ``x`` is: a tensor
    stays on its backend, another library's array comes to the default backend.
    ``copy=True`` always copies; ``copy=None`` shares ``x``'s memory where it can;
    ``copy=False`` shares it or raises ArgumentError (a ValueError): for a tensor that
    changes backend, or another library's array landing on a backend that does not hold
    host memory.

    >>> import numpy as np, numerix as nx
    >>> nx.from_dlpack(np.arange(3)).tolist()
    [0, 1, 2]
    """
    target = placement("from_dlpack", device, backend)
    if not hasattr(x, "__dlpack__"):
        raise DTypeError(
            f"from_dlpack: {type(x).__name__} {x!r:.60} has no __dlpack__; use "
            f"numerix.asarray for Python data and other arrays"
        )
    if type(x) is Tensor:
        be = x.backend if target is None else resolve(target, "from_dlpack")
        if copy is False and be is not x.backend:
            raise ArgumentError(
                f"from_dlpack: copy=False, but moving {x.describe()} to {be!r} needs a copy; "
                f"give copy=None or True, or leave device unset"
            )
        if copy:
            return backend_copy(x, be)
        return x if be is x.backend else backend_transfer(x, be)
    be = resolve(target, "from_dlpack")
    if copy is False:
        if not be.is_host:
            raise ArgumentError(
                f"from_dlpack: copy=False, but {type(x).__name__} data comes to {be!r} by a "
                f"copy; give copy=None or True, or a host backend such as 'binary'"
            )
        try:
            host = np.from_dlpack(x, copy=False)
        except (BufferError, TypeError, RuntimeError) as e:
            raise ArgumentError(
                f"from_dlpack: copy=False, but {type(x).__name__} cannot share its memory with "
                f"numpy ({e}); give copy=None or True"
            ) from None
        return from_numpy(host, backend=be)
    t = tensor(x, backend=be)
    return backend_copy(t) if copy else t
