"""The meta-implementation machinery shared by every public op.

Public ops normalise their arguments, check shapes, promote dtypes and infer the
output, then :func:`bind` a primitive on the backend of the operands. Nothing below
this layer sees invalid input, and a tracing backend receives the same calls as an
eager one: there is one implementation of each op.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from numerix import dtypes
from numerix._dispatch import check_concrete, move, new_out
from numerix._meeting import DEALLOCATED, deallocated_error, meeting_backend
from numerix._shapes import broadcast_shapes, size_of
from numerix._tensor import Tensor
from numerix.backend import Backend
from numerix.configuration import get_default_backend, resolve_backend
from numerix.dtypes import DType
from numerix.errors import DeallocatedError, DTypeError, ShapeError, TracingError
from numerix.plugins import clears_with_caches
from numerix.primitives import creation as creation_primitives
from numerix.primitives import elementwise as elementwise_primitives
from numerix.primitives._registry import Block, Primitive
from numerix.primitives.creation import full as _full

_PY_SCALARS = (bool, int, float, complex)
_new = Tensor.__new__


def bind(prim: Primitive, out: Tensor, *inputs: Any, **params: Any) -> Tensor:
    """Call ``prim``'s kernel on ``out.backend`` with an ``out`` the caller built (the
    element-wise fast paths, whose tables hold the rules' results). Ops that infer their
    output bind with :meth:`Primitive.bind <numerix._dispatch.bind>`, which runs the
    primitive's rules."""
    return getattr(out.backend, prim.name)(out, *inputs, **params)


def describe(x: Any) -> str:
    if isinstance(x, Tensor):
        return x.describe()
    return f"{type(x).__name__} {x!r}"


def is_concrete(t: Tensor) -> bool:
    return not getattr(t.backend, "is_tracing", False)


def run_block(block: Block, out: Any, fallback: Any, *inputs: Any, **params: Any) -> Any:
    """Run a block: the backend's ``block_<name>(out, *inputs, **params)`` when it has
    one, else ``fallback(*inputs, **params)``, the core's composite of primitives.

    ``out`` (a tensor or a tuple of tensors from :func:`new_out`) carries the inferred
    output; its backend decides. A tracing backend records the block as one node.
    """
    first = out[0] if isinstance(out, tuple) else out
    if first.backend.is_tracing:
        return first.backend.record_block(block, out, fallback, *inputs, **params)
    impl = getattr(type(first.backend), block.method, None)
    if impl is None:
        return fallback(*inputs, **params)
    return impl(first.backend, out, *inputs, **params)


# ---------------------------------------------------------------- conversion of operands


def as_tensor(x: Any, op: str, backend: Backend | None = None) -> Tensor:
    """``x`` as a Tensor: tensors pass through; anything else becomes a tensor with its
    own dtype (Python scalars take the default dtypes) on ``backend`` or the default."""
    if type(x) is Tensor:
        return x
    try:
        return tensor(x, backend=backend)
    except (DTypeError, ShapeError) as e:
        raise type(e)(f"{op}: {e}") from None


def on_backend(t: Tensor, backend: Backend) -> Tensor:
    if t.backend is backend:
        return t
    if backend.is_tracing:
        return backend.capture(t)  # type: ignore[no-any-return, unused-ignore]
    return move(t, backend, "backend_transfer")


def unify(op: str, *xs: Any) -> tuple[Backend, list[Tensor]]:
    """Turn operands into tensors on one backend: the one they meet on
    (:func:`numerix._meeting.meeting_backend`), else the default backend."""
    backend = meeting_backend(op, [x for x in xs if type(x) is Tensor]) or get_default_backend()
    out = []
    for x in xs:
        if type(x) is Tensor:
            out.append(on_backend(x, backend))
        else:
            out.append(as_tensor(x, op, backend))
    return backend, out


# ---------------------------------------------------------------- casting and scalars


def cast(x: Tensor, dtype: DType) -> Tensor:
    if x.dtype is dtype:
        return x
    return bind(elementwise_primitives.as_type, converted_out(x, dtype, "astype"), x)


def converted_out(x: Tensor, dtype: DType, op: str) -> Tensor:
    """The ``out`` of a conversion of ``x`` to ``dtype`` (``as_type``, ``bitcast``), refused
    where the backend does not hold ``dtype``: the rule ``Primitive.bind`` applies to
    every other output, for the element-wise ops that build their ``out`` themselves."""
    x.backend.check_holds(op, dtype)
    return new_out(x.shape, dtype, x.backend)


