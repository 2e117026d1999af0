"""The Tensor: data of some backend, with its shape and dtype."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from numerix import dtypes
from numerix._meeting import check_concrete
from numerix.configuration._state import speedups_turned_off
from numerix.errors import ArgumentError, DTypeError, ShapeError

if TYPE_CHECKING:
    from numerix.backend import Backend
    from numerix.dtypes import DType
    from numerix.ops.display import Image

__all__ = ["API_VERSION", "API_VERSIONS", "Device", "Tensor"]

#: The version of the array API standard numerix implements (``numerix.__array_api_version__``).
API_VERSION = "2024.12"
#: The versions ``Tensor.__array_namespace__(api_version=...)`` accepts: each later
#: version of the standard keeps the earlier ones' functions, so numerix serves them all.
API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")

_REPR_LIMIT = 100  # elements shown before abbreviating
_REPR_EDGE_ITEMS = 3  # shown at each end of a longer axis, when abbreviating


class Device:
    """Where a tensor lives: its backend instance, which names the backend and its device
    (``binary`` on ``cpu``, ``xla`` on ``host:0``, ``torch`` on ``cuda:1``).

    ``Tensor.device`` returns one; every ``device=`` keyword and ``Tensor.to_device``
    take one (or a backend spec string such as ``"xla:host:0"``, or a backend instance).
    Two devices are equal when they name the same backend instance, that is when tensors
    on them meet without a transfer. ``str(device)`` is the backend's device name
    (``"cpu"``), what ``Tensor.device`` was before it was an object, and a device
    compares equal to that string, so code written against the string keeps working.

    >>> import numerix as nx
    >>> d = nx.tensor([1.0]).device
    >>> d, str(d), d == "cpu", d.backend is nx.get_backend("binary")
    (Device('binary:cpu'), 'cpu', True, True)
    """

    __slots__ = ("backend",)
    backend: Backend

    def __init__(self, backend: Backend) -> None:
        object.__setattr__(self, "backend", backend)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Device is immutable: cannot set {name!r}")

    @property
    def spec(self) -> str:
        """The backend spec naming this device (``"xla:host:0"``): a ``backend=`` argument."""
        return f"{self.backend.name}:{self.backend.device}"

    def __str__(self) -> str:
        return str(self.backend.device)

    def __repr__(self) -> str:
        return f"Device({self.spec!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is Device:
            return self.backend is other.backend
        if isinstance(other, str):
            return other == str(self)
        return NotImplemented

    def __hash__(self) -> int:  # equal to its device string, so the hash of that string
        return hash(str(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Device, (self.backend,))


class _Fields:
    """Tensor's four fields, where the compiled base (:mod:`numerix._speedups`) is not
    built or is turned off (``NUMERIX_SPEEDUPS=0``)."""

    __slots__ = ("__weakref__", "backend", "data", "dtype", "shape")


# The compiled fast path (docs/decisions.md 38): TensorBase holds the same four fields in
# C and gives Tensor + - * / @, x[a:b:c] and reshape without a Python frame. Without it
# Tensor's own Python operators below serve, with the same results and errors.
#: Whether NUMERIX_SPEEDUPS turns the compiled module off (read once, here).
SPEEDUPS_TURNED_OFF = speedups_turned_off()
_speedups: Any = None
if not SPEEDUPS_TURNED_OFF:
    try:
        import numerix._speedups as _compiled
    except ImportError:  # built without a C compiler: the Python operators serve
        pass
    else:
        _speedups = _compiled

if TYPE_CHECKING:
    _Base = _Fields
else:
    _Base = _Fields if _speedups is None else _speedups.TensorBase


class Tensor(_Base):
    """An n-dimensional tensor held by a backend.

    Create tensors with :func:`numerix.tensor` and the creation functions rather than
    with this class. ``data`` is the backend's native array (``numpy.ndarray`` on
    ``binary``); ``shape``, ``dtype`` and ``backend`` are always set.
    """

    __slots__ = ()  # the fields are the base's, either way
    __array_priority__ = 1000  # numpy defers its operators to ours

    data: Any
    shape: tuple[int, ...]
    dtype: DType
    backend: Backend

    def __init__(self, data: Any, shape: tuple[int, ...], dtype: DType, backend: Backend) -> None:
        self.data = data
        self.shape = shape
        self.dtype = dtype
        self.backend = backend

    # ------------------------------------------------------------ attributes
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def device(self) -> Device:
        """The device the data lives on (array API ``device``): a
        :class:`~numerix.Device`, naming the backend instance; its ``str()`` is
        the device as the backend names it (``cpu``, ``cuda:0``), and it compares equal
        to that string."""
        return Device(self.backend)

    @property
    def T(self) -> Tensor:
        """The transpose of a 2-d tensor (array API ``.T``)."""
        return _ops.matrix_transpose_T(self)

    @property
    def mT(self) -> Tensor:
        """The transpose of the last two axes (array API ``.mT``)."""
        return _ops.matrix_transpose(self)

    def describe(self) -> str:
        """``f32[2][3] binary(cpu)``: dtype, shape, backend and device."""
        dims = "".join(f"[{d}]" for d in self.shape)
        return f"{self.dtype.short}{dims} {self.backend!r}"

    # ------------------------------------------------------------ conversion
    def to_numpy(self) -> np.ndarray:
        """The values as a read-only numpy array: a view of the tensor's memory where the
        backend holds host memory (tensors are immutable, so writes through it are
        refused), a copy otherwise. ``np.array(t)`` gives a writable copy."""
        check_concrete(self, "to_numpy")
        a = self.backend.to_numpy(self)
        if a.flags.writeable:
            a = a.view()
            a.flags.writeable = False
        return a

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        a = self.to_numpy()
        if dtype is not None and np.dtype(dtype) != a.dtype:
            return a.astype(dtype)
        if copy:
            return a.copy()
        return a

    def tolist(self) -> Any:
        """The values as (nested) Python lists of Python scalars."""
        check_concrete(self, "tolist")
        a = self.backend.to_numpy(self)
        if self.dtype.name == "bfloat16":
            a = a.astype(np.float32)
        return a.tolist()

    def item(self) -> bool | int | float | complex:
        """The value of a one-element tensor as a Python scalar."""
        check_concrete(self, "item")
        if self.size != 1:
            raise _ops.ShapeError(
                f"item: only a tensor of one element converts to a Python scalar, got {self.describe()}"
            )
        a = self.backend.to_numpy(self)
        if self.dtype.name == "bfloat16":
            a = a.astype(np.float32)
        return a.reshape(()).item()

    def to_binary(self) -> bytes:
        """The raw bytes of the values, C order, native byte order (as ``Nx.to_binary``)."""
        return _ops.to_binary(self)

    def __dlpack__(
        self,
        /,
        *,
        stream: Any = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[Any, int] | None = None,
        copy: bool | None = None,
    ) -> Any:
        """A DLPack capsule of the values (array API ``__dlpack__``); the keywords given
        (not None) pass on to the backend's library, which shares memory where it can."""
        check_concrete(self, "__dlpack__")
        given = {
            k: v
            for k, v in (
                ("stream", stream),
                ("max_version", max_version),
                ("dl_device", dl_device),
                ("copy", copy),
            )
            if v is not None
        }
        return self.backend.to_dlpack(self, **given)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.backend.dlpack_device(self)

    def astype(self, dtype: Any, copy: bool = True) -> Tensor:
        """A tensor of the same values in ``dtype`` (numpy casting rules)."""
        return _ops.astype(self, dtype, copy=copy)

    def to(self, backend: Any, **options: Any) -> Tensor:
        """Shorthand for :func:`numerix.backend_transfer`."""
        return _ops.backend_transfer(self, backend, **options)

    def to_device(self, device: Any, /, *, stream: Any = None) -> Tensor:
        """This tensor on ``device`` (array API ``to_device``): a
        :class:`~numerix.Device` (another tensor's ``.device``), a backend spec
        string or a backend instance; :func:`numerix.backend_transfer` does the move, and
        returns the tensor itself when it is there already. numerix has no streams: a
        ``stream`` other than None is refused."""
        if stream is not None:
            raise ArgumentError(
                f"to_device: numerix has no streams, got stream={stream!r} for "
                f"{self.describe()}; leave stream unset"
            )
        return _ops.backend_transfer(self, device)

    def __array_namespace__(self, /, *, api_version: str | None = None) -> Any:
        """The array API namespace of tensors: the ``numerix`` module itself. numerix
        implements the standard's version 2024.12 and serves the earlier ones (2021.12,
        2022.12, 2023.12) with it; another ``api_version`` raises ArgumentError."""
        if api_version is not None and api_version not in API_VERSIONS:
            raise ArgumentError(
                f"__array_namespace__: array API version {api_version!r} is not served; "
                f"numerix implements {', '.join(API_VERSIONS)} (give one of them, or None for "
                f"{API_VERSION})"
            )
        return sys.modules["numerix"]

    # ------------------------------------------------------------ Python protocol
    def __len__(self) -> int:
        if not self.shape:
            raise TypeError(f"len() of a 0-d tensor ({self.describe()}); it has no first axis")
        return self.shape[0]

    def __iter__(self) -> Any:
        if not self.shape:
            raise TypeError(f"iteration over a 0-d tensor ({self.describe()})")
        for i in range(self.shape[0]):
            yield self[i]

    def __bool__(self) -> bool:
        check_concrete(self, "bool")
        if self.size != 1:
            raise _ops.ShapeError(
                f"bool: the truth value of a tensor with {self.size} elements ({self.describe()}) "
                f"is ambiguous; use numerix.any(t) or numerix.all(t)"
            )
        return bool(self.item())

    def __int__(self) -> int:
        check_concrete(self, "int")
        value = self._scalar("int")  # one element first, as numpy asks
        self._real_only("int")
        return int(value)

    def __float__(self) -> float:
        check_concrete(self, "float")
        value = self._scalar("float")  # one element first, as numpy asks
        self._real_only("float")
        return float(value)

    def _real_only(self, op: str) -> None:
        if self.dtype.kind == "c":  # a TypeError, as int()/float() of a complex are
            raise DTypeError(
                f"{op}: {op}() of a complex tensor ({self.describe()}) is undefined, as for "
                f"Python's and numpy's complex numbers; take the real part first: "
                f"{op}(numerix.real(t)), or {op}(t.item().real)"
            )

    def __complex__(self) -> complex:
        check_concrete(self, "complex")
        return complex(self._scalar("complex"))

    def __format__(self, spec: str) -> str:
        """``f"{t}"`` is ``str(t)``; with a format spec (``f"{loss:.4f}"``), a one-element
        tensor formats its value as the Python scalar would."""
        if not spec:
            return str(self)
        check_concrete(self, "format")
        if self.size != 1:
            raise ShapeError(
                f"format: a format spec ({spec!r}) applies to a tensor of one element, got "
                f"{self.describe()}; format its elements (t.tolist()) instead"
            )
        return format(self.item(), spec)

    def __round__(self, ndigits: int | None = None) -> Any:
        """``round(t)``: the Python int nearest a one-element real tensor's value (as
        ``round`` of a float, halves to even). ``round(t, n)``: a tensor rounded half to
        even at ``n`` decimals, as numpy's ``round(a, n)`` (scaled by ``10**n``, rounded,
        scaled back); integer tensors are unchanged for ``n >= 0``."""
        if ndigits is None:
            check_concrete(self, "round")
            if self.dtype.kind == "c":
                raise DTypeError(
                    f"round: a complex tensor has no nearest integer, got {self.describe()}"
                )
            return round(self._scalar("round"))
        if type(ndigits) is not int:
            raise ArgumentError(f"round: ndigits must be an int, got {ndigits!r}")
        if self.dtype.kind in "biu":
            if ndigits < 0:
                raise ArgumentError(
                    f"round: negative ndigits ({ndigits}) on an integer tensor is not "
                    f"supported ({self.describe()}); convert to a float dtype first"
                )
            return self
        if ndigits == 0:
            return _ops.round(self)
        if ndigits < 0:  # numpy's order: divide by an exact power of ten
            f = 10.0**-ndigits
            return _ops.round(self / f) * f
        scale = 10.0**ndigits
        return _ops.round(self * scale) / scale

    def __index__(self) -> int:
        if self.dtype.kind not in "iu":
            raise DTypeError(
                f"index: only integer tensors can be used as an index, got {self.describe()}; "
                f"cast with t.astype(numerix.int64), or use int(t)"
            )
        return int(self._scalar("index"))

    def _scalar(self, op: str) -> Any:
        if self.size != 1:
            raise _ops.ShapeError(
                f"{op}: only a tensor of one element converts to a Python scalar, got {self.describe()}"
            )
        return self.item()

    def __repr__(self) -> str:
        head = f"Tensor<{self.describe()}>"
        if self.data is None and self.backend.name == "deallocated":
            return head  # Tensor<f32[2] deallocated>: freed by backend_deallocate
        if not _ops.is_concrete(self):
            return f"{head}\n  {self.data!r}"
        if self.size > _REPR_LIMIT:  # only the edges numpy prints go to the host
            a, threshold = _ops.printed_values(self)
        else:
            a, threshold = self.backend.to_numpy(self), _REPR_LIMIT
            if self.dtype.name == "bfloat16":
                a = a.astype(np.float32)
        body = np.array2string(
            a, threshold=threshold, edgeitems=_REPR_EDGE_ITEMS, separator=", ", prefix="  "
        )
        return f"{head}\n  {body}"

    __str__ = __repr__

    def _repr_html_(self) -> str:
        """Jupyter's view: dtype, shape, backend, device and a table of the values the
        text repr shows (:mod:`numerix.ops.display`)."""
        return _ops.tensor_html(self)

    def to_image(self) -> Image:
        """This H×W or H×W×C tensor as a PNG image Jupyter shows: :func:`numerix.image`."""
        return _ops.image(self)

    def __hash__(self) -> int:  # tensors compare element-wise, so they are not hashable
        raise TypeError("Tensor is unhashable: == compares element-wise")

    def __copy__(self) -> Tensor:
        # a new tensor of the same values: x[key] = value gives x new data, never writes
        # into the old, so the two may share it
        return type(self)(self.data, self.shape, self.dtype, self.backend)

    def __deepcopy__(self, memo: Any) -> Tensor:
        return _ops.backend_copy(self)

    def __getstate__(self) -> Any:
        return (self.to_numpy(), self.dtype.name, self.backend)

    def __setstate__(self, state: Any) -> None:
        a, dtype_name, backend = state
        t = _ops.tensor(a, dtype=dtypes.as_dtype(dtype_name), backend=backend)
        self.data, self.shape, self.dtype, self.backend = t.data, t.shape, t.dtype, t.backend

    # ------------------------------------------------------------ operators
    def __add__(self, o: Any) -> Tensor:
        return _ops.add(self, o)

    def __radd__(self, o: Any) -> Tensor:
        return _ops.add(o, self)

    def __sub__(self, o: Any) -> Tensor:
        return _ops.subtract(self, o)

    def __rsub__(self, o: Any) -> Tensor:
        return _ops.subtract(o, self)

    def __mul__(self, o: Any) -> Tensor:
        return _ops.multiply(self, o)

    def __rmul__(self, o: Any) -> Tensor:
        return _ops.multiply(o, self)

    def __truediv__(self, o: Any) -> Tensor:
        return _ops.divide(self, o)

    def __rtruediv__(self, o: Any) -> Tensor:
        return _ops.divide(o, self)

    def __floordiv__(self, o: Any) -> Tensor:
        return _ops.floor_divide(self, o)

    def __rfloordiv__(self, o: Any) -> Tensor:
        return _ops.floor_divide(o, self)

    def __mod__(self, o: Any) -> Tensor:
        return _ops.remainder(self, o)

    def __rmod__(self, o: Any) -> Tensor:
        return _ops.remainder(o, self)

    def __pow__(self, o: Any) -> Tensor:
        return _ops.pow(self, o)

    def __rpow__(self, o: Any) -> Tensor:
        return _ops.pow(o, self)

    def __matmul__(self, o: Any) -> Tensor:
        return _ops.matmul(self, o)

    def __rmatmul__(self, o: Any) -> Tensor:
        return _ops.matmul(o, self)

    def __neg__(self) -> Tensor:
        return _ops.negative(self)

    def __pos__(self) -> Tensor:
        return _ops.positive(self)

    def __abs__(self) -> Tensor:
        return _ops.abs(self)

    def __invert__(self) -> Tensor:
        return _ops.bitwise_invert(self)

    def __and__(self, o: Any) -> Tensor:
        return _ops.bitwise_and(self, o)

    def __rand__(self, o: Any) -> Tensor:
        return _ops.bitwise_and(o, self)

    def __or__(self, o: Any) -> Tensor:
        return _ops.bitwise_or(self, o)

    def __ror__(self, o: Any) -> Tensor:
        return _ops.bitwise_or(o, self)

    def __xor__(self, o: Any) -> Tensor:
        return _ops.bitwise_xor(self, o)

    def __rxor__(self, o: Any) -> Tensor:
        return _ops.bitwise_xor(o, self)

    def __lshift__(self, o: Any) -> Tensor:
        return _ops.bitwise_left_shift(self, o)

    def __rlshift__(self, o: Any) -> Tensor:
        return _ops.bitwise_left_shift(o, self)

    def __rshift__(self, o: Any) -> Tensor:
        return _ops.bitwise_right_shift(self, o)

    def __rrshift__(self, o: Any) -> Tensor:
        return _ops.bitwise_right_shift(o, self)

    def __eq__(self, o: Any) -> Tensor:  # type: ignore[override]
        return _ops.equal(self, o)

    def __ne__(self, o: Any) -> Tensor:  # type: ignore[override]
        return _ops.not_equal(self, o)

    def __lt__(self, o: Any) -> Tensor:
        return _ops.less(self, o)

    def __le__(self, o: Any) -> Tensor:
        return _ops.less_equal(self, o)

    def __gt__(self, o: Any) -> Tensor:
        return _ops.greater(self, o)

    def __ge__(self, o: Any) -> Tensor:
        return _ops.greater_equal(self, o)

    def __getitem__(self, key: Any) -> Tensor:
        return _ops.getitem(self, key)

    @property
    def at(self) -> Any:
        """JAX's functional updates: ``x.at[key].set(v)``, ``.add``, ``.subtract``,
        ``.multiply``, ``.divide``, ``.min``, ``.max`` and ``.get()``, each a new tensor
        (:class:`numerix.IndexUpdates`)."""
        return _ops.IndexUpdates(self)

    def __setitem__(self, key: Any, value: Any) -> None:
        # x[key] = value: x holds numerix.setitem(x, key, value) from now on. The values
        # other tensors hold stay theirs, views of x's old data included (decision 44)
        new = _ops.setitem(self, key, value)
        self.data = new.data

    # ------------------------------------------------------------ method forms
    def reshape(self, *shape: Any) -> Tensor:
        if len(shape) == 1:
            s = shape[0]
            if type(s) is tuple:
                shape = s
            elif isinstance(s, (tuple, list)):
                shape = tuple(s)
        return _ops.reshape(self, shape)

    def transpose(self, *axes: Any) -> Tensor:
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return _ops.transpose(self, axes or None)

    def sum(self, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Tensor:
        if axis is None and keepdims is False and dtype is None:  # the fast path's form
            return _ops.sum(self)
        return _ops.sum(self, axis=axis, keepdims=keepdims, dtype=dtype)

    def prod(self, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Tensor:
        if axis is None and keepdims is False and dtype is None:  # the fast path's form
            return _ops.prod(self)
        return _ops.prod(self, axis=axis, keepdims=keepdims, dtype=dtype)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.mean(self, axis=axis, keepdims=keepdims)

    def var(self, axis: Any = None, keepdims: bool = False, correction: float = 0) -> Tensor:
        return _ops.var(self, axis=axis, keepdims=keepdims, correction=correction)

    def std(self, axis: Any = None, keepdims: bool = False, correction: float = 0) -> Tensor:
        return _ops.std(self, axis=axis, keepdims=keepdims, correction=correction)

    def max(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        if axis is None and keepdims is False:  # the fast path's form
            return _ops.max(self)
        return _ops.max(self, axis=axis, keepdims=keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        if axis is None and keepdims is False:  # the fast path's form
            return _ops.min(self)
        return _ops.min(self, axis=axis, keepdims=keepdims)

    def argmax(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.argmin(self, axis=axis, keepdims=keepdims)

    def all(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        if axis is None and keepdims is False:  # the fast path's form
            return _ops.all(self)
        return _ops.all(self, axis=axis, keepdims=keepdims)

    def any(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        if axis is None and keepdims is False:  # the fast path's form
            return _ops.any(self)
        return _ops.any(self, axis=axis, keepdims=keepdims)

    def dot(self, other: Any) -> Tensor:
        return _ops.dot(self, other)

    def squeeze(self, axis: Any = None) -> Tensor:
        return _ops.squeeze(self, axis)

    def flatten(self) -> Tensor:
        return _ops.reshape(self, (-1,))

    def clip(self, min: Any = None, max: Any = None) -> Tensor:
        return _ops.clip(self, min, max)


#: The public ops, which Tensor's operators and methods call: a plain module holding
#: :mod:`numerix.ops`'s names (an op of a family not loaded yet loads it on its first
#: call). The ops layer sits above this module: it attaches them here when it loads
#: (:func:`attach_ops`), so this module imports nothing above the low layer.
_ops: Any = None


#: Tensor's reductions the compiled base serves over every axis (``x.sum()``), in the order
#: it is given their Python methods (:func:`numerix.ops._fast.attach`).
REDUCTION_METHODS = ("sum", "prod", "max", "min", "all", "any")

#: The operators and methods the compiled base serves in place of Tensor's own: taken off
#: the class when it is in use (the slot of the base then serves), kept here as the
#: Python path the base falls back to.
COMPILED_METHODS = (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__matmul__", "__rmatmul__", "__getitem__", "reshape", *REDUCTION_METHODS,
)  # fmt: skip
_python_methods = {name: Tensor.__dict__[name] for name in COMPILED_METHODS}
if _speedups is not None:
    for _name in COMPILED_METHODS:
        delattr(Tensor, _name)


def attach_ops(ops: Any) -> None:
    """Make ``ops`` (a namespace of :mod:`numerix.ops`'s names) the implementation of
    Tensor's operators and methods; called once by :mod:`numerix.ops` as it loads."""
    global _ops
    _ops = ops


def python_method(name: str) -> Any:
    """Tensor's own Python method ``name`` (one of :data:`COMPILED_METHODS`), which the
    compiled base falls back to."""
    return _python_methods[name]
