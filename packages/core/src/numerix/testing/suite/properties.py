"""Property tests: hypothesis draws shapes and values for the element-wise, reduction,
shape and indexing families, and numpy is the oracle for each draw."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import numerix as nx
from numerix import dtypes
from numerix.testing.oracle import check, ids

# 40 draws per property, or fewer where the loaded hypothesis profile asks for fewer
# (``--hypothesis-profile=numerix-ci``, registered by the kit's pytest plugin)
PROPS = settings(
    max_examples=min(40, settings.default.max_examples),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=True,
)

# dtypes whose values numpy computes exactly as numerix defines them (no float32
# compute for integers, no bfloat16 rounding), so that the oracle is plain numpy
PROP_DTYPES = (
    dtypes.int8,
    dtypes.int32,
    dtypes.int64,
    dtypes.uint8,
    dtypes.uint32,
    dtypes.float32,
    dtypes.float64,
)


def _values(dtype: dtypes.DType, shape: Any) -> st.SearchStrategy[np.ndarray]:
    if dtype.kind == "f":
        # a backend that declares it flushes subnormals is checked for exactly that in
        # test_subnormals_as_declared; here its draws are normal numbers
        subnormal = not nx.get_default_backend().flushes_denormals
        elements = st.floats(
            -1e3, 1e3, width=dtype.bits, allow_nan=False, allow_subnormal=subnormal
        )
    else:
        info = np.iinfo(dtype.numpy_dtype)
        elements = st.integers(max(int(info.min), -1000), min(int(info.max), 1000))
    return hnp.arrays(dtype.numpy_dtype, shape, elements=elements)


@st.composite
def _binary_operands(draw: Any, dtype: dtypes.DType) -> tuple[np.ndarray, np.ndarray]:
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4,
                                                    max_side=4))  # fmt: skip
    a = draw(_values(dtype, shapes.input_shapes[0]))
    b = draw(_values(dtype, shapes.input_shapes[1]))
    return a, b


_BINARY = [
    ("add", nx.add, np.add),
    ("subtract", nx.subtract, np.subtract),
    ("multiply", nx.multiply, np.multiply),
    ("maximum", nx.maximum, np.maximum),
    ("minimum", nx.minimum, np.minimum),
    ("less", nx.less, np.less),
    ("equal", nx.equal, np.equal),
]


@pytest.mark.parametrize("dtype", PROP_DTYPES, ids=ids)
@pytest.mark.parametrize("op", _BINARY, ids=[o[0] for o in _BINARY])
def test_property_binary_broadcasting(op: Any, dtype: dtypes.DType) -> None:
    _, fn, ref = op

    @PROPS
    @given(_binary_operands(dtype))
    def run(ab: tuple[np.ndarray, np.ndarray]) -> None:
        a, b = ab
        with np.errstate(over="ignore"):
            want = ref(a, b)
        r = fn(nx.tensor(a), nx.tensor(b))
        check(r, want, dtypes.bool_ if want.dtype == bool else dtype)

    run()


@st.composite
def _reduction_case(draw: Any, dtype: dtypes.DType) -> tuple[np.ndarray, Any, bool]:
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=4))
    a = draw(_values(dtype, shape))
    nd = len(shape)
    axis = draw(st.one_of(st.none(), st.lists(st.integers(-nd, nd - 1), unique_by=lambda i: i % nd,
                                              max_size=nd).map(tuple) if nd else st.none()))  # fmt: skip
    return a, axis, draw(st.booleans())


@pytest.mark.parametrize("dtype", PROP_DTYPES, ids=ids)
@pytest.mark.parametrize("name", ["sum", "max", "min", "any"])
def test_property_reductions(name: str, dtype: dtypes.DType) -> None:
    fn = getattr(nx, name)
    ref = getattr(np, name)

    @PROPS
    @given(_reduction_case(dtype))
    def run(case: tuple[np.ndarray, Any, bool]) -> None:
        a, axis, keepdims = case
        if name == "sum":
            acc = np.int64 if dtype.kind == "i" else np.uint64 if dtype.kind == "u" else None
            want = np.sum(a, axis=axis, keepdims=keepdims, dtype=acc)
            out = (
                dtypes.int64 if dtype.kind == "i" else dtypes.uint64 if dtype.kind == "u" else dtype
            )
        else:
            want = ref(a, axis=axis, keepdims=keepdims)
            out = dtypes.bool_ if name == "any" else dtype
        r = fn(nx.tensor(a), axis=axis, keepdims=keepdims)
        check(r, want, out, scale=float(np.abs(a).sum()) if dtype.kind == "f" else 1.0)

    run()


@st.composite
def _reshape_case(draw: Any) -> tuple[np.ndarray, tuple[int, ...], tuple[int, ...]]:
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    perm = tuple(draw(st.permutations(range(len(shape)))))
    flat = a.size
    divisors = [d for d in range(1, flat + 1) if flat % d == 0] or [1]
    d = draw(st.sampled_from(divisors))
    new = (d, flat // d) if flat else (0, draw(st.integers(1, 3)))
    return a, perm, new


@PROPS
@given(_reshape_case())
def test_property_transpose_reshape_concatenate(case: Any) -> None:
    a, perm, new = case
    t = nx.tensor(a)
    check(nx.transpose(t, perm), np.transpose(a, perm), dtypes.int32)
    check(nx.reshape(t, new), np.reshape(a, new), dtypes.int32)
    if a.ndim:
        check(nx.concatenate([t, t], axis=-1), np.concatenate([a, a], axis=-1), dtypes.int32)
        check(nx.flip(t, axis=0), np.flip(a, axis=0), dtypes.int32)


@st.composite
def _basic_index_case(draw: Any) -> tuple[np.ndarray, Any]:
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5))
    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    key = draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    return a, key


@PROPS
@given(_basic_index_case())
def test_property_basic_indexing(case: Any) -> None:
    a, key = case
    check(nx.tensor(a)[key], np.asarray(a[key]), dtypes.int64)


@st.composite
def _advanced_index_case(draw: Any) -> tuple[np.ndarray, tuple[Any, ...]]:
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    key = []
    for dim in shape:
        kind = draw(st.sampled_from(["slice", "int", "array"]))
        if kind == "slice":
            key.append(slice(None, None, draw(st.sampled_from([1, -1, 2]))))
        elif kind == "int":
            key.append(draw(st.integers(-dim, dim - 1)))
        else:
            key.append(draw(hnp.arrays(np.int64, draw(st.sampled_from([(2,), (1,), (2, 1)])),
                                       elements=st.integers(-dim, dim - 1))))  # fmt: skip
    return a, tuple(key)


@PROPS
@given(_advanced_index_case())
def test_property_advanced_indexing(case: Any) -> None:
    a, key = case
    try:
        want = np.asarray(a[key])
    except IndexError:
        with pytest.raises(nx.IndexingError):
            nx.tensor(a)[tuple(nx.tensor(k) if isinstance(k, np.ndarray) else k for k in key)]
        return
    got = nx.tensor(a)[tuple(nx.tensor(k) if isinstance(k, np.ndarray) else k for k in key)]
    check(got, want, dtypes.int64)


@pytest.mark.parametrize("dtype", (dtypes.float32, dtypes.float64), ids=ids)
def test_subnormals_as_declared(dtype: dtypes.DType) -> None:
    # IEEE keeps subnormals; a backend that flushes them (Backend.flushes_denormals) must
    # flush them to zero, consistently, in arithmetic and in comparisons
    tiny = np.finfo(dtype.numpy_dtype).smallest_subnormal
    a = np.array([tiny, -tiny, 1.0], dtype=dtype.numpy_dtype)
    x = nx.tensor(a)
    ones = nx.ones((3,), dtype)
    if nx.get_default_backend().flushes_denormals:
        check(x * ones, np.array([0.0, 0.0, 1.0], dtype.numpy_dtype), dtype)
        check(nx.not_equal(x * ones, 0), np.array([False, False, True]), dtypes.bool_)
    else:
        check(x * ones, a, dtype)
        check(nx.not_equal(x, 0), np.array([True, True, True]), dtypes.bool_)
