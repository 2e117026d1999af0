"""Tensor.__getitem__ against numpy's indexing: ints, slices with any step, None,
Ellipsis, integer arrays (with numpy's placement of the advanced dimensions) and
boolean masks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import dtypes
from numerix.defn.compilers import compilers_serving
from numerix.primitives import BLOCKS
from numerix.testing.oracle import ALL, NUMERIC, Cases, check, ids, noncontiguous, sample

S = slice
E = Ellipsis
A = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)

BASIC = [
    0, -1, 1, (0, 1), (1, -1, 2, -5), (-2, -3, -4, -5), S(None), S(1, None), S(None, None, 2),
    S(None, None, -1), S(-1, None, -2), (S(None), S(3, 0, -1)), (S(None), S(None), S(10, -10, -3)),
    (S(None), S(2, 1)), (S(None), S(-100, 100)), (E,), (E, 0), (0, E), (0, E, 1), (E, S(None, None, -2)),
    (None,), (None, 0, None), (E, None), (S(None), None, 1), (1, S(None, None, -1), None, S(1, 3)),
    (S(None),) * 4, (np.int64(1), np.int32(-1)), (0, 0, 0, 0), (0, 0, 0, S(4, 0, -2)), (),
    (S(None, None, 3), S(None, None, -2), S(1, None, 2), S(None, None, -3)),
]  # fmt: skip

ADVANCED = [
    [0, 1], [1, 1, 0], [[0, 1], [1, 0]], [-1, -2], (S(None), [2, 0, 1]), ([1, 0], [2, 1]),
    (S(None), [0, 2], [1, 3]),            # adjacent, in the middle: stay in place
    ([0, 1], S(None), [1, 3]),            # separated by a slice: go first
    (0, S(None), [1, 2]),                 # an int counts as an advanced index
    (S(None), 0, [1, 2]),                 # adjacent int and list
    ([1], E, [0]),                        # separated by the ellipsis
    ([1], [0], E, [2]),
    (E, [0, -1]),
    ([[0], [1]], S(None), [[0, 1, 2]]),   # index shapes broadcast to (2, 3)
    (None, [0, 1]),
    ([0, 1], None, [1, 2]),               # None separates them
    (S(None), [[0, 1]], None),
    ([0, 1], [1, 2], [3, 0], [4, 4]),
    (np.array(1),), (np.array(1), S(None), [0, 2]), (S(None, None, -1), [0, 2]),
    (S(None), [2, 0], S(1, 3), [1, 0]),
    ([],), (S(None), []), (np.array([], np.int64), 0), ([[]],),
    (np.array([[1], [0]], np.uint8), np.array([0, 2], np.int16)),
    (1, [0, 2], S(None, None, -2), [1, 3]),
    (S(None), [0, 1], E, 0, S(None)),     # an ellipsis standing for no axis still separates
    (S(None), [0], 1, E, [2]),
    ([0], [1], 2, 3, E),                  # a trailing one does not
]  # fmt: skip

MASKS = [
    A > 50, A % 3 == 0, np.array([True, False]), np.array([False, False]),
    A[:, :, 0, 0] % 2 == 0, (S(None), np.array([True, False, True])),
    (E, np.array([True, False, True, True, False])), (None, np.array([False, True])),
    (np.array([True, True]), S(None), [0, 1]), (0, np.array([True, False, True])),
    (S(None), A[0, :, :, 0] > 20), (A[:, :, 0, 0] > 4, [3]), (S(None), S(None), S(None), A[0, 0, 0] > 1),
]  # fmt: skip


def _key_id(k: Any) -> str:
    r = repr(k).replace("slice", "S").replace("Ellipsis", "...").replace(" ", "")
    return r if len(r) < 50 else r[:47] + "..."


def _as_tensors(key: Any) -> Any:
    """The key with every list / numpy array replaced by a numerix tensor of it."""

    def conv(k: Any) -> Any:
        if isinstance(k, list):
            return nx.tensor(k, dtype=nx.int64) if np.size(k) == 0 else nx.tensor(k)
        if isinstance(k, np.ndarray):
            return nx.tensor(k)
        return k

    return tuple(conv(k) for k in key) if isinstance(key, tuple) else conv(key)


@pytest.mark.parametrize("key", BASIC + ADVANCED + MASKS, ids=_key_id)
def test_getitem_matches_numpy(key: Any) -> None:
    want = A[key]
    x = nx.tensor(A)
    check(x[key], want, nx.int64)
    check(x[_as_tensors(key)], want, nx.int64)
    check(nx.tensor(noncontiguous(A))[key], want, nx.int64)
    check(nx.getitem(x, key), want, nx.int64)


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_getitem_every_dtype(dtype: dtypes.DType) -> None:
    a = sample(dtype, (3, 4, 2), 1)
    keys = [1, (S(None, None, -1), 2), (E, None, 0), ([2, 0], S(None), [1, 0]), (0, [1, 3]),
            np.real(a[..., 0]).astype(np.float32) > 0, (None,)]  # fmt: skip
    for key in keys:
        check(nx.tensor(a)[key], a[key], dtype)


@pytest.mark.parametrize("shape", [(), (0,), (2, 0), (1,)], ids=str)
def test_getitem_edge_shapes(shape: tuple[int, ...]) -> None:
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    keys: list[Any] = [(), E, None, (None, E, None)]
    if shape:
        keys += [S(None), S(None, None, -1), S(5, 0, -1), ([],), np.zeros(shape, bool)]
    if shape and shape[0]:
        keys += [0, -1, [0, 0]]
        # 0-d integer tensors of each width, alone and in a tuple (a point of the array)
        for d in (np.int32, np.int64, np.uint8):
            keys += [np.array(0, d), (np.array(-1 if d != np.uint8 else 0, d),)]
    for key in keys:
        check(nx.tensor(a)[key], a[key], nx.float32)
        check(nx.tensor(a)[_as_tensors(key)], a[key], nx.float32)


def test_iteration_and_len_follow_the_first_axis() -> None:
    a = sample(nx.int16, (3, 2), 2)
    rows = list(nx.tensor(a))
    assert len(rows) == len(a) == len(nx.tensor(a))
    for got, want in zip(rows, a, strict=True):
        check(got, want, nx.int16)
    assert list(nx.zeros((0, 3))) == []


def test_getitem_errors() -> None:
    x = nx.tensor(A)
    d = r"\(s64\[2\]\[3\]\[4\]\[5\] \w+\([^)]*\)\)"
    with pytest.raises(
        nx.IndexingError,
        match=rf"^getitem: index 2 is out of bounds for axis 0 with "
        rf"size 2 {d}",
    ):
        x[2]
    with pytest.raises(
        nx.IndexingError, match=r"^getitem: index -4 is out of bounds for axis 1 with size 3"
    ):
        x[:, -4]
    with pytest.raises(
        nx.IndexingError, match=r"^getitem: index 5 is out of bounds for axis 3 with size 5"
    ):
        x[..., [0, 5]]
    with pytest.raises(
        nx.IndexingError, match=r"^getitem: index -3 is out of bounds for axis 0 with size 2"
    ):
        x[nx.tensor([-3, 0])]
    with pytest.raises(
        nx.IndexingError, match=r"^getitem: index 3 is out of bounds for axis 1 with size 3"
    ):
        x[0, [0, 3], 0]
    with pytest.raises(
        nx.IndexingError, match=rf"^getitem: index 3 is out of bounds for axis 1 with size 3 {d}"
    ):
        x[:1, [0, 3], ::-2]  # the message names the tensor indexed, not a slice of it
    with pytest.raises(
        nx.IndexingError,
        match=r"^getitem: too many indices for s64\[2\]\[3\]\[4\]\[5\] "
        r"\w+\([^)]*\): 4 dimension\(s\), 5 indexed",
    ):
        x[0, 0, 0, 0, 0]
    with pytest.raises(
        nx.IndexingError, match=r"^getitem: too many indices for .* 4 dimension\(s\), 5 "
    ):
        x[A[0] > 0, 0, 0]  # a 3-d mask consumes three axes
    with pytest.raises(
        nx.IndexingError, match=r"^getitem: too many indices for s32 \w+\([^)]*\): 0 "
    ):
        nx.tensor(3, dtype=nx.int32)[0]
    with pytest.raises(
        nx.IndexingError, match=r"^getitem: an index can only have a single ellipsis"
    ):
        x[..., 0, ...]
    with pytest.raises(nx.IndexingError, match=r"^getitem: invalid index 1.5 of type float"):
        x[1.5]
    with pytest.raises(nx.IndexingError, match=r"^getitem: invalid index 'a' of type str"):
        x["a"]
    with pytest.raises(
        nx.IndexingError,
        match=r"^getitem: index tensors must be integer or bool, got "
        r"f32\[2\] \w+\([^)]*\)",
    ):
        x[nx.tensor([0.0, 1.0])]
    with pytest.raises(
        nx.IndexingError, match=r"^getitem: index tensors must be integer or bool, got f32"
    ):
        x[[0.0, 1.0]]
    with pytest.raises(nx.IndexingError, match=r"^getitem: slice step cannot be zero"):
        x[::0]
    with pytest.raises(nx.IndexingError, match=r"^getitem: slice bounds must be ints, got"):
        x[0.5:]
    with pytest.raises(
        nx.IndexingError,
        match=r"^getitem: bool index of shape \(3,\) does not match "
        r"the indexed dimensions \(2,\) of s64",
    ):
        x[np.array([True, False, True])]
    with pytest.raises(
        nx.IndexingError,
        match=r"^getitem: bool index of shape \(4,\) does not match "
        r"the indexed dimensions \(5,\)",
    ):
        x[..., np.ones(4, bool)]
    with pytest.raises(nx.IndexingError, match=r"^getitem: a Python bool is not a valid index"):
        x[True]
    # a 0-d bool tensor index is numpy's: a new axis of one (True) or of none (False)
    for flag in (True, False):
        got = x[nx.tensor(flag, backend=x.backend)]
        want = np.asarray(x)[np.bool_(flag)]
        assert (got.shape, got.dtype) == (want.shape, x.dtype), got.describe()
        np.testing.assert_array_equal(np.asarray(got), want)
    with pytest.raises(
        nx.IndexingError,
        match=r"^getitem: the index arrays' shapes \(2,\) and \(3,\) "
        r"cannot be broadcast together",
    ):
        x[[0, 1], [0, 1, 2]]
    with pytest.raises(
        nx.IndexingError, match=r"^getitem: the index arrays' shapes \(\) and \(3,\) and \(2,\)"
    ):
        x[0, np.array([True, True, True]), [0, 1]]
    # x[0] = 1 is numpy's assignment (numerix.setitem), on every backend
    want = np.asarray(x).copy()
    want[0] = 1
    x[0] = 1
    assert x.shape == want.shape
    np.testing.assert_array_equal(np.asarray(x), want)
    assert isinstance(nx.IndexingError("x"), IndexError)


def test_getitem_fast_paths_match_numpy() -> None:
    # Python ints and slices (planned once per shape and key: each key is taken twice)
    # and one integer tensor (x[idx]) skip the general machinery: the same results and
    # errors, on 0-d, empty and 1-d tensors, with negative and repeated indices
    m = sample(nx.float32, (4, 3), 3)
    v, e, z = m[:, 0].copy(), np.zeros((0, 3), np.float32), np.array(2.5, np.float32)
    basic = [(m, 1), (m, -4), (m, (3, -1)), (m, S(1, 3)), (m, (S(None), S(None, None, 2))),
             (m, S(-1, None)), (m, S(3, 1)), (m, (2, S(0, 2))), (v, 0), (v, -1), (v, S(None)),
             (e, S(None)), (e, S(0, 0)), (e, (S(None), 1)), (z, ()), (z, E)]  # fmt: skip
    for a, key in basic:
        for _ in range(2):
            check(nx.tensor(a)[key], a[key], nx.float32)
    idx = [np.array([3, 0, 2, 2]), np.array([-1, -4, 0]), np.array(2), np.array([[1], [-2]]),
           np.zeros(0, np.int64), np.arange(-4, 4).repeat(12)]  # fmt: skip
    for i in idx:
        check(nx.tensor(m)[nx.tensor(i)], m[i], nx.float32)
    for dt in (np.int8, np.int32, np.uint8):
        check(nx.tensor(m)[nx.tensor(idx[0].astype(dt))], m[idx[0]], nx.float32)
        check(nx.tensor(v)[nx.tensor(idx[0].astype(dt))], v[idx[0]], nx.float32)
    check(nx.tensor(e)[nx.tensor(np.zeros(0, np.int64))], e[np.zeros(0, np.int64)], nx.float32)
    mask = np.array([True, False, False, True])
    check(nx.tensor(m)[nx.tensor(mask)], m[mask], nx.float32)  # bool: the general way
    x = nx.tensor(m)
    for key, bad in ((4, 4), (-5, -5), ((0, 3), 3), ((0, -4), -4)):
        with pytest.raises(nx.IndexingError, match=rf"^getitem: index {bad} is out of bounds"):
            x[key]
    big = np.arange(-4, 4).repeat(12)  # bounds read by numpy beyond the small-index size
    for i, bad in (([0, 4], 4), ([-5, 1], -5), (np.append(big, 9), 9), (np.append(big, -9), -9)):
        with pytest.raises(
            nx.IndexingError,
            match=rf"^getitem: index {bad} is out of bounds for axis 0 with size 4",
        ):
            x[nx.tensor(np.asarray(i, np.int64))]
        with pytest.raises(nx.IndexingError, match=rf"^take: index {bad} is out of bounds"):
            nx.take(x, nx.tensor(np.asarray(i, np.int64)), axis=0)
    with pytest.raises(nx.IndexingError, match=r"^getitem: index 0 is out of bounds .* size 0"):
        nx.tensor(e)[0]
    with pytest.raises(nx.IndexingError, match=r"^getitem: index 0 is out of bounds .* size 0"):
        nx.tensor(e)[nx.tensor([0])]
    with pytest.raises(nx.IndexingError, match=r"^getitem: too many indices for f32 "):
        nx.tensor(z)[nx.tensor([0])]


# ---------------------------------------------------------------- the take block
# x[idx] and take(x, idx, axis=0) run the take block: the backend's native kernel (or
# the core's version, a gather) eagerly, and one block node under every compiler

# 1-d with a negative and a repeated entry, 0-d negative, 2-d, empty
TAKE_INDICES: list[Any] = [[3, 0, -1, 3], -2, [[1, -4], [0, 2]], np.zeros(0, np.int64)]
# compiled, and through the core's version, on one dtype of each kind (and uint16, which
# torch indexes apart): moving elements does not depend on the dtype beyond its kind
TAKE_COMPILED = (dtypes.bool_, dtypes.uint16, dtypes.int64, dtypes.bfloat16, dtypes.float32,
                 dtypes.complex128)  # fmt: skip


def _take_paths(x: nx.Tensor, v: nx.Tensor, *idx: nx.Tensor) -> tuple[nx.Tensor, ...]:
    # x 3-d and v 1-d, by both spellings, each index shape
    return (*(x[i] for i in idx), nx.take(x, idx[1], axis=0), *(nx.take(v, i) for i in idx))


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_take_block(dtype: dtypes.DType) -> None:
    a = sample(dtype, (4, 3, 2), 21)
    v = a[:, 0, 0].copy()
    idx = [np.asarray(i, np.int64) for i in TAKE_INDICES]
    args = (nx.tensor(a), nx.tensor(v), *(nx.tensor(i) for i in idx))
    wants = (*(a[i] for i in idx), a[idx[1]], *(v[i] for i in idx))
    graph = nx.trace(_take_paths, *args)
    blocks = [n.value.name for n in graph.nodes if n.op == "block"]
    assert blocks == ["take"] * len(wants), graph.listing()
    runs = [("eager", _take_paths)]
    if dtype in TAKE_COMPILED:
        runs += [
            (name, nx.jit(_take_paths, compiler=name))
            for name in compilers_serving(args[0].backend)
        ]
    cases = Cases()
    for name, fn in runs:
        for k, (got, want) in enumerate(zip(fn(*args), wants, strict=True)):
            with cases.case(f"{name}, path {k}"):
                check(got, want, dtype, rtol=0.0, atol=0.0)
    # the core's version, which a backend without the kernel runs (in-range indices)
    fallback = BLOCKS["take"].fallback
    assert fallback is not None
    for i in idx if dtype in TAKE_COMPILED else ():
        with cases.case(f"the core's version, index {i.tolist()}"):
            got = fallback(args[0], nx.tensor(np.where(i < 0, i + 4, i)))
            check(got, a[i], dtype, rtol=0.0, atol=0.0)
    cases.finish()


def test_take_block_refusals() -> None:
    # out-of-range entries are refused before the block, with the op, the index and the
    # tensor named, on both spellings; an empty axis refuses any index, a traced one too
    a = np.zeros((4, 3), np.float32)
    x = nx.tensor(a)
    d = r"\(f32\[4\]\[3\] \w+\([^)]*\)\)"
    for i, bad in (([0, 4], 4), ([-5, 1], -5), (7, 7), ([[0], [-9]], -9)):
        k = nx.tensor(np.asarray(i, np.int64))
        for op, call in (("getitem", lambda k: x[k]), ("take", lambda k: nx.take(x, k, axis=0))):
            with pytest.raises(
                nx.IndexingError,
                match=rf"^{op}: index {bad} is out of bounds for axis 0 with size 4 {d}",
            ):
                call(k)
    e = nx.tensor(np.zeros((0, 3), np.float32))
    with pytest.raises(nx.IndexingError, match=r"^take: index 0 is out of bounds .* size 0"):
        nx.take(e, nx.tensor([0]), axis=0)
    with pytest.raises(nx.IndexingError, match=r"^getitem: axis 0 of f32\[0\]\[3\] .* is empty"):
        nx.jit(lambda k: e[k])(nx.tensor([0]))


def test_take_block_grad() -> None:
    # each taken row sends its cotangent back; repeated rows add up (the rule is a
    # scatter-add), eagerly and under every compiler
    a, w = sample(nx.float32, (4, 3), 22), sample(nx.float32, (2, 2, 3), 23)
    i = np.array([[3, -1], [3, 0]], np.int64)
    k, wt = nx.tensor(i), nx.tensor(w)
    want = np.zeros_like(a)
    np.add.at(want, i, w)
    grad = nx.grad(lambda u: nx.sum(u[k] * wt))
    check(grad(nx.tensor(a)), want, nx.float32)
    for name in compilers_serving(nx.get_default_backend()):
        check(nx.jit(grad, compiler=name)(nx.tensor(a)), want, nx.float32)


# ---------------------------------------------------------------- take_along_axis


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_take_along_axis_matches_numpy(dtype: dtypes.DType) -> None:
    cases = Cases()
    rng = np.random.default_rng(3)
    for shape, ishape, axis in [((3, 4), (3, 4), 0), ((3, 4), (3, 2), 1), ((3, 4), (5, 4), 0),
                                ((3, 4), (1, 6), 1), ((3, 1), (3, 5), 1), ((1, 4), (2, 4), 0),
                                ((2, 3, 4), (2, 3, 1), -1), ((2, 3, 4), (1, 5, 4), 1), ((5,), (7,), 0),
                                ((5,), (0,), 0), ((2, 0), (3, 0), 0), ((0, 3), (0, 3), 0), ((3, 4), (3, 0), 1)]:  # fmt: skip
        a = sample(dtype, shape, 13)
        dim = shape[axis]
        idx = rng.integers(-dim, dim, size=ishape) if dim else np.zeros(ishape, np.int64)
        with cases.case(f"{shape} {ishape} {axis}"):
            want = np.take_along_axis(a, idx, axis=axis)
            check(nx.take_along_axis(a, idx, axis=axis), want, dtype)
            check(nx.take_along_axis(nx.tensor(noncontiguous(a)), nx.tensor(idx.astype(np.int16)),
                                     axis=axis), want, dtype)  # fmt: skip
    with cases.case("default axis -1, unsigned indices"):
        a = sample(dtype, (2, 5), 14)
        idx = np.array([[4, 0], [1, 1]], np.uint8)
        check(nx.take_along_axis(a, idx), np.take_along_axis(a, idx.astype(np.intp), -1), dtype)
    cases.finish()


def test_take_along_axis_errors() -> None:
    x = nx.tensor(np.arange(6).reshape(2, 3))
    with pytest.raises(
        nx.IndexingError,
        match=r"^take_along_axis: index 3 is out of bounds for axis 1 with size 3 "
        r"\(s64\[2\]\[3\] \w+\([^)]*\)\)",
    ):
        nx.take_along_axis(x, nx.tensor([[0], [3]]), axis=1)
    with pytest.raises(
        nx.IndexingError,
        match=r"^take_along_axis: index -3 is out of bounds for axis 0 with size 2",
    ):
        nx.take_along_axis(x, nx.tensor([[-3, 0, 0]]), axis=0)
    with pytest.raises(
        nx.IndexingError, match=r"^take_along_axis: indices must be integers, got f32"
    ):
        nx.take_along_axis(x, nx.tensor([[0.0]]), axis=1)
    with pytest.raises(
        nx.ShapeError,
        match=r"^take_along_axis: indices s64\[2\] \w+\([^)]*\) must have as many dimensions",
    ):
        nx.take_along_axis(x, nx.tensor([0, 1]), axis=1)
    with pytest.raises(
        nx.ShapeError,
        match=r"^take_along_axis: indices s64\[3\]\[1\] .* must broadcast in every "
        r"dimension but axis 1",
    ):
        nx.take_along_axis(x, nx.tensor([[0], [1], [2]]), axis=1)
    with pytest.raises(nx.ShapeError, match=r"^take_along_axis: axis 2 is out of range"):
        nx.take_along_axis(x, nx.tensor([[0]]), axis=2)
    with pytest.raises(nx.ShapeError, match=r"^take_along_axis: needs at least 1 dimension"):
        nx.take_along_axis(nx.tensor(1), nx.tensor(0))


# ---------------------------------------------------------------- dynamic_slice, put_slice


def _clamp_starts(starts: Any, shape: tuple[int, ...], sizes: tuple[int, ...]) -> list[int]:
    """XLA's DynamicSlice / DynamicUpdateSlice rule: start_i := clamp(start_i, 0, dim_i - size_i)."""
    return [int(np.clip(int(s), 0, d - n)) for s, d, n in zip(starts, shape, sizes)]


