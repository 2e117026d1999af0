"""Creation: tensor, from_binary, full, zeros, ones, arange, iota, eye, linspace, *_like."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from numerix import dtypes as D
from numerix._shapes import check_bytes, check_shape, normalize_axis
from numerix._tensor import Tensor
from numerix.dtypes import DType
from numerix.errors import DTypeError, ShapeError, TracingError
from numerix.ops._core import (
    _PY_SCALARS,
    cast,
    check_concrete,
    check_scalar_fits,
    resolve,
    stored,
)
from numerix.ops.elementwise import astype
from numerix.primitives import creation as P

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
]

_DEFAULT_FOR_KIND = {"b": D.bool_, "i": D.int64, "u": D.int64, "f": D.float32, "c": D.complex64}


def _opt_dtype(dtype: Any, op: str) -> DType | None:
    return None if dtype is None else D.as_dtype(dtype, op)


def tensor(data: Any, dtype: Any = None, backend: Any = None, **backend_options: Any) -> Tensor:
    """Create a tensor from Python scalars, nested lists, a numpy array, a Tensor or any
    object with ``__dlpack__``.

    Follows ``Nx.tensor`` and ``numpy.asarray``: Python ``int``/``float``/``complex`` data
    takes the default int64 / float32 / complex64 unless ``dtype`` says otherwise; numpy
    arrays keep their dtype (and are adopted without a copy on ``binary``).

    >>> import numerix as nx
    >>> nx.tensor([[1, 2], [3, 4]]).describe()
    's64[2][2] binary(cpu)'
    >>> nx.tensor([1.5, 2.0]).dtype
    numerix.float32

    A ragged list raises::

        nx.tensor([[1, 2], [3]])  # ShapeError: tensor: ragged nested sequence ...
    """
    dt = _opt_dtype(dtype, "tensor")
    if backend_options:
        from numerix.defaults import get_default_backend, resolve_backend

        be = resolve_backend(
            get_default_backend() if backend is None else backend, "tensor", **backend_options
        )
    else:
        be = resolve(backend, "tensor")
    if type(data) is Tensor:
        t = data
        if backend is not None or backend_options:
            from numerix.ops.transfer import backend_transfer

            t = backend_transfer(t, be)
        return t if dt is None else _convert(t, dt, "tensor")
    t_data = type(data)
    if t_data in _PY_SCALARS:
        d = dt if dt is not None else D.scalar_dtype(data)
        if t_data is int and d.kind in "iu":
            check_scalar_fits("tensor", data, d)
        return P.full.bind(shape=(), dtype=d, value=_scalar_for(data, d, "tensor"), backend=be)
    arr = _to_numpy(data, dt)
    t = from_numpy(arr, backend=be)
    return t if dt is None else _convert(t, dt, "tensor")


def _convert(t: Tensor, dt: DType, op: str) -> Tensor:
    # numpy casting, except that complex to real is refused, as by astype (complex to
    # bool is x != 0, as there)
    if t.dtype.kind == "c" and dt.kind == "b":
        return astype(t, dt)
    if t.dtype.kind == "c" and dt.kind != "c":
        raise DTypeError(
            f"{op}: converting complex {t.describe()} to {dt} would drop the imaginary part; "
            f"give a complex dtype"
        )
    return cast(t, dt)


def asarray(
    obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None
) -> Tensor:
    """Array API ``asarray``: :func:`tensor`, with ``device`` naming a backend spec."""
    t = tensor(obj, dtype=dtype, backend=device)
    if copy:
        from numerix.ops.transfer import backend_copy

        return backend_copy(t)
    return t


def _scalar_for(value: Any, d: DType, op: str) -> Any:
    # a Python value the backend can store in d (numpy casting rules for explicit dtypes;
    # a float outside an integer dtype's range is refused, as a Python int is)
    if type(value) is complex and d.kind != "c":
        raise DTypeError(f"{op}: cannot store complex {value!r} in {d}; use a complex dtype")
    if d.kind == "b":
        return bool(value)
    if d.kind in "iu":
        if type(value) is float and not math.isfinite(value):
            raise DTypeError(f"{op}: cannot store {value!r} in {d}; use a floating dtype")
        v = int(value)
        check_scalar_fits(op, v, d)
        return v
    if d.kind == "f":
        return stored(float(value), d)
    return stored(complex(value), d)


def _to_numpy(data: Any, dt: DType | None) -> np.ndarray:
    if isinstance(data, np.ndarray):
        arr = data
    elif isinstance(data, np.generic):
        arr = np.asarray(data)
    elif hasattr(data, "__dlpack__") and not isinstance(data, (list, tuple)):
        try:
            arr = np.from_dlpack(data)
        except (TypeError, RuntimeError, BufferError):
            arr = np.asarray(data)
    elif isinstance(data, (list, tuple)):
        arr = _from_sequence(data, dt)
    elif hasattr(data, "__array__"):
        arr = np.asarray(data)
    elif isinstance(data, (bytes, bytearray, memoryview)):
        raise DTypeError("tensor: bytes are raw data; use numerix.from_binary(data, dtype)")
    else:
        raise DTypeError(
            f"tensor: cannot make a tensor from {type(data).__name__} {data!r:.60}; give numbers, "
            f"nested lists of numbers, a numpy array or an object with __dlpack__"
        )
    if arr.dtype.kind not in "biufc" and arr.dtype.name != "bfloat16":
        raise DTypeError(
            f"tensor: data of numpy dtype {arr.dtype} is not numeric; numerix holds bool, integer, "
            f"floating and complex data"
        )
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return arr


def _from_sequence(data: Any, dt: DType | None) -> np.ndarray:
    # tensors and numpy values carry their dtype: numpy promotes them, no default applies
    strong = any(type(x) is Tensor or isinstance(x, (np.ndarray, np.generic)) for x in data)
    if strong:
        traced = next((x for x in data if type(x) is Tensor and x.backend.is_tracing), None)
        if traced is not None:
            raise TracingError(
                f"tensor: the sequence holds traced values ({traced.describe()}): inside "
                f"numerix.jit/defn a list or tuple argument is a tree of separate values (as "
                f"in JAX), not one tensor; pass numerix.tensor([...]) as the argument, or "
                f"combine traced values with numerix.stack"
            )
        data = [x.to_numpy() if type(x) is Tensor else x for x in data]
    try:
        if dt is None:
            arr = np.array(data)
        else:
            arr = np.array(data, dtype=dt.numpy_dtype)
            return arr
    except ValueError as e:
        if "inhomogeneous" in str(e) or "sequence" in str(e):
            raise ShapeError(
                f"tensor: ragged nested sequence (rows of different lengths); every row must "
                f"have the same length: {_preview(data)}"
            ) from None
        raise DTypeError(f"tensor: {e}") from None
    except OverflowError as e:
        raise DTypeError(f"tensor: a value does not fit {dt}: {e}") from None
    except TypeError as e:
        raise DTypeError(f"tensor: non-numeric data in {_preview(data)}: {e}") from None
    if arr.dtype.kind == "O":
        leaves = list(_flat(data))
        if all(type(x) in _PY_SCALARS for x in leaves) and any(type(x) is int for x in leaves):
            raise DTypeError(
                f"tensor: a Python int in {_preview(data)} does not fit int64; give dtype=numerix.uint64 "
                f"or use floats"
            )
        raise DTypeError(f"tensor: non-numeric data in {_preview(data)}")
    if arr.dtype.kind in "US":
        raise DTypeError(f"tensor: non-numeric data (strings) in {_preview(data)}")
    # Python scalars take numerix's defaults, not numpy's (float64 / platform int)
    if arr.dtype.kind in "biufc" and not strong:
        target = _DEFAULT_FOR_KIND[arr.dtype.kind]
        if arr.dtype.kind == "u":  # numpy only picks uint64 for ints above int64's range
            target = D.uint64
        if arr.dtype != target.numpy_dtype:
            arr = arr.astype(target.numpy_dtype)
    return arr


def _flat(data: Any) -> Any:
    for x in data:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


def _preview(data: Any) -> str:
    r = repr(data)
    return r if len(r) <= 60 else r[:57] + "..."


def from_numpy(array: np.ndarray, dtype: Any = None, backend: Any = None) -> Tensor:
    """A tensor of a numpy array's values, keeping its dtype (adopted without a copy on
    ``binary``; treat the array as read-only afterwards)."""
    be = resolve(backend, "from_numpy")
    arr = _to_numpy(array, None)
    t = P.from_numpy.bind(arr, backend=be)
    dt = _opt_dtype(dtype, "from_numpy")
    return t if dt is None else _convert(t, dt, "from_numpy")


def from_binary(data: bytes | bytearray | memoryview, dtype: Any, backend: Any = None) -> Tensor:
    """A 1-d tensor from raw bytes in native byte order (``Nx.from_binary``).

    >>> import numerix as nx
    >>> nx.from_binary(bytes([1, 2, 3]), nx.uint8).tolist()
    [1, 2, 3]
    """
    d = D.as_dtype(dtype, "from_binary")
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
    return P.from_numpy.bind(arr, backend=resolve(backend, "from_binary"))


def to_binary(x: Tensor) -> bytes:
    """The raw bytes of ``x``'s values in C order (``Nx.to_binary``)."""
    check_concrete(x, "to_binary")
    return np.ascontiguousarray(x.backend.to_numpy(x)).tobytes()