def check_scalar_fits(op: str, value: Any, dtype: DType) -> None:
    """A Python int meeting an integer tensor must fit its dtype (as JAX and numpy 2 check)."""
    if type(value) is int and dtype.kind in "iu":
        lo, hi = dtypes.int_range(dtype)
        if not lo <= value <= hi:
            raise DTypeError(
                f"{op}: Python int {value} does not fit {dtype} (range {lo}..{hi}); make the "
                f"tensor wider first, e.g. x.astype(numerix.int64)"
            )


def stored(value: Any, dtype: DType) -> Any:
    """A Python float or complex ``value`` as ``dtype`` holds it where it lies beyond the
    dtype's largest finite value: rounded by numpy's cast (to ±inf, or to the largest
    value when within half an ulp of it), so every backend stores what numpy would
    instead of refusing it (torch) or rounding its own way."""
    if dtype.kind == "f":
        if abs(value) <= _FLOAT_MAX[dtype] or value != value:
            return value
        with np.errstate(over="ignore"):
            return float(np.array(value, dtype.numpy_dtype))
    if dtype.kind == "c":
        c = complex(value)
        m = _FLOAT_MAX[dtype]
        if abs(c.real) <= m and abs(c.imag) <= m:
            return value
        with np.errstate(over="ignore"):
            return complex(np.array(c, dtype.numpy_dtype))
    return value


# the largest finite value of each floating and complex dtype; bfloat16's is written out
# (2 - 2**-7) * 2**127, so that the first op does not import ml_dtypes to read it
_FLOAT_MAX = {
    d: float(dtypes.finfo(d).max)
    for d in dtypes.ALL_DTYPES
    if d.kind in "fc" and d is not dtypes.bfloat16
}
_FLOAT_MAX[dtypes.bfloat16] = float.fromhex("0x1.fep127")


def scalar(value: Any, dtype: DType, backend: Backend) -> Tensor:
    """A 0-d tensor of ``value`` in ``dtype`` on ``backend``."""
    return bind(_full, new_out((), dtype, backend), value=stored(value, dtype))


# A Python scalar meeting a tensor (x * 1.0001) becomes a 0-d operand on the tensor's
# backend; making it (the backend's full) costs more than the op on a small tensor, so
# each (backend, dtype, value) is made once and kept. Tensors are immutable and these
# operands never leave the op that made them. NaN and complex values are not kept
# (equality does not tell them apart), nor the operands of a tracing backend.
_OPERANDS: dict[tuple[Any, ...], Tensor] = {}
_OPERANDS_MAX = 1024
clears_with_caches(_OPERANDS.clear)


def scalar_operand(value: Any, dtype: DType, backend: Backend) -> Tensor:
    """:func:`scalar`, kept per (backend, dtype, value): the 0-d operand a Python scalar
    becomes in an element-wise op."""
    t = type(value)
    if t is complex or value != value or backend.is_tracing:
        return scalar(value, dtype, backend)
    # 1, 1.0 and True, and 0.0 and -0.0, are equal keys: the type and the sign part them
    key = (backend, dtype, t, value, t is float and value == 0.0 and str(value) == "-0.0")
    st = _OPERANDS.get(key)
    if st is None or st.backend is not backend:  # an equal backend, or deallocated
        if len(_OPERANDS) >= _OPERANDS_MAX:
            _OPERANDS.clear()
        st = _OPERANDS[key] = scalar(value, dtype, backend)
    return st


# ---------------------------------------------------------------- eager plans
#: A table of eager plans (what the checks and the rules give for a key of shapes and
#: parameters, kept by the fast paths of reshape, transpose, concatenate, the
#: reductions and indexing) is dropped whole past this many entries.
PLANS_MAX = 4096


def keep_plan(plans: dict[Any, Any], key: Any, plan: Any) -> Any:
    """``plans[key] = plan`` (the table emptied first when full); returns ``plan``."""
    if len(plans) >= PLANS_MAX:
        plans.clear()
    plans[key] = plan
    return plan


# ---------------------------------------------------------------- element-wise dispatch