def _ds_reference(a: np.ndarray, starts: Any, sizes: tuple[int, ...]) -> np.ndarray:
    at = _clamp_starts(starts, a.shape, sizes)
    return a[tuple(slice(s, s + n) for s, n in zip(at, sizes))]


def _put_reference(a: np.ndarray, starts: Any, u: np.ndarray) -> np.ndarray:
    at = _clamp_starts(starts, a.shape, u.shape)
    r = a.copy()
    for pos in np.ndindex(*u.shape):  # element by element, as the definition reads
        r[tuple(s + p for s, p in zip(at, pos))] = u[pos]
    return r


DYNAMIC = [
    ((6,), (2,), (3,)), ((6,), (5,), (3,)), ((6,), (100,), (2,)), ((6,), (-4,), (3,)),
    ((6,), (0,), (6,)), ((6,), (3,), (0,)), ((3, 4), (1, 2), (2, 2)), ((3, 4), (-1, 9), (3, 1)),
    ((3, 4), (2, 0), (2, 4)), ((2, 3, 4), (1, 1, 1), (1, 2, 3)), ((), (), ()), ((0, 3), (5, 1), (0, 2)),
]  # fmt: skip


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_dynamic_slice_clamps_starts(dtype: dtypes.DType) -> None:
    cases = Cases()
    for shape, starts, sizes in DYNAMIC:
        a = sample(dtype, shape, 15)
        want = _ds_reference(a, starts, sizes)
        with cases.case(f"{shape} {starts} {sizes} python ints"):
            check(nx.dynamic_slice(a, list(starts), sizes), want, dtype)
        with cases.case(f"{shape} {starts} {sizes} 0-d tensors"):
            ts = [nx.tensor(s, dtype=nx.int32) for s in starts]
            check(nx.dynamic_slice(nx.tensor(noncontiguous(a)), ts, sizes), want, dtype)
        with cases.case(f"{shape} {starts} {sizes} mixed, 1-d tensor"):
            mixed = [nx.tensor(s) if i % 2 else s for i, s in enumerate(starts)]
            check(nx.dynamic_slice(a, mixed, sizes), want, dtype)
            if starts:
                check(nx.dynamic_slice(a, nx.tensor(list(starts)), sizes), want, dtype)
    with cases.case("unsigned starts past int64"):
        a = sample(dtype, (5,), 16)
        big = nx.tensor(2**64 - 1, dtype=nx.uint64)
        check(nx.dynamic_slice(a, [big], (2,)), a[3:], dtype)
        check(nx.dynamic_slice(a, [nx.tensor(200, dtype=nx.uint8)], (2,)), a[3:], dtype)
    cases.finish()


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_put_slice_clamps_starts(dtype: dtypes.DType) -> None:
    cases = Cases()
    for shape, starts, sizes in DYNAMIC:
        a = sample(dtype, shape, 17)
        u = sample(dtype, sizes, 18)
        want = _put_reference(a, starts, u)
        with cases.case(f"{shape} {starts} {sizes} python ints"):
            check(nx.put_slice(a, list(starts), u), want, dtype)
        with cases.case(f"{shape} {starts} {sizes} 0-d tensors, non-contiguous"):
            ts = [nx.tensor(s, dtype=nx.int64) for s in starts]
            check(nx.put_slice(noncontiguous(a), ts, nx.tensor(noncontiguous(u))), want, dtype)
    with cases.case("the input is left as it was"):
        a = sample(dtype, (4,), 19)
        x = nx.tensor(a.copy())
        nx.put_slice(x, [1], sample(dtype, (2,), 20))
        check(x, a, dtype)
    cases.finish()