def full(shape: Any, fill_value: Any, dtype: Any = None, backend: Any = None) -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value`` (array API ``full``).

    ``dtype`` defaults to the default dtype of the value's kind (int64, float32, ...).
    """
    s = check_shape("full", shape)
    if type(fill_value) not in _PY_SCALARS:
        if isinstance(fill_value, np.generic) or (
            type(fill_value) is Tensor and fill_value.size == 1
        ):
            fill_value = fill_value.item()
        else:
            raise DTypeError(f"full: fill_value must be a scalar, got {type(fill_value).__name__}")
    d = _opt_dtype(dtype, "full") or D.scalar_dtype(fill_value)
    if d.itemsize > 1:
        check_bytes("full", s, d.itemsize, dtype=d.name)
    check_scalar_fits("full", fill_value, d)
    be = resolve(backend, "full")
    return P.full.bind(shape=s, dtype=d, value=_scalar_for(fill_value, d, "full"), backend=be)


def zeros(shape: Any, dtype: Any = None, backend: Any = None) -> Tensor:
    """A tensor of zeros; ``dtype`` defaults to float32."""
    return full(check_shape("zeros", shape), 0, _opt_dtype(dtype, "zeros") or D.float32, backend)


def ones(shape: Any, dtype: Any = None, backend: Any = None) -> Tensor:
    """A tensor of ones; ``dtype`` defaults to float32."""
    return full(check_shape("ones", shape), 1, _opt_dtype(dtype, "ones") or D.float32, backend)


def empty(shape: Any, dtype: Any = None, backend: Any = None) -> Tensor:
    """An uninitialised tensor (zeros here: no backend hands out garbage)."""
    return zeros(shape, dtype, backend)


def _like(x: Any, dtype: Any, backend: Any) -> tuple[tuple[int, ...], DType, Any]:
    if type(x) is not Tensor:
        x = tensor(x)
    return x.shape, _opt_dtype(dtype, "like") or x.dtype, x.backend if backend is None else backend


def full_like(x: Any, fill_value: Any, dtype: Any = None, backend: Any = None) -> Tensor:
    """A tensor of ``x``'s shape (and dtype and backend, unless given) filled with ``fill_value``."""
    s, d, b = _like(x, dtype, backend)
    return full(s, fill_value, d, b)


