"""numpy as the oracle: sample data per dtype, the expected promotion, and one check.

Every op test computes its expectation with numpy (bfloat16 through float32, as
numpy has no bfloat16 kernels of its own) and compares it with :func:`check`,
which pins the exact numerix dtype, the exact shape, the dtype the backend really
holds, and the values with a tolerance fitted to the dtype.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import numerix as nx
from numerix import dtypes
from numerix.primitives import REGISTRY
from numerix.testing.plugin import missing_primitive
from numerix.testing.tolerances import DEFAULT, tolerance

# ---------------------------------------------------------------- dtype groups

ALL = dtypes.ALL_DTYPES
BOOL = (dtypes.bool_,)
SIGNED = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64)
UNSIGNED = (dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64)
INTS = SIGNED + UNSIGNED
FLOATS = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
COMPLEX = (dtypes.complex64, dtypes.complex128)
REAL = INTS + FLOATS  # real numeric, no bool
NUMERIC = INTS + FLOATS + COMPLEX  # everything but bool
INEXACT = FLOATS + COMPLEX
BF16 = dtypes.bfloat16


def ids(d: dtypes.DType) -> str:
    return d.short


def pair_ids(p: tuple[dtypes.DType, dtypes.DType]) -> str:
    return f"{p[0].short}-{p[1].short}"


ALL_PAIRS = [(a, b) for a in ALL for b in ALL]

# ---------------------------------------------------------------- sample data


def sample(
    dtype: dtypes.DType,
    shape: tuple[int, ...] = (3, 4),
    seed: int = 0,
    *,
    positive: bool = False,
    nonzero: bool = False,
    small: bool = False,
) -> np.ndarray:
    """Deterministic values of ``dtype`` (a numpy array of ``dtype.numpy_dtype``).

    Integers lie in -9..9 (unsigned 0..9; ``small``: -2..2), floats in [-4, 4)
    (``small``: [0.5, 1.5)), complex numbers have both parts so. ``positive`` keeps
    values > 0, ``nonzero`` keeps them != 0.
    """
    return np.asarray(_sample(dtype, shape, seed, positive, nonzero, small))


def _sample(
    dtype: dtypes.DType,
    shape: tuple[int, ...],
    seed: int,
    positive: bool,
    nonzero: bool,
    small: bool,
) -> Any:
    rng = np.random.default_rng(seed * 7919 + len(shape) * 31 + sum(shape))
    k = dtype.kind
    if k == "b":
        a: Any = rng.random(shape) < 0.5
        if positive or nonzero:
            a = np.ones(shape, bool)
        return a
    if k in "iu":
        lo = 1 if positive or (k == "u" and nonzero) else (0 if k == "u" else (-2 if small else -9))
        hi = 3 if small else 10
        a = rng.integers(lo, hi, size=shape)
        if nonzero:
            a = np.where(a == 0, 1, a)
        return a.astype(dtype.numpy_dtype)

    def real() -> np.ndarray:
        if small:
            r = rng.uniform(0.5, 1.5, size=shape)
        elif positive:
            r = rng.uniform(0.25, 4.0, size=shape)
        else:
            r = rng.uniform(-4.0, 4.0, size=shape)
        if nonzero:
            r = np.where(np.abs(r) < 0.25, 0.5, r)
        return r

    if k == "f":
        return real().astype(dtype.numpy_dtype)
    return (real() + 1j * real()).astype(dtype.numpy_dtype)


def t(a: Any, dtype: dtypes.DType | None = None) -> nx.Tensor:
    """A numerix tensor of a numpy array (keeping its dtype unless ``dtype`` is given)."""
    return nx.tensor(a, dtype=dtype)


# ---------------------------------------------------------------- promotion oracle


def expected_promotion(a: dtypes.DType, b: dtypes.DType) -> dtypes.DType | None:
    """The dtype two tensors promote to, or None where numerix refuses.

    numpy's ``result_type`` is the oracle within a kind (it follows the array API
    table there); across kinds numerix follows JAX's lattice (bool < int < float <
    complex: the higher kind's dtype wins). bfloat16 stands in as float16 for numpy,
    except that float16 with bfloat16 gives float32. uint64 with a signed integer is
    refused (numpy's float64 would lose integers above 2**53).
    """
    if a is b:
        return a
    if a.kind == "b":
        return b
    if b.kind == "b":
        return a
    if a.kind in "iu" and b.kind in "iu":
        if a.kind != b.kind and dtypes.uint64 in (a, b):
            return None
        return nx.dtypes.as_dtype(np.result_type(a.numpy_dtype, b.numpy_dtype))
    if a.kind in "iu":
        return b
    if b.kind in "iu":
        return a
    if {a, b} == {dtypes.float16, dtypes.bfloat16}:
        return dtypes.float32

    def npd(d: dtypes.DType) -> np.dtype:
        return np.dtype(np.float16) if d is BF16 else d.numpy_dtype

    return nx.dtypes.as_dtype(np.result_type(npd(a), npd(b)))


def inexact(d: dtypes.DType) -> dtypes.DType:
    """The dtype an op that computes in floating point uses for ``d`` (float32 for
    bool and integers, as JAX and Nx)."""
    return dtypes.float32 if d.kind in "biu" else d


def real_of(d: dtypes.DType) -> dtypes.DType:
    return {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}.get(d, d)


# ---------------------------------------------------------------- numpy evaluation


def to_compute(a: Any, compute: dtypes.DType, *, wide: bool = True) -> np.ndarray:
    """``a`` rounded to the compute dtype ``compute``, then, for inexact dtypes, widened
    (to float64 / complex128 when ``wide``, to float32 for bfloat16 otherwise) so that
    numpy computes the exact answer for the rounded inputs."""
    r = np.asarray(a).astype(compute.numpy_dtype)
    if compute.kind in "fc":
        if wide:
            r = r.astype(np.float32 if compute is BF16 else r.dtype).astype(
                np.complex128 if compute.kind == "c" else np.float64
            )
        elif compute is BF16:
            r = r.astype(np.float32)
    return r


def oracle(
    fn: Callable[..., Any],
    *arrays: Any,
    compute: dtypes.DType,
    out: dtypes.DType,
    wide: bool = True,
) -> np.ndarray:
    """numpy's ``fn`` on ``arrays`` rounded to ``compute`` (see :func:`to_compute`), the
    result in ``out``'s numpy dtype."""
    args = [to_compute(a, compute, wide=wide) for a in arrays]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = np.asarray(fn(*args))
        return r.astype(out.numpy_dtype)


def weak_expected(d: dtypes.DType, s: Any) -> dtypes.DType:
    """The documented weak promotion of a tensor of dtype ``d`` with a Python scalar:
    the tensor's dtype wins unless the scalar is of a higher kind, which then takes
    its default (int64, float32) or the complex dtype matching the tensor's floats."""
    if type(s) is bool:
        return d
    if type(s) is int:
        return dtypes.int64 if d.kind == "b" else d
    if type(s) is float:
        return d if d.kind in "fc" else dtypes.float32
    assert type(s) is complex
    if d.kind == "c":
        return d
    return dtypes.complex128 if d is dtypes.float64 else dtypes.complex64


# ---------------------------------------------------------------- the check

# (rtol, atol) per result dtype; integers and bool compare exactly. Looser entries
# per op live in numerix.testing.tolerances, each with its reason.
TOL = DEFAULT


def host(x: nx.Tensor) -> np.ndarray:
    return x.to_numpy()


def check(
    result: Any,
    expected: Any,
    dtype: dtypes.DType,
    *,
    shape: Sequence[int] | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    scale: float = 1.0,
    op: str | None = None,
) -> None:
    """``result`` is a Tensor of exactly ``dtype`` and ``expected``'s shape (or ``shape``),
    whose backend holds a numpy array of exactly that dtype and shape, with ``expected``'s
    values: exactly for bool and integers, within the dtype's tolerance for inexact
    dtypes (``atol`` scaled by ``scale``, the magnitude of the terms summed)."""
    assert isinstance(result, nx.Tensor), f"expected a Tensor, got {type(result).__name__}"
    assert result.dtype is dtype, f"dtype: got {result.dtype}, expected {dtype}"
    exp = np.asarray(expected)
    want_shape = tuple(exp.shape) if shape is None else tuple(shape)
    assert type(result.shape) is tuple, f"shape must be a tuple, got {type(result.shape)}"
    assert result.shape == want_shape, f"shape: got {result.shape}, expected {want_shape}"
    got = host(result)
    assert isinstance(got, np.ndarray), f"backend holds {type(got).__name__}, not ndarray"
    assert got.dtype == dtype.numpy_dtype, f"backend holds {got.dtype}, expected {dtype}"
    assert got.shape == want_shape, f"backend holds shape {got.shape}, expected {want_shape}"
    if shape is not None:
        exp = np.broadcast_to(exp, want_shape)
    if dtype.kind in "biu":
        np.testing.assert_array_equal(got, exp.astype(dtype.numpy_dtype), strict=True)
        return
    r0, a0 = tolerance(op, dtype, result.backend.name)
    wide = np.complex128 if dtype.kind == "c" else np.float64
    g = got.astype(np.float32).astype(wide) if dtype is BF16 else got.astype(wide)
    e = exp.astype(np.float32).astype(wide) if exp.dtype == BF16.numpy_dtype else exp.astype(wide)
    np.testing.assert_allclose(
        g,
        e,
        rtol=r0 if rtol is None else rtol,
        atol=(a0 if atol is None else atol) * scale,
        equal_nan=True,
    )


# ---------------------------------------------------------------- edge shapes

# pairs of operand shapes for binary ops: 0-d, empty, size-1 broadcasting, plain
BINARY_SHAPES = [
    ((), ()),
    ((5,), (5,)),
    ((0,), (0,)),
    ((2, 0), (2, 0)),
    ((2, 0), (1,)),
    ((3, 1), (1, 4)),
    ((), (2, 3)),
    ((2, 3), ()),
    ((2, 1, 4), (3, 1)),
]

UNARY_SHAPES = [(), (0,), (2, 0), (7,), (2, 3, 4)]


def shape_id(s: Any) -> str:
    return repr(s).replace(" ", "")


def noncontiguous(a: np.ndarray) -> np.ndarray:
    """A non-contiguous numpy view holding ``a``'s values: the transpose of a transposed
    copy where the last two axes are longer than 1, a view with stride 2 on the last
    axis otherwise (0-d arrays are always contiguous and come back as they are)."""
    if a.ndim == 0:
        return a
    if a.ndim >= 2 and a.shape[-1] > 1 and a.shape[-2] > 1:
        v = np.ascontiguousarray(np.swapaxes(a, -1, -2)).swapaxes(-1, -2)
    else:
        big = np.zeros((*a.shape[:-1], 2 * a.shape[-1]), a.dtype)
        big[..., ::2] = a
        v = big[..., ::2]
    assert a.size <= 1 or not v.flags.c_contiguous
    np.testing.assert_array_equal(v, a)
    return v


# ---------------------------------------------------------------- many cases, one test


class Cases:
    """Run many small cases in one test and report every failing one (not just the
    first): ``with cases.case("add s8-u8"): ...`` then ``cases.finish()``."""

    def __init__(self) -> None:
        self.failures: list[str] = []
        #: the errors of cases that reached what the backend may not claim (a primitive it
        #: has no method for, a dtype it does not hold): the kit's plugin decides
        self.unclaimed: list[BaseException] = []
        self.count = 0

    def case(self, label: str) -> _Case:
        self.count += 1
        return _Case(self, label)

    def finish(self) -> None:
        """Raise the failures of every case; where only cases that reached something the
        backend may not claim failed, raise the first of those errors, which the kit's
        plugin reports as not claimed (or as the failure it is, on a backend that
        claims it)."""
        assert self.count, "no case ran"
        if self.failures:
            more = f" ({len(self.unclaimed)} more not claimed)" if self.unclaimed else ""
            raise AssertionError(
                f"{len(self.failures)} of {self.count} cases failed{more}:\n"
                + "\n".join(self.failures)
            )
        if self.unclaimed:
            raise self.unclaimed[0]


class _Case:
    def __init__(self, owner: Cases, label: str) -> None:
        self.owner, self.label = owner, label

    def __enter__(self) -> None:
        return None

    def __exit__(self, et: Any, ev: Any, tb: Any) -> bool:
        if et is None:
            return False
        if not issubclass(et, Exception):
            return False
        if _may_be_unclaimed(ev):
            self.owner.unclaimed.append(ev)
            return True
        msg = str(ev).strip().replace("\n", "\n    ")
        self.owner.failures.append(f"- {self.label}: {et.__name__}: {msg[:2000]}")
        return True


#: every primitive: whether a case's error names one the backend does not claim is the
#: plugin's to decide, once the grouped test raises it
_ANY_PRIMITIVE = frozenset(REGISTRY.names())


def _may_be_unclaimed(e: BaseException) -> bool:
    # what the kit's plugin reads as not claimed, by its own reading of the error
    return missing_primitive(e, _ANY_PRIMITIVE) is not None