def test_put_slice_casts_only_without_loss() -> None:
    x = nx.zeros((2, 3), dtype=nx.float32)
    check(nx.put_slice(x, [0, 1], nx.tensor([[1, 2]], dtype=nx.int8)),
          [[0, 1, 2], [0, 0, 0]], nx.float32)  # fmt: skip
    check(nx.put_slice(x, [1, 0], [[True, False, True]]), [[0, 0, 0], [1, 0, 1]], nx.float32)
    check(nx.put_slice(nx.zeros(3, dtype=nx.uint8), [1], [255, 7]), [0, 255, 7], nx.uint8)
    with pytest.raises(
        nx.DTypeError,
        match=r"^put_slice: update f64\[1\]\[1\] \w+\([^)]*\) cannot be cast to float32 without "
        r"loss \(the result keeps the dtype of f32\[2\]\[3\] \w+\([^)]*\)\)",
    ):
        nx.put_slice(x, [0, 0], nx.tensor([[1.0]], dtype=nx.float64))
    with pytest.raises(nx.DTypeError, match=r"^put_slice: update \[256\] is not exact in uint8"):
        nx.put_slice(nx.zeros(3, dtype=nx.uint8), [0], [256])
    with pytest.raises(nx.DTypeError, match=r"^put_slice: update \[-1\] is not exact in uint8"):
        nx.put_slice(nx.zeros(3, dtype=nx.uint8), [0], [-1])