def zeros_like(x: Any, dtype: Any = None, backend: Any = None) -> Tensor:
    s, d, b = _like(x, dtype, backend)
    return full(s, 0, d, b)


def ones_like(x: Any, dtype: Any = None, backend: Any = None) -> Tensor:
    s, d, b = _like(x, dtype, backend)
    return full(s, 1, d, b)


def empty_like(x: Any, dtype: Any = None, backend: Any = None) -> Tensor:
    return zeros_like(x, dtype, backend)


def arange(
    start: Any, stop: Any = None, step: Any = 1, dtype: Any = None, backend: Any = None
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
            D.int64
            if all(isinstance(v, (int, np.integer)) for v in (start, stop, step))
            else D.float32
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
    be = resolve(backend, "arange")
    return P.arange.bind(shape=(n,), dtype=d, start=start, step=step, backend=be)


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
    d = _opt_dtype(dtype, "iota") or D.int64
    if d.kind == "b":
        raise DTypeError("iota: dtype must be numeric, got bool")
    be = resolve(backend, "iota")
    return P.iota.bind(shape=s, dtype=d, axis=axis, backend=be)


def eye(
    n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None, backend: Any = None
) -> Tensor:
    """A 2-d tensor with ones on the ``k``-th diagonal (array API ``eye``); float32 by default."""
    s = check_shape("eye", (n_rows, n_rows if n_cols is None else n_cols))
    if not isinstance(k, int) or isinstance(k, bool):
        raise ShapeError(f"eye: k must be an int, got {k!r}")
    d = _opt_dtype(dtype, "eye") or D.float32
    be = resolve(backend, "eye")
    return P.eye.bind(shape=s, dtype=d, k=k, backend=be)


def linspace(
    start: Any, stop: Any, num: int, dtype: Any = None, endpoint: bool = True, backend: Any = None
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
        d = D.complex64 if is_complex else D.float32
    elif is_complex and d.kind != "c":
        raise DTypeError(
            f"linspace: complex bounds {start!r}, {stop!r} do not fit {d}; use a complex dtype"
        )
    if d.kind == "b":
        raise DTypeError("linspace: dtype must be numeric, got bool")
    be = resolve(backend, "linspace")
    return P.linspace.bind(
        shape=(n,), dtype=d, start=start, stop=stop, endpoint=bool(endpoint), backend=be
    )