def _dtype_error(prim: Primitive, x1: Any, x2: Any = None, *, arity: int = 2) -> DTypeError:
    name = prim.name
    accepts = prim.extra.get("accepts", "")
    if arity == 1:
        return DTypeError(f"{name}: unsupported dtype for {describe(x1)}; {name} takes {accepts}")
    d1 = x1.dtype if isinstance(x1, Tensor) else type(x1).__name__
    d2 = x2.dtype if isinstance(x2, Tensor) else type(x2).__name__
    if isinstance(x1, Tensor) and isinstance(x2, Tensor):
        if dtypes.PROMOTION_TABLE[(x1.dtype, x2.dtype)] is None:
            dtypes.promote_types(x1.dtype, x2.dtype, name)  # raises, naming the lossy pair
    return DTypeError(
        f"{name}: unsupported dtypes {d1} and {d2} ({describe(x1)}, {describe(x2)}); "
        f"{name} takes {accepts}; cast with astype"
    )


def _dead(op: str, *xs: Any) -> DeallocatedError:
    """The error naming ``op`` for its deallocated operand (the backend's own error names
    the primitive it was asked for, which may be a cast or a scalar's creation)."""
    for i, x in enumerate(xs):
        if type(x) is Tensor and x.backend is DEALLOCATED:
            return deallocated_error(op, x, f"operand {i}")
    return DeallocatedError(op)


def elementwise_unary(prim: Primitive, x: Any) -> Tensor:
    if type(x) is not Tensor:
        x = as_tensor(x, prim.name)
    r = prim.extra["table"][x.dtype]
    if r is None:
        raise _dtype_error(prim, x, arity=1)
    cdt, odt = r
    if x.dtype is not cdt:
        try:
            x = cast(x, cdt)
        except DeallocatedError:
            raise _dead(prim.name, x) from None
    out = _new(Tensor)
    out.shape = x.shape
    out.dtype = odt
    out.backend = x.backend
    out.data = None
    return getattr(x.backend, prim.name)(out, x)


def elementwise_binary(prim: Primitive, x1: Any, x2: Any) -> Tensor:
    try:
        if type(x1) is Tensor and type(x2) is Tensor:
            backend = x1.backend
            if backend is not x2.backend:
                backend, (x1, x2) = unify(prim.name, x1, x2)
            r = prim.extra["table"][(x1.dtype, x2.dtype)]
            if r is None:
                raise _dtype_error(prim, x1, x2)
            cdt, odt = r
            if x1.dtype is not cdt:
                x1 = cast(x1, cdt)
            if x2.dtype is not cdt:
                x2 = cast(x2, cdt)
        else:
            x1, x2, backend, cdt, odt = _with_scalars(prim, x1, x2)
        s1 = x1.shape
        s2 = x2.shape
        if s1 == s2 or not s2:  # equal, or a 0-d operand (a Python scalar's): s1
            shape = s1
        else:
            shape = s2 if not s1 else broadcast_shapes(prim.name, s1, s2)
        out = _new(Tensor)
        out.shape = shape
        out.dtype = odt
        out.backend = backend
        out.data = None
        return getattr(backend, prim.name)(out, x1, x2)
    except DeallocatedError:
        raise _dead(prim.name, x1, x2) from None


def _with_scalars(
    prim: Primitive, x1: Any, x2: Any
) -> tuple[Tensor, Tensor, Backend, DType, DType]:
    w1 = type(x1) in _PY_SCALARS
    w2 = type(x2) in _PY_SCALARS
    if w1 and w2:
        backend = get_default_backend()
        d = dtypes.result_type(x1, x2)
        r = prim.extra["unary_table"][d]
        if r is None:
            raise _dtype_error(prim, x1, x2)
        check_scalar_fits(prim.name, x1, r[0])
        check_scalar_fits(prim.name, x2, r[0])
        return (scalar_operand(x1, r[0], backend), scalar_operand(x2, r[0], backend), backend,
                r[0], r[1])  # fmt: skip
    if w1 or w2:
        t, s = (x2, x1) if w1 else (x1, x2)
        if type(t) is not Tensor:
            t = as_tensor(t, prim.name)
        d = t.dtype
        if type(s) is not float or d.kind not in "fc":  # a float keeps a float tensor's
            d = dtypes.weak_promote(d, s)
        r = prim.extra["unary_table"][d]
        if r is None:
            raise _dtype_error(prim, x1, x2)
        cdt, odt = r
        if type(s) is int:
            check_scalar_fits(prim.name, s, cdt)
        st = scalar_operand(s, cdt, t.backend)
        if t.dtype is not cdt:
            t = cast(t, cdt)
        return (st, t, t.backend, cdt, odt) if w1 else (t, st, t.backend, cdt, odt)
    backend, (t1, t2) = unify(prim.name, x1, x2)
    r = prim.extra["table"][(t1.dtype, t2.dtype)]
    if r is None:
        raise _dtype_error(prim, t1, t2)
    cdt, odt = r
    return cast(t1, cdt), cast(t2, cdt), backend, cdt, odt