def test_dynamic_slice_and_put_slice_errors() -> None:
    x = nx.tensor(np.arange(6).reshape(2, 3))
    with pytest.raises(
        nx.ShapeError, match=r"^dynamic_slice: size 3 is larger than axis 0 of s64\[2\]\[3\]"
    ):
        nx.dynamic_slice(x, [0, 0], [3, 1])
    with pytest.raises(nx.ShapeError, match=r"^dynamic_slice: 1 sizes for s64\[2\]\[3\]"):
        nx.dynamic_slice(x, [0, 0], [1])
    with pytest.raises(nx.ShapeError, match=r"^dynamic_slice: negative dimension -1"):
        nx.dynamic_slice(x, [0, 0], [1, -1])
    with pytest.raises(
        nx.IndexingError,
        match=r"^dynamic_slice: 1 start indices for s64\[2\]\[3\] \w+\([^)]*\); "
        r"give one per axis",
    ):
        nx.dynamic_slice(x, [0], [1, 1])
    with pytest.raises(
        nx.IndexingError,
        match=r"^dynamic_slice: start index 1 must be an int or a 0-d integer tensor, got f32 ",
    ):
        nx.dynamic_slice(x, [0, nx.tensor(1.0)], [1, 1])
    with pytest.raises(
        nx.IndexingError, match=r"^dynamic_slice: start index 0 must be an int .* got s64\[1\]"
    ):
        nx.dynamic_slice(x, [nx.tensor([0]), 0], [1, 1])
    with pytest.raises(nx.IndexingError, match=r"^dynamic_slice: start index 0 must be .* got 0.5"):
        nx.dynamic_slice(x, [0.5, 0], [1, 1])
    with pytest.raises(
        nx.IndexingError, match=r"^dynamic_slice: start_indices must be a sequence or a 1-d tensor"
    ):
        nx.dynamic_slice(x, nx.tensor([[0, 0]]), [1, 1])
    with pytest.raises(nx.IndexingError, match=r"^dynamic_slice: start_indices must be a sequence"):
        nx.dynamic_slice(x, 0, [1, 1])
    with pytest.raises(
        nx.ShapeError,
        match=r"^put_slice: update s64\[3\] \w+\([^)]*\) must have the dimensions of "
        r"s64\[2\]\[3\] \w+\([^)]*\), each no larger",
    ):
        nx.put_slice(x, [0, 0], nx.tensor([1, 2, 3]))
    with pytest.raises(nx.ShapeError, match=r"^put_slice: update s64\[1\]\[4\] .* each no larger"):
        nx.put_slice(x, [0, 0], nx.zeros((1, 4), dtype=nx.int64))
    with pytest.raises(nx.IndexingError, match=r"^put_slice: 3 start indices for s64\[2\]\[3\]"):
        nx.put_slice(x, [0, 0, 0], nx.zeros((1, 1), dtype=nx.int64))


