"""dtypes and the one promotion table.

Follows the Python array API standard's type promotion table for dtypes of one
kind, and JAX's lattice across kinds (bool < integers < floats < complex), with
Python scalars as *weak* types: a Python ``int``, ``float`` or ``complex`` takes
the dtype of the tensor it meets when the kinds allow it.

# Note: the standard leaves ``uint64`` with a signed integer unspecified; numpy
# answers float64, which silently loses integers above 2**53. numerix raises
# DTypeError and asks for an explicit ``astype``.
"""

from __future__ import annotations

import math
from functools import cache, lru_cache
from typing import Any

import numpy as np

from numerix.errors import DTypeError

__all__ = [
    "DType",
    "bool_",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "ALL_DTYPES",
    "as_dtype",
    "result_type",
    "promote_types",
    "default_float",
    "default_int",
    "iinfo",
    "finfo",
    "isdtype",
    "can_cast",
]


class DType:
    """A numerix dtype. Instances are unique: compare with ``==`` or ``is``.

    ``kind`` is one of ``"b"`` (bool), ``"i"`` (signed int), ``"u"`` (unsigned int),
    ``"f"`` (real float) and ``"c"`` (complex float); ``bits`` its width.
    """

    __slots__ = ("_np", "bits", "itemsize", "kind", "name", "short")

    def __init__(self, name: str, short: str, kind: str, bits: int) -> None:
        self.name = name
        self.short = short
        self.kind = kind
        self.bits = bits
        self.itemsize = max(bits // 8, 1)
        self._np: np.dtype | None = None

    @property
    def numpy_dtype(self) -> np.dtype:
        """The numpy dtype holding the same values (bfloat16 through ml_dtypes)."""
        d = self._np
        if d is None:
            if self.name == "bfloat16":
                try:
                    import ml_dtypes
                except ImportError as e:  # pragma: no cover - binary backend depends on it
                    raise DTypeError(
                        "bfloat16 needs the ml_dtypes package on the host: pip install ml_dtypes"
                    ) from e
                d = np.dtype(ml_dtypes.bfloat16)
            else:
                d = np.dtype(self.name)
            self._np = d
        return d

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype, for numpy: ``np.dtype(numerix.float32)`` and
        ``np.zeros(3, dtype=numerix.bfloat16)`` read it."""
        return self.numpy_dtype

    @property
    def is_floating(self) -> bool:
        return self.kind == "f"

    @property
    def is_complex(self) -> bool:
        return self.kind == "c"

    @property
    def is_integer(self) -> bool:
        return self.kind in "iu"

    @property
    def is_numeric(self) -> bool:
        return self.kind != "b"

    def __repr__(self) -> str:
        return f"numerix.{self.name}"

    def __str__(self) -> str:
        return self.name

    def __reduce__(self) -> str:
        return self.name if self.name != "bool" else "bool_"

    def __eq__(self, other: object) -> bool:
        """Equal to itself and to every spelling :func:`as_dtype` reads as it:
        ``numerix.float32 == np.float32 == np.dtype("float32") == "f4" == "float32"``."""
        if type(other) is DType:
            return self is other
        d = _spelled(other)
        if d is None:
            return NotImplemented
        return d is self

    # Identity, in C: dtypes are dict keys on the hot path. A hash equal to every
    # spelling's is impossible ("f4", "float32" and np.float32 hash apart, as they do
    # for numpy's own dtype); normalise with as_dtype before keying a dict by dtype.
    __hash__ = object.__hash__


bool_ = DType("bool", "pred", "b", 8)
int8 = DType("int8", "s8", "i", 8)
int16 = DType("int16", "s16", "i", 16)
int32 = DType("int32", "s32", "i", 32)
int64 = DType("int64", "s64", "i", 64)
uint8 = DType("uint8", "u8", "u", 8)
uint16 = DType("uint16", "u16", "u", 16)
uint32 = DType("uint32", "u32", "u", 32)
uint64 = DType("uint64", "u64", "u", 64)
float16 = DType("float16", "f16", "f", 16)
bfloat16 = DType("bfloat16", "bf16", "f", 16)
float32 = DType("float32", "f32", "f", 32)
float64 = DType("float64", "f64", "f", 64)
complex64 = DType("complex64", "c64", "c", 64)
complex128 = DType("complex128", "c128", "c", 128)

ALL_DTYPES: tuple[DType, ...] = (
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    float16, bfloat16, float32, float64, complex64, complex128,
)  # fmt: skip

_BY_NAME: dict[str, DType] = {}
for _d in ALL_DTYPES:
    _BY_NAME[_d.name] = _d
    _BY_NAME[_d.short] = _d

_FROM_NUMPY: dict[np.dtype, DType] = {np.dtype(d.name): d for d in ALL_DTYPES if d is not bfloat16}

#: numpy's scalar types, and its reading of the Python types: float and complex are
#: 64-bit, not the float32/complex64 a Python scalar takes (scalar_dtype)
_BY_TYPE: dict[type, DType] = {npd.type: d for npd, d in _FROM_NUMPY.items()}
_BY_TYPE.update({bool: bool_, int: int64, float: float64, complex: complex128})

#: torch's dtypes print as "torch.<name>", a numerix name for every dtype numerix has
_TORCH_DTYPE = ("torch", "dtype")


def default_float() -> DType:
    """The default floating dtype: float32."""
    return float32


def default_int() -> DType:
    """The default integer dtype: int64."""
    return int64


def as_dtype(x: Any, op: str = "as_dtype") -> DType:
    """Normalise a dtype as a user spells it to a :class:`DType`: the one place every
    ``dtype=`` argument goes through.

    Accepted: a :class:`DType`; its name or short name (``"float32"``, ``"f32"``); any
    string numpy reads as a dtype numerix has (``"f4"``, ``"float"``, ``"double"``,
    ``"half"``, ``"single"``, ``"i8"``, ``"int"``, ``"?"``, ``"<f4"``), with numpy's
    meaning: ``"i8"`` is int64, ``"float"`` float64; a numpy dtype or scalar type
    (``np.dtype("float32")``, ``np.float32``, ``ml_dtypes.bfloat16``), JAX's
    (``jnp.float32``) and torch's (``torch.float32``, read without importing torch);
    the Python types as numpy reads them: ``bool``, ``int`` (int64), ``float``
    (float64) and ``complex`` (complex128).

    numerix's short names come first where numpy reads a string otherwise: ``"u8"`` is
    uint8 and ``"f16"`` float16 (numpy: uint64 and float128); write ``"uint64"`` or
    ``np.uint64`` for numpy's meaning.

    >>> as_dtype("f4"), as_dtype(float), as_dtype("i8")
    (numerix.float32, numerix.float64, numerix.int64)
    """
    if type(x) is DType:
        return x
    if type(x) is str:
        d = _BY_NAME.get(x)
        if d is not None:
            return d
    d = _spelled(x)
    if d is not None:
        return d
    raise _not_a_dtype(x, op)


def _spelled(x: Any) -> DType | None:
    """The DType ``x`` spells, or None when it spells none (never raises)."""
    if type(x) is DType:
        return x
    if isinstance(x, str):
        d = _BY_NAME.get(x)
        return d if d is not None else _numpy_string(x)
    if isinstance(x, np.dtype):
        return _numpy_dtype(x)
    if isinstance(x, type):
        d = _BY_TYPE.get(x)
        if d is not None:
            return d
        try:  # JAX's scalar types (they carry a .dtype) and ml_dtypes' bfloat16
            return _numpy_dtype(np.dtype(x))
        except Exception:  # np.dtype refuses in TypeError, ValueError and others
            return None
    t = type(x)
    if (t.__module__, t.__name__) == _TORCH_DTYPE:
        return _BY_NAME.get(str(x).removeprefix("torch."))
    return None


def _numpy_dtype(npd: np.dtype) -> DType | None:
    d = _FROM_NUMPY.get(npd)
    if d is None and npd.name == "bfloat16":
        return bfloat16
    return d


@lru_cache(maxsize=256)
def _numpy_string(s: str) -> DType | None:
    try:
        npd = np.dtype(s)
    except Exception:
        return None
    return _numpy_dtype(npd)


def _accepted() -> str:
    return (
        ", ".join(f"{d.name} ({d.short})" for d in ALL_DTYPES)
        + ", or numpy's spellings of them ('f4', 'float', 'double', 'half', 'i8', 'int', "
        "np.float32, np.dtype('float32'), Python's bool/int/float/complex)"
    )


def _not_a_dtype(x: Any, op: str) -> DTypeError:
    t = type(x)
    if (t.__module__, t.__name__) == _TORCH_DTYPE:
        return DTypeError(
            f"{op}: torch dtype {x} has no numerix equivalent; use one of {_accepted()}"
        )
    npd: np.dtype | None = None
    if isinstance(x, (str, type, np.dtype)):
        try:
            npd = np.dtype(x)
        except Exception:
            npd = None
    if npd is None:
        if isinstance(x, str):
            return DTypeError(f"{op}: unknown dtype {x!r}; use one of {_accepted()}")
        r = repr(x)
        what = r if len(r) <= 60 and "\n" not in r else f"a {t.__name__}"
        return DTypeError(
            f"{op}: {what} (type {t.__name__}) is not a dtype; use one of {_accepted()}"
        )
    label = npd.name if npd.kind in "biufc" and npd.isnative else npd.str  # float128, not <f16
    if x is npd:
        said = f"numpy dtype {label}"
    elif isinstance(x, str):
        said = f"unknown dtype {x!r}: numpy's {label}"
    else:
        said = f"{x!r} (numpy's {label})"
    native = npd.newbyteorder("=")
    if npd.byteorder in "<>" and npd.isnative is False and _FROM_NUMPY.get(native) is not None:
        return DTypeError(
            f"{op}: {said} is not in this machine's byte order, which tensors hold; use "
            f"{native.name!r} (and arr.astype({native.name!r}) for data in that order)"
        )
    return DTypeError(f"{op}: {said} has no numerix equivalent; use one of {_accepted()}")


def from_numpy_dtype(npd: np.dtype, op: str = "tensor") -> DType:
    d = _FROM_NUMPY.get(npd)
    if d is not None:
        return d
    if npd.name == "bfloat16":
        return bfloat16
    raise DTypeError(
        f"{op}: numpy dtype {npd} has no numerix equivalent; convert the data to a numeric or "
        "bool dtype first"
    )


# ---------------------------------------------------------------- promotion

_INT_BY_BITS = {8: int8, 16: int16, 32: int32, 64: int64}
_FLOAT_BY_BITS = {16: float16, 32: float32, 64: float64}
_COMPLEX_FOR_FLOAT = {
    float16: complex64,
    bfloat16: complex64,
    float32: complex64,
    float64: complex128,
}


def _promote(a: DType, b: DType) -> DType | None:
    if a is b:
        return a
    ka, kb = a.kind, b.kind
    if ka == "b":
        return b
    if kb == "b":
        return a
    if ka in "iu" and kb in "iu":
        if ka == kb:
            return a if a.bits >= b.bits else b
        s, u = (a, b) if ka == "i" else (b, a)
        if s.bits > u.bits:
            return s
        if u.bits == 64:
            return None
        return _INT_BY_BITS[u.bits * 2]
    if ka in "iu":
        return b
    if kb in "iu":
        return a
    # both inexact
    if ka == "f" and kb == "f":
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a.bits > b.bits else b
    fa = a if ka == "f" else _REAL_OF[a]
    fb = b if kb == "f" else _REAL_OF[b]
    f = _promote(fa, fb)
    assert f is not None
    return _COMPLEX_FOR_FLOAT[f]


_REAL_OF = {complex64: float32, complex128: float64}


def real_dtype(d: DType) -> DType:
    """The real dtype of a complex one (``complex64 -> float32``); any other dtype as it is."""
    return _REAL_OF.get(d, d)


PROMOTION_TABLE: dict[tuple[DType, DType], DType | None] = {
    (a, b): _promote(a, b) for a in ALL_DTYPES for b in ALL_DTYPES
}


def promote_types(a: DType, b: DType, op: str = "promote_types") -> DType:
    """The dtype two tensors of dtypes ``a`` and ``b`` promote to."""
    r = PROMOTION_TABLE[(a, b)]
    if r is None:
        raise DTypeError(
            f"{op}: cannot promote {a} with {b} without losing integers above 2**53; "
            f"cast one operand explicitly, e.g. x.astype(numerix.int64) or x.astype(numerix.float64)"
        )
    return r


def weak_promote(d: DType, scalar: Any) -> DType:
    """The dtype a tensor of dtype ``d`` keeps or takes when it meets a Python scalar."""
    t = type(scalar)
    if t is bool:
        return d
    if t is int:
        return default_int() if d.kind == "b" else d
    if t is float:
        return d if d.kind in "fc" else default_float()
    if t is complex:
        if d.kind == "c":
            return d
        if d.kind == "f":
            return _COMPLEX_FOR_FLOAT[d]
        return complex64
    raise DTypeError(f"unsupported scalar type {t.__name__}")


def scalar_dtype(value: Any) -> DType:
    """The dtype a lone Python scalar becomes (weak types take the defaults)."""
    t = type(value)
    if t is bool:
        return bool_
    if t is int:
        return default_int()
    if t is float:
        return default_float()
    if t is complex:
        return complex64
    raise DTypeError(f"unsupported scalar type {t.__name__}")


def result_type(*args: Any) -> DType:
    """The dtype the arguments (tensors, dtypes or Python scalars) promote to, as the array API's
    ``result_type``."""
    strong: DType | None = None
    scalars = []
    for a in args:
        d = getattr(a, "dtype", None)  # a tensor (this module sits below numerix.Tensor)
        if type(d) is DType:
            pass
        elif type(a) in (bool, int, float, complex):
            scalars.append(a)
            continue
        else:
            d = as_dtype(a, "result_type")
        strong = d if strong is None else promote_types(strong, d, "result_type")
    if strong is None:
        if not scalars:
            raise DTypeError("result_type: at least one tensor or dtype is required")
        strong = scalar_dtype(scalars[0])
        scalars = scalars[1:]
        # promote among scalars by kind: bool < int < float < complex
    for s in scalars:
        strong = weak_promote(strong, s)
    return strong


# ---------------------------------------------------------------- info


def _dtype_of(x: Any, op: str) -> DType:
    """The dtype ``x`` spells, or the dtype of ``x`` when it is a tensor (array API
    ``finfo``/``iinfo``/``can_cast`` take either)."""
    d = getattr(x, "dtype", None)  # a tensor (this module sits below numerix.Tensor)
    if type(d) is DType:
        return d
    return as_dtype(x, op)


_KIND_RANK = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}


def can_cast(from_: Any, to: Any, /) -> bool:
    """Whether values of dtype ``from_`` (a dtype or a tensor) cast to dtype ``to``
    without loss by the promotion rules (array API ``can_cast``; numpy's ``"safe"``).

    bool casts to every dtype; within integers, or within floating and complex dtypes,
    a cast is safe when the two promote to ``to``; an integer casts to a floating dtype
    as numpy says (int64 to float64 is safe, int16 to float16 is not), to bfloat16
    when its values fit the 8-bit significand; nothing casts to a lower kind.

    >>> can_cast(int8, float16), can_cast(float64, float32), can_cast(uint8, int16)
    (True, False, True)
    """
    d = _dtype_of(from_, "can_cast")
    t = as_dtype(to, "can_cast")
    if d is t or d.kind == "b":
        return True
    if _KIND_RANK[t.kind] < _KIND_RANK[d.kind]:
        return False
    if _KIND_RANK[t.kind] == _KIND_RANK[d.kind] or d.kind == "f":
        return PROMOTION_TABLE[(d, t)] is t
    if t is bfloat16:  # an integer: 8 significant bits hold int8 and uint8
        return d.bits <= 8
    return bool(np.can_cast(d.numpy_dtype, t.numpy_dtype, "safe"))


class iinfo:
    """Machine limits of an integer dtype (array API ``iinfo``)."""

    def __init__(self, dtype: Any) -> None:
        d = _dtype_of(dtype, "iinfo")
        if d.kind not in "iu":
            raise DTypeError(f"iinfo: {d} is not an integer dtype; use finfo for floating dtypes")
        i = np.iinfo(d.numpy_dtype)
        self.bits, self.min, self.max, self.dtype = i.bits, int(i.min), int(i.max), d

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


class finfo:
    """Machine limits of a floating or complex dtype (array API ``finfo``)."""

    def __init__(self, dtype: Any) -> None:
        d = _dtype_of(dtype, "finfo")
        if d.kind not in "fc":
            raise DTypeError(f"finfo: {d} is not a floating dtype; use iinfo for integer dtypes")
        real = real_dtype(d)
        if real is bfloat16:
            import ml_dtypes

            f: Any = ml_dtypes.finfo(ml_dtypes.bfloat16)
        else:
            f = np.finfo(real.numpy_dtype)
        self.bits = int(f.bits)
        self.eps = float(f.eps)
        self.max = float(f.max)
        self.min = float(f.min)
        self.smallest_normal = float(f.smallest_normal)
        self.dtype = real

    def __repr__(self) -> str:
        return f"finfo(eps={self.eps}, max={self.max}, dtype={self.dtype})"


_KIND_GROUPS = {
    "bool": "b",
    "signed integer": "i",
    "unsigned integer": "u",
    "integral": "iu",
    "real floating": "f",
    "complex floating": "c",
    "numeric": "iufc",
}


def isdtype(dtype: Any, kind: Any) -> bool:
    """Array API ``isdtype``: is ``dtype`` of ``kind`` (a dtype, a kind name or a tuple of them)?"""
    d = as_dtype(dtype, "isdtype")
    if isinstance(kind, tuple):
        return any(isdtype(d, k) for k in kind)
    if isinstance(kind, str) and kind in _KIND_GROUPS:
        return d.kind in _KIND_GROUPS[kind]
    return d is as_dtype(kind, "isdtype")


@cache
def int_range(d: DType) -> tuple[int, int]:
    i = np.iinfo(d.numpy_dtype)
    return int(i.min), int(i.max)


def reduction_identity(op: str, dtype: Any) -> bool | int | float:
    """The identity of reduction ``op`` (``sum``, ``prod``, ``max``, ``min``, ``all``,
    ``any``) for values of ``dtype`` (a numerix or a numpy dtype): what a backend pads a
    window or starts an accumulator with. ``max`` starts from the lowest value (-inf,
    an integer's minimum, False), ``min`` from the highest.

    >>> reduction_identity("max", int8), reduction_identity("min", float32)
    (-128, inf)
    """
    if op in ("sum", "any"):
        return False if op == "any" else 0
    if op in ("prod", "all"):
        return True if op == "all" else 1
    if op not in ("max", "min"):
        raise ValueError(f"reduction_identity: unknown reduction {op!r}")
    highest = op == "min"
    dt = np.dtype(dtype.numpy_dtype if isinstance(dtype, DType) else dtype)
    if dt.kind == "b":
        return highest
    if dt.kind in "iu":
        i = np.iinfo(dt)
        return int(i.max) if highest else int(i.min)
    return math.inf if highest else -math.inf