def result_dtype(op: str, *xs: Tensor | Any) -> DType:
    """Promote tensors (strong) and Python scalars (weak) together."""
    try:
        return dtypes.result_type(*xs)
    except DTypeError as e:
        raise DTypeError(str(e).replace("result_type", op, 1)) from None


def prod_shape(shape: tuple[int, ...]) -> int:
    return size_of(shape)


def resolve(backend: Any, op: str) -> Backend:
    return get_default_backend() if backend is None else resolve_backend(backend, op)


def to_host(x: Tensor) -> np.ndarray:
    check_concrete(x, "to_numpy")
    return x.backend.to_numpy(x)


# ---------------------------------------------------------------- conversion of data to tensors


_DEFAULT_FOR_KIND = {
    "b": dtypes.bool_,
    "i": dtypes.int64,
    "u": dtypes.int64,
    "f": dtypes.float32,
    "c": dtypes.complex64,
}


def _opt_dtype(dtype: Any, op: str) -> DType | None:
    return None if dtype is None else dtypes.as_dtype(dtype, op)


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
        be = resolve_backend(
            get_default_backend() if backend is None else backend, "tensor", **backend_options
        )
    else:
        be = resolve(backend, "tensor")
    if type(data) is Tensor:
        t = data
        if backend is not None or backend_options:
            t = move(t, be, "tensor")
        return t if dt is None else _convert(t, dt, "tensor")
    t_data = type(data)
    if t_data in _PY_SCALARS:
        d = dt if dt is not None else dtypes.scalar_dtype(data)
        if t_data is int and d.kind in "iu":
            check_scalar_fits("tensor", data, d)
        return _full.bind(shape=(), dtype=d, value=_scalar_for(data, d, "tensor"), backend=be)
    arr = _to_numpy(data, dt)
    t = from_numpy(arr, backend=be)
    return t if dt is None else _convert(t, dt, "tensor")


def _convert(t: Tensor, dt: DType, op: str) -> Tensor:
    # numpy casting, except that complex to real is refused, as by astype (complex to
    # bool is x != 0, as there)
    if t.dtype.kind == "c" and dt.kind == "b":
        return elementwise_binary(elementwise_primitives.not_equal, t, 0)
    if t.dtype.kind == "c" and dt.kind != "c":
        raise DTypeError(
            f"{op}: converting complex {t.describe()} to {dt} would drop the imaginary part; "
            f"give a complex dtype"
        )
    return cast(t, dt)


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
            arr = _read_foreign(data)
    elif isinstance(data, (list, tuple)):
        arr = _from_sequence(data, dt)
    elif hasattr(data, "__array__"):
        arr = _read_foreign(data)
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


def _read_foreign(data: Any) -> np.ndarray:
    """Another library's array through ``__array__``; its refusal is numerix's error,
    naming the type and the fix (a torch tensor that requires grad: ``.detach()``)."""
    try:
        return np.asarray(data)
    except Exception as e:
        kind = f"{type(data).__module__.split('.')[0]}.{type(data).__name__}"
        if getattr(data, "requires_grad", False) is True:
            fix = (
                "it is part of an autograd graph (requires_grad=True): pass x.detach(), "
                "numerix takes its values"
            )
        else:
            fix = "convert it to a numpy array first"
        raise DTypeError(
            f"tensor: cannot read a {kind} (shape {tuple(getattr(data, 'shape', ()))}): "
            f"{' '.join(str(e).split()).rstrip('.')}; {fix}"
        ) from None


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
            target = dtypes.uint64
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
    t = creation_primitives.from_numpy.bind(arr, backend=be)
    dt = _opt_dtype(dtype, "from_numpy")
    return t if dt is None else _convert(t, dt, "from_numpy")