# ---------------------------------------------------------------- indexed_add, indexed_put


def _moved(a: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    return np.moveaxis(a, list(axes), list(range(len(axes))))


def _add_reference(a: np.ndarray, idx: np.ndarray, u: np.ndarray, axes: tuple[int, ...],
                   dtype: dtypes.DType) -> np.ndarray:  # fmt: skip
    # np.add.at, in float64 / complex128 for inexact dtypes, rounded once at the end
    wide = {"f": np.float64, "c": np.complex128}.get(dtype.kind, a.dtype)
    r = a.astype(np.float32).astype(wide) if dtype is dtypes.bfloat16 else a.astype(wide)
    uu = u.astype(np.float32).astype(wide) if dtype is dtypes.bfloat16 else u.astype(wide)
    v = _moved(r, axes)
    np.add.at(v, tuple(idx[:, i] for i in range(len(axes))), uu)
    return r.astype(a.dtype)


def _put_rows_reference(a: np.ndarray, idx: np.ndarray, u: np.ndarray,
                        axes: tuple[int, ...]) -> np.ndarray:  # fmt: skip
    # row by row, in order: a later row overwrites an earlier one (last wins)
    r = a.copy()
    v = _moved(r, axes)
    for row in range(idx.shape[0]):
        v[tuple(int(i) for i in idx[row])] = u[row]
    return r


SCATTER = [
    # x shape, indices (rows), axes (None: the first k)
    ((5,), [[0], [2], [0], [4], [0]], None),
    ((5,), [[-1], [4], [1]], (0,)),
    ((3, 4), [[0, 1], [2, 3], [0, 1], [1, 0]], None),
    ((3, 4), [[1], [1], [2]], None),
    ((3, 4), [[3], [0], [3], [-4]], (1,)),
    ((2, 3, 4), [[1, 0], [3, 2], [1, 0]], (2, 1)),
    ((2, 3, 4), [[0, 2, 3], [1, 0, 0], [0, 2, 3]], None),
    ((2, 3, 4), [[2], [0]], (-2,)),
    ((5,), np.zeros((0, 1), np.int64), None),
    ((2, 0), [[1], [1]], None),
    ((1,), [[0]] * 6, None),
]  # fmt: skip


@pytest.mark.parametrize("dtype", NUMERIC, ids=ids)
def test_indexed_add_sums_duplicates(dtype: dtypes.DType) -> None:
    cases = Cases()
    for shape, rows, axes in SCATTER:
        a = sample(dtype, shape, 21)
        idx = np.asarray(rows, dtype=np.int64).reshape(-1, np.shape(rows)[1])
        ax = tuple(range(idx.shape[1])) if axes is None else tuple(a_ % len(shape) for a_ in axes)
        rest = tuple(d for i, d in enumerate(shape) if i not in ax)
        u = sample(dtype, (idx.shape[0],) + rest, 22)
        want = _add_reference(a, idx, u, ax, dtype)
        with cases.case(f"{shape} {idx.tolist()} {axes}"):
            got = nx.indexed_add(a, nx.tensor(idx), u, axes=axes)
            check(got, want, dtype, scale=float(idx.shape[0] + 1), op="indexed_add")
            got = nx.indexed_add(nx.tensor(noncontiguous(a)), nx.tensor(idx.astype(np.int32)),
                                 nx.tensor(noncontiguous(u)), axes=axes)  # fmt: skip
            check(got, want, dtype, scale=float(idx.shape[0] + 1), op="indexed_add")
    with cases.case("updates broadcast; the input is left as it was"):
        a = sample(dtype, (3, 2), 23)
        x = nx.tensor(a.copy())
        idx = np.array([[0], [2], [0]])
        u1 = sample(dtype, (2,), 24)
        got = nx.indexed_add(x, idx, u1)
        check(got, _add_reference(a, idx, np.broadcast_to(u1, (3, 2)), (0,), dtype), dtype,
              scale=4.0, op="indexed_add")  # fmt: skip
        check(x, a, dtype)
    cases.finish()


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_indexed_put_last_wins(dtype: dtypes.DType) -> None:
    cases = Cases()
    for shape, rows, axes in SCATTER:
        a = sample(dtype, shape, 25)
        idx = np.asarray(rows, dtype=np.int64).reshape(-1, np.shape(rows)[1])
        ax = tuple(range(idx.shape[1])) if axes is None else tuple(a_ % len(shape) for a_ in axes)
        rest = tuple(d for i, d in enumerate(shape) if i not in ax)
        u = sample(dtype, (idx.shape[0],) + rest, 26)
        want = _put_rows_reference(a, idx, u, ax)
        with cases.case(f"{shape} {idx.tolist()} {axes}"):
            check(nx.indexed_put(a, nx.tensor(idx), u, axes=axes), want, dtype)
            check(nx.indexed_put(nx.tensor(noncontiguous(a)), nx.tensor(idx.astype(np.uint16) if
                  (idx >= 0).all() else idx), nx.tensor(noncontiguous(u)), axes=axes), want, dtype)  # fmt: skip
    with cases.case("many duplicates: the last row wins"):
        a = sample(dtype, (4,), 27)
        rng = np.random.default_rng(5)
        idx = rng.integers(0, 4, size=(40, 1))
        u = sample(dtype, (40,), 28)
        check(nx.indexed_put(a, idx, u), _put_rows_reference(a, idx, u, (0,)), dtype)
    cases.finish()


def test_indexed_add_integer_overflow_wraps() -> None:
    a = np.array([250, 0], np.uint8)
    idx = np.array([[0], [0], [1]])
    u = np.array([3, 5, 1], np.uint8)
    check(nx.indexed_add(a, idx, u), _add_reference(a, idx, u, (0,), nx.uint8), nx.uint8)
    assert nx.indexed_add(a, idx, u).tolist() == [2, 1]


def test_indexed_add_and_put_errors() -> None:
    x = nx.zeros((2, 3), dtype=nx.float32)
    d = r"\(f32\[2\]\[3\] \w+\([^)]*\)\)"
    with pytest.raises(
        nx.IndexingError,
        match=rf"^indexed_add: index 2 is out of bounds for axis 0 with size 2 {d}",
    ):
        nx.indexed_add(x, nx.tensor([[0], [2]]), nx.ones((2, 3)))
    with pytest.raises(
        nx.IndexingError, match=r"^indexed_put: index -4 is out of bounds for axis 1 with size 3 "
    ):
        nx.indexed_put(x, nx.tensor([[0, -4]]), [1.0])
    with pytest.raises(
        nx.IndexingError, match=r"^indexed_put: index 3 is out of bounds for axis 1 with size 3"
    ):
        nx.indexed_put(x, nx.tensor([[3, 0]]), [1.0], axes=(1, 0))
    with pytest.raises(nx.IndexingError, match=r"^indexed_add: indices must be integers, got f32"):
        nx.indexed_add(x, nx.tensor([[0.0]]), nx.ones((1, 3)))
    with pytest.raises(
        nx.ShapeError,
        match=r"^indexed_add: indices must be 2-d, \(n, number of indexed axes\), got s64\[2\]",
    ):
        nx.indexed_add(x, nx.tensor([0, 1]), nx.ones((2, 3)))
    with pytest.raises(
        nx.ShapeError,
        match=r"^indexed_put: indices s64\[1\]\[3\] .* index 3 axes but f32\[2\]\[3\]",
    ):
        nx.indexed_put(x, nx.tensor([[0, 0, 0]]), [1.0])
    with pytest.raises(
        nx.ShapeError,
        match=r"^indexed_put: indices s64\[1\]\[1\] .* have 1 columns but axes "
        r"\(0, 1\) name 2 axes",
    ):
        nx.indexed_put(x, nx.tensor([[0]]), [1.0], axes=(0, 1))
    with pytest.raises(nx.ShapeError, match=r"^indexed_put: repeated axis in \(1, -1\)"):
        nx.indexed_put(x, nx.tensor([[0, 0]]), [1.0], axes=(1, -1))
    with pytest.raises(nx.ShapeError, match=r"^indexed_put: axis 2 is out of range"):
        nx.indexed_put(x, nx.tensor([[0]]), [1.0, 1.0], axes=(2,))
    with pytest.raises(
        nx.ShapeError,
        match=r"^indexed_add: updates f32\[2\]\[2\] \w+\([^)]*\) must have shape \(2, 3\) \(one "
        r"row per index",
    ):
        nx.indexed_add(x, nx.tensor([[0], [1]]), nx.ones((2, 2)))
    with pytest.raises(
        nx.DTypeError,
        match=r"^indexed_add: updates f64\[1\]\[3\] \w+\([^)]*\) cannot be cast to float32 "
        r"without loss",
    ):
        nx.indexed_add(x, nx.tensor([[0]]), nx.ones((1, 3), dtype=nx.float64))
    with pytest.raises(nx.DTypeError, match=r"^indexed_put: updates \[1.5\] is not exact in int32"):
        nx.indexed_put(nx.zeros(2, dtype=nx.int32), nx.tensor([[0]]), [1.5])
    with pytest.raises(
        nx.DTypeError,
        match=r"^indexed_add: cannot add to pred\[2\] \w+\([^)]*\); bool has no "
        r"addition",
    ):
        nx.indexed_add(nx.zeros(2, dtype=nx.bool_), nx.tensor([[0]]), [True])


def test_traced_index_into_a_captured_tensor() -> None:
    # jit over the index alone: the captured tensor joins the index's trace (take, getitem
    # with an index tensor, and a mixed key), on every compiler serving the backend
    x = nx.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    i = nx.tensor(np.array([2, -1, 0], np.int64))
    want_take = np.take(np.arange(12, dtype=np.float32), [2, -1, 0])
    want_rows = np.arange(12, dtype=np.float32).reshape(3, 4)[[2, -1, 0], 1:3]
    for name in compilers_serving(nx.get_default_backend()):
        got = nx.jit(lambda k: nx.take(x, k), compiler=name)(i)
        check(got, want_take, nx.float32)
        got = nx.jit(lambda k: x[k, 1:3], compiler=name)(i)
        check(got, want_rows, nx.float32)
        assert got.backend is x.backend
