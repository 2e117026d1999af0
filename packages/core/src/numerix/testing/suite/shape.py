"""Shape ops against numpy: reshape, transpose, broadcast_to, expand_dims, squeeze,
concatenate, stack, flip, over every dtype, with edge shapes and non-contiguous inputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import _dispatch, dtypes
from numerix.testing.oracle import (
    ALL,
    ALL_PAIRS,
    Cases,
    check,
    expected_promotion,
    ids,
    noncontiguous,
    pair_ids,
    sample,
)


def run(cases: Cases, label: str, fn: Any, ref: Any, a: np.ndarray, dtype: dtypes.DType) -> None:
    """``fn`` on a tensor of ``a`` and on a non-contiguous numpy view of it, against ``ref``."""
    with cases.case(label):
        want = ref(a)
        check(fn(nx.tensor(a)), want, dtype)
        check(fn(noncontiguous(a)), want, dtype)


RESHAPES = [
    ((2, 3, 4), (24,)), ((2, 3, 4), (4, -1)), ((2, 3, 4), (-1,)), ((2, 3, 4), (2, 3, 4)),
    ((2, 3, 4), (3, 2, 2, 2)), ((2, 3, 4), [6, 4]), ((2, 3, 4), 24), ((2, 3, 4), (-1, 2, 3)),
    ((), (1, 1)), ((), ()), ((), (-1,)), ((1,), ()), ((0,), (0, 5)), ((2, 0), (0,)),
    ((2, 0), (5, 0, 7)), ((2, 0), (0, 3)), ((6,), (3, -1)),
]  # fmt: skip


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_reshape(dtype: dtypes.DType) -> None:
    cases = Cases()
    for src, shape in RESHAPES:
        a = sample(dtype, src, 1)
        np_shape = tuple(shape) if isinstance(shape, list) else shape
        run(cases, f"{src}->{shape}", lambda x, s=shape: nx.reshape(x, s), lambda a, s=np_shape: a.reshape(s),
            a, dtype)  # fmt: skip
    a = sample(dtype, (2, 6), 2)
    check(nx.tensor(a).reshape(3, 4), a.reshape(3, 4), dtype)
    check(nx.tensor(a).reshape((4, -1)), a.reshape(4, -1), dtype)
    check(nx.tensor(a).flatten(), a.reshape(-1), dtype)
    check(nx.ravel(a.T), a.T.reshape(-1), dtype)  # C order of the transposed values
    cases.finish()


def test_reshape_errors() -> None:
    x = nx.ones((2, 3))
    with pytest.raises(
        nx.ShapeError,
        match=r"^reshape: cannot reshape f32\[2\]\[3\] \w+\([^)]*\) "
        r"\(6 elements\) to \(4, 2\) \(8 elements\); the sizes "
        r"must match",
    ):
        nx.reshape(x, (4, 2))
    with pytest.raises(
        nx.ShapeError,
        match=r"^reshape: cannot reshape f32\[2\]\[3\] \w+\([^)]*\) "
        r"\(6 elements\) to \(4, -1\): the -1 dimension has no "
        r"whole size",
    ):
        nx.reshape(x, (4, -1))
    with pytest.raises(
        nx.ShapeError, match=r"^reshape: only one dimension can be -1, got \(-1, -1\)"
    ):
        nx.reshape(x, (-1, -1))
    with pytest.raises(nx.ShapeError, match=r"^reshape: negative dimension in \(-2, -3\)"):
        nx.reshape(x, (-2, -3))
    with pytest.raises(
        nx.ShapeError,
        match=r"^reshape: shape must be an int or a tuple of ints, "
        r"got \(2.0, 3\)",
    ):
        nx.reshape(x, (2.0, 3))
    with pytest.raises(
        nx.ShapeError, match=r"^reshape: cannot reshape f32\[2\]\[0\] .* to \(-1, 0\)"
    ):
        nx.reshape(nx.ones((2, 0)), (-1, 0))  # numpy refuses it too: -1 is ambiguous


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_transpose(dtype: dtypes.DType) -> None:
    cases = Cases()
    for shape, axes in [((2, 3, 4), None), ((2, 3, 4), (1, 0, 2)), ((2, 3, 4), (-1, 0, 1)),
                        ((2, 3, 4), [2, 1, 0]), ((2, 3), None), ((5,), None), ((), None),
                        ((), ()), ((2, 0), (1, 0)), ((2, 3, 4), (0, 1, 2))]:  # fmt: skip
        a = sample(dtype, shape, 3)
        run(cases, f"{shape} {axes}", lambda x, ax=axes: nx.transpose(x, ax),
            lambda a, ax=axes: np.transpose(a, ax), a, dtype)  # fmt: skip
    a = sample(dtype, (2, 3, 4), 4)
    check(nx.tensor(a).transpose(2, 0, 1), a.transpose(2, 0, 1), dtype)
    check(nx.tensor(a).transpose(), a.transpose(), dtype)
    check(nx.permute_dims(a, (1, 2, 0)), np.transpose(a, (1, 2, 0)), dtype)
    check(nx.matrix_transpose(a), np.swapaxes(a, -1, -2), dtype)
    check(nx.tensor(a).mT, np.swapaxes(a, -1, -2), dtype)
    check(nx.tensor(a[0]).T, a[0].T, dtype)
    cases.finish()


def test_transpose_errors() -> None:
    x = nx.ones((2, 3, 4))
    with pytest.raises(
        nx.ShapeError,
        match=r"^transpose: axes \(0, 0, 1\) are not a permutation of "
        r"the 3 axes of f32\[2\]\[3\]\[4\]",
    ):
        nx.transpose(x, (0, 0, 1))
    with pytest.raises(nx.ShapeError, match=r"^transpose: axes \(1, 0\) are not a permutation"):
        nx.transpose(x, (1, 0))
    with pytest.raises(
        nx.ShapeError,
        match=r"^transpose: axis 3 is out of range for a tensor of shape "
        r"\(2, 3, 4\)",
    ):
        nx.transpose(x, (0, 1, 3))
    with pytest.raises(
        nx.ShapeError, match=r"^T: .T is defined for 2-d tensors, got f32\[2\]\[3\]\[4\]"
    ):
        x.T  # noqa: B018
    with pytest.raises(nx.ShapeError, match=r"^matrix_transpose: needs at least 2 dimensions"):
        nx.ones((3,)).mT  # noqa: B018


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_broadcast_to(dtype: dtypes.DType) -> None:
    cases = Cases()
    for src, shape in [((), (2, 3)), ((3, 1), (3, 4)), ((1, 4), (3, 4)), ((3,), (2, 3)),
                       ((2, 3), (2, 3)), ((1,), (0,)), ((2, 1), (2, 0)), ((), ()), ((1, 1), (5, 2, 3)),
                       ((4,), [2, 2, 4]), ((2, 1, 3), (2, 5, 3))]:  # fmt: skip
        a = sample(dtype, src, 5)
        np_shape = tuple(shape)
        run(cases, f"{src}->{shape}", lambda x, s=shape: nx.broadcast_to(x, s),
            lambda a, s=np_shape: np.broadcast_to(a, s), a, dtype)  # fmt: skip
    a, b = sample(dtype, (3, 1), 6), sample(dtype, (1, 4), 7)
    for got, want in zip(
        nx.broadcast_arrays(a, nx.tensor(b)), np.broadcast_arrays(a, b), strict=True
    ):
        check(got, want, dtype)
    cases.finish()


def test_broadcast_to_errors() -> None:
    with pytest.raises(
        nx.ShapeError,
        match=r"^broadcast_to: shapes \(3,\) and \(4,\) cannot be "
        r"broadcast together",
    ):
        nx.broadcast_to(nx.ones((3,)), (4,))
    with pytest.raises(
        nx.ShapeError,
        match=r"^broadcast_to: cannot broadcast f32\[3\] \w+\([^)]*\) "
        r"to shape \(3, 1\)",
    ):
        nx.broadcast_to(nx.ones((3,)), (3, 1))
    with pytest.raises(
        nx.ShapeError,
        match=r"^broadcast_to: cannot broadcast f32\[2\]\[3\] "
        r"\w+\([^)]*\) to shape \(3,\)",
    ):
        nx.broadcast_to(nx.ones((2, 3)), (3,))
    with pytest.raises(nx.ShapeError, match=r"^broadcast_to: negative dimension -1"):
        nx.broadcast_to(nx.ones((3,)), (-1, 3))


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_expand_dims_squeeze(dtype: dtypes.DType) -> None:
    cases = Cases()
    for shape, axis in [((2, 3), 0), ((2, 3), 1), ((2, 3), 2), ((2, 3), -1), ((2, 3), -3),
                        ((2, 3), (0, 3)), ((2, 3), (-1, 0)), ((), 0), ((), (0, 1)), ((0,), 1)]:  # fmt: skip
        a = sample(dtype, shape, 8)
        run(cases, f"expand_dims {shape} {axis}", lambda x, ax=axis: nx.expand_dims(x, ax),
            lambda a, ax=axis: np.expand_dims(a, ax), a, dtype)  # fmt: skip
    for shape, axis in [((1, 3, 1), None), ((1, 3, 1), 0), ((1, 3, 1), -1), ((1, 3, 1), (0, 2)),
                        ((1, 1), None), ((1,), None), ((), None), ((3, 0, 1), 2), ((2, 3), None),
                        ((1, 1, 1), (-3, 1))]:  # fmt: skip
        a = sample(dtype, shape, 9)
        run(cases, f"squeeze {shape} {axis}", lambda x, ax=axis: nx.squeeze(x, ax),
            lambda a, ax=axis: np.squeeze(a, ax), a, dtype)  # fmt: skip
    check(nx.tensor(sample(dtype, (1, 2), 10)).squeeze(0), sample(dtype, (1, 2), 10)[0], dtype)
    cases.finish()


def test_expand_dims_squeeze_errors() -> None:
    with pytest.raises(
        nx.ShapeError,
        match=r"^squeeze: axis 1 of f32\[1\]\[3\] \w+\([^)]*\) has "
        r"size 3, not 1",
    ):
        nx.squeeze(nx.ones((1, 3)), 1)
    with pytest.raises(
        nx.ShapeError,
        match=r"^squeeze: axis 2 is out of range for a tensor of shape "
        r"\(1, 3\)",
    ):
        nx.squeeze(nx.ones((1, 3)), 2)
    with pytest.raises(
        nx.ShapeError,
        match=r"^expand_dims: axis 3 is out of range for a tensor of 3 "
        r"dimensions",
    ):
        nx.expand_dims(nx.ones((1, 3)), 3)
    with pytest.raises(nx.ShapeError, match=r"^expand_dims: repeated axis in \(0, 0\)"):
        nx.expand_dims(nx.ones((3,)), (0, 0))


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_concatenate_stack(dtype: dtypes.DType) -> None:
    cases = Cases()
    for shapes, axis in [([(2, 3), (4, 3)], 0), ([(2, 3), (2, 1), (2, 0)], 1), ([(2, 3), (2, 2)], -1),
                         ([(3,)], 0), ([(0,), (2,)], 0), ([(2, 3), (1, 4)], None), ([(), (2,)], None),
                         ([(2, 0), (2, 0)], 0), ([(1, 2, 3)] * 3, 2)]:  # fmt: skip
        arrs = [sample(dtype, s, 11 + i) for i, s in enumerate(shapes)]
        with cases.case(f"concatenate {shapes} {axis}"):
            want = np.concatenate(arrs, axis=axis)
            check(nx.concatenate([nx.tensor(a) for a in arrs], axis=axis), want, dtype)
            check(nx.concat(tuple(noncontiguous(a) for a in arrs), axis), want, dtype)
    for shape, n, axis in [((2, 3), 3, 0), ((2, 3), 2, 1), ((2, 3), 2, 2), ((2, 3), 2, -1),
                           ((2, 3), 2, -3), ((), 4, 0), ((0,), 3, 1), ((3,), 1, 0)]:  # fmt: skip
        arrs = [sample(dtype, shape, 20 + i) for i in range(n)]
        with cases.case(f"stack {shape} x{n} {axis}"):
            want = np.stack(arrs, axis=axis)
            check(nx.stack([nx.tensor(a) for a in arrs], axis=axis), want, dtype)
            check(nx.stack([noncontiguous(a) for a in arrs], axis), want, dtype)
    cases.finish()


@pytest.mark.parametrize("pair", ALL_PAIRS, ids=pair_ids)
def test_concatenate_stack_promote(pair: tuple[dtypes.DType, dtypes.DType]) -> None:
    da, db = pair
    a, b = sample(da, (2, 3), 30), sample(db, (1, 3), 31)
    p = expected_promotion(da, db)
    if p is None:
        with pytest.raises(nx.DTypeError, match=rf"^concatenate: cannot promote {da} with {db}"):
            nx.concatenate([nx.tensor(a), nx.tensor(b)])
        return
    via = [x.astype(np.float32) if x.dtype == dtypes.bfloat16.numpy_dtype else x for x in (a, b)]
    want = np.concatenate([x.astype(p.numpy_dtype) for x in via])
    check(nx.concatenate([nx.tensor(a), nx.tensor(b)]), want, p)
    check(nx.stack([nx.tensor(a[0]), nx.tensor(b[0])]), want[[0, 2]], p)


def test_concatenate_stack_errors() -> None:
    with pytest.raises(
        nx.ShapeError,
        match=r"^concatenate: shapes must match except on axis 0, got "
        r"\(2, 3\), \(2, 4\)",
    ):
        nx.concatenate([nx.ones((2, 3)), nx.ones((2, 4))])
    with pytest.raises(
        nx.ShapeError,
        match=r"^concatenate: tensors must have the same number of "
        r"dimensions, got f32\[2\]\[3\] \w+\([^)]*\), f32\[3\]",
    ):
        nx.concatenate([nx.ones((2, 3)), nx.ones((3,))])
    with pytest.raises(
        nx.ShapeError, match=r"^concatenate: cannot concatenate 0-d tensors; use stack"
    ):
        nx.concatenate([nx.ones(()), nx.ones(())])
    with pytest.raises(
        nx.ShapeError,
        match=r"^concatenate: axis 2 is out of range for a tensor of "
        r"shape \(2, 3\)",
    ):
        nx.concatenate([nx.ones((2, 3)), nx.ones((2, 3))], axis=2)
    with pytest.raises(nx.ShapeError, match=r"^concatenate: expects a non-empty list or tuple"):
        nx.concatenate([])
    with pytest.raises(
        nx.ShapeError,
        match=r"^stack: tensors must have the same shape, got \(2, 3\), "
        r"\(3, 2\)",
    ):
        nx.stack([nx.ones((2, 3)), nx.ones((3, 2))])
    with pytest.raises(
        nx.ShapeError,
        match=r"^stack: axis 3 is out of range for a tensor of 3 "
        r"dimensions",
    ):
        nx.stack([nx.ones((2, 3))], axis=3)
    with pytest.raises(nx.ShapeError, match=r"^stack: expects a non-empty list or tuple"):
        nx.stack(nx.ones((2, 3)))


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_flip(dtype: dtypes.DType) -> None:
    cases = Cases()
    for shape, axis in [((2, 3, 4), None), ((2, 3, 4), 0), ((2, 3, 4), -1), ((2, 3, 4), (0, 2)),
                        ((5,), None), ((), None), ((2, 0), 1), ((2, 0), None), ((2, 3), ())]:  # fmt: skip
        a = sample(dtype, shape, 40)
        run(cases, f"{shape} {axis}", lambda x, ax=axis: nx.flip(x, axis=ax),
            lambda a, ax=axis: np.flip(a, axis=ax), a, dtype)  # fmt: skip
    cases.finish()


def test_flip_errors() -> None:
    with pytest.raises(
        nx.ShapeError,
        match=r"^flip: axis 2 is out of range for a tensor of shape "
        r"\(2, 3\)",
    ):
        nx.flip(nx.ones((2, 3)), axis=2)
    with pytest.raises(nx.ShapeError, match=r"^flip: axis 0 is out of range for a 0-d tensor"):
        nx.flip(nx.ones(()), axis=0)


# ---------------------------------------------------------------- pad


def _pad_reference(a: np.ndarray, value: Any, config: Any) -> np.ndarray:
    """XLA's Pad written out one axis at a time: output position j of an axis reads
    source position p = j - low of the interior-padded axis, which holds element
    p // (interior + 1) when p is in range and a multiple of interior + 1, else value."""
    r = a
    for ax, (lo, hi, interior) in enumerate(config):
        d = r.shape[ax]
        n = d + max(d - 1, 0) * interior
        p = np.arange(lo + hi + n) - lo
        hit = (p >= 0) & (p < n) & (p % (interior + 1) == 0)
        view = [1] * r.ndim
        view[ax] = hit.size
        if d == 0:  # nothing to read: every position is padding
            r = np.broadcast_to(np.asarray(value, dtype=a.dtype), r.shape[:ax] + (hit.size,)
                                + r.shape[ax + 1 :])  # fmt: skip
            continue
        src = np.take(r, np.where(hit, p // (interior + 1), 0).astype(np.intp), axis=ax)
        r = np.where(hit.reshape(view), src, np.asarray(value, dtype=a.dtype))
    return r.astype(a.dtype)


PAD_WIDTHS = [
    ((2, 3), 1), ((2, 3), (1, 2)), ((2, 3), ((0, 1), (2, 0))), ((2, 3), ((1,), (2,))),
    ((2, 3), [[3, 0]]), ((2, 3), 0), ((4,), (0, 3)), ((), 2), ((0,), 2), ((2, 0), ((1, 1), (0, 2))),
    ((1, 1, 2), ((0, 0), (2, 0), (0, 1))),
]  # fmt: skip


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_pad_matches_numpy(dtype: dtypes.DType) -> None:
    cases = Cases()
    value = {"b": True, "i": -3, "u": 7, "f": 2.5, "c": 1 - 2j}[dtype.kind]
    for shape, width in PAD_WIDTHS:
        a = sample(dtype, shape, 5)
        for v in (0, value):
            want = np.pad(a, width, constant_values=np.asarray(v, dtype=a.dtype))
            run(cases, f"{shape} {width} {v}",
                lambda x, w=width, v=v: nx.pad(x, w, constant_values=v), lambda a, w=want: w,
                a, dtype)  # fmt: skip
    a = sample(dtype, (2, 3), 6)
    with cases.case("0-d tensor pad value"):
        v = nx.tensor(np.asarray(value, dtype=a.dtype))
        check(nx.pad(a, 1, constant_values=v), np.pad(a, 1, constant_values=value), dtype)
    cases.finish()


PAD_CONFIGS = [
    ((5,), [(1, 2, 0)]), ((5,), [(0, 0, 2)]), ((5,), [(-1, -2, 0)]), ((5,), [(-2, 1, 1)]),
    ((5,), [(-6, 2, 1)]), ((5,), [(3, -9, 1)]), ((5,), [(-3, -6, 1)]), ((5,), [(-5, 0, 0)]),
    ((2, 3), [(1, -1, 1), (-2, 2, 2)]), ((2, 3), [(0, 0, 0), (0, 0, 0)]),
    ((1,), [(2, -1, 5)]), ((0,), [(1, 2, 3)]), ((0, 2), [(-0, 1, 4), (-1, -1, 0)]), ((), []),
    ((2, 2, 3), [(0, 1, 1), (-1, 0, 0), (1, 1, 0)]),
]  # fmt: skip


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_pad_general_negative_and_interior(dtype: dtypes.DType) -> None:
    cases = Cases()
    value = {"b": True, "i": -3, "u": 7, "f": -1.5, "c": 2 + 1j}[dtype.kind]
    for shape, config in PAD_CONFIGS:
        a = sample(dtype, shape, 7)
        want = _pad_reference(a, value, config)
        run(cases, f"{shape} {config}", lambda x, c=config: nx.pad_general(x, c, value=value),
            lambda a, w=want: w, a, dtype)  # fmt: skip
        with cases.case(f"{shape} {config} default value"):
            check(nx.pad_general(a, config), _pad_reference(a, 0, config), dtype)
    cases.finish()


def test_pad_reference_agrees_with_numpy() -> None:
    # the reference above is itself checked where numpy can answer
    a = np.arange(6).reshape(2, 3)
    for width in [((1, 2), (0, 3)), ((0, 0), (4, 1))]:
        config = [(lo, hi, 0) for lo, hi in width]
        np.testing.assert_array_equal(_pad_reference(a, -1, config),
                                      np.pad(a, width, constant_values=-1))  # fmt: skip
    np.testing.assert_array_equal(_pad_reference(a, 0, [(0, 0, 0), (0, 0, 1)]),
                                  [[0, 0, 1, 0, 2], [3, 0, 4, 0, 5]])  # fmt: skip


def test_pad_errors() -> None:
    x = nx.tensor([1, 2, 3], dtype=nx.int8)
    with pytest.raises(nx.ShapeError, match=r"^pad: pad_width must be >= 0, got -1; crop with"):
        nx.pad(x, -1)
    with pytest.raises(
        nx.ShapeError, match=r"^pad: pad_width \(\(1, 2\), \(3, 4\)\) is not an int, a \(before, "
    ):
        nx.pad(x, ((1, 2), (3, 4)))
    with pytest.raises(nx.ShapeError, match=r"^pad: pad_width must be an int or pairs of ints"):
        nx.pad(x, 1.5)
    with pytest.raises(nx.ArgumentError, match=r"^pad: mode 'reflect' is not supported"):
        nx.pad(x, 1, mode="reflect")
    with pytest.raises(nx.ArgumentError, match=r"^pad: constant_values must be one scalar"):
        nx.pad(x, 1, constant_values=(1, 2))
    with pytest.raises(
        nx.DTypeError,
        match=r"^pad: pad value 300 is not exact in int8 \(the result keeps the dtype of "
        r"s8\[3\] \w+\([^)]*\)\)",
    ):
        nx.pad(x, 1, constant_values=300)
    with pytest.raises(nx.DTypeError, match=r"^pad: pad value 0.5 is not exact in int8"):
        nx.pad(x, 1, constant_values=0.5)
    with pytest.raises(nx.DTypeError, match=r"^pad: pad value 2 is not exact in bool"):
        nx.pad(nx.tensor([True]), 1, constant_values=2)
    with pytest.raises(nx.DTypeError, match=r"^pad: pad value 1j is not exact in float32"):
        nx.pad(nx.tensor([1.0]), 1, constant_values=1j)
    with pytest.raises(
        nx.DTypeError,
        match=r"^pad: pad value s16 \w+\([^)]*\) cannot be cast to int8 without loss",
    ):
        nx.pad(x, 1, constant_values=nx.tensor(1, dtype=nx.int16))
    with pytest.raises(
        nx.ShapeError, match=r"^pad: the pad value must be a scalar \(0-d\), got s8\[1\]"
    ):
        nx.pad(x, 1, constant_values=nx.tensor([1], dtype=nx.int8))
    # exact values of another kind are taken: 1.0 pads int8, 0 pads bool
    check(nx.pad(x, 1, constant_values=1.0), np.pad(np.int8([1, 2, 3]), 1, constant_values=1),
          nx.int8)  # fmt: skip
    check(nx.pad(nx.tensor([True]), 1), np.array([False, True, False]), nx.bool_)
    with pytest.raises(
        nx.ShapeError,
        match=r"^pad_general: padding \(-2, -2, 0\) crops axis 0 of s8\[3\] \w+\([^)]*\) to a "
        r"negative size \(-1\)",
    ):
        nx.pad_general(x, [(-2, -2, 0)])
    with pytest.raises(
        nx.ShapeError, match=r"^pad_general: interior padding must be >= 0, got \(0, 0, -1\)"
    ):
        nx.pad_general(x, [(0, 0, -1)])
    with pytest.raises(
        nx.ShapeError,
        match=r"^pad_general: config must hold one \(low, high, interior\) triple per axis of "
        r"s8\[3\]",
    ):
        nx.pad_general(x, [(0, 0, 0), (0, 0, 0)])
    with pytest.raises(nx.ShapeError, match=r"^pad_general: each config entry must be a \(low, "):
        nx.pad_general(x, [(0, 0)])
    with pytest.raises(nx.ShapeError, match=r"^pad_general: each config entry must be a \(low, "):
        nx.pad_general(x, [(0, 1.0, 0)])


# ---------------------------------------------------------------- tile, repeat


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_tile_matches_numpy(dtype: dtypes.DType) -> None:
    cases = Cases()
    for shape, reps in [((3,), 2), ((3,), (2, 2)), ((2, 3), 2), ((2, 3), (1, 3)), ((2, 3), (2, 1, 2)),
                        ((2, 1, 3), (2,)), ((), 3), ((), (2, 2)), ((0,), 3), ((2, 3), 0),
                        ((2, 3), (0, 2)), ((2, 3), ()), ((3,), [1])]:  # fmt: skip
        a = sample(dtype, shape, 8)
        run(cases, f"{shape} {reps}", lambda x, r=reps: nx.tile(x, r),
            lambda a, r=reps: np.tile(a, r), a, dtype)  # fmt: skip
    cases.finish()


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_repeat_matches_numpy(dtype: dtypes.DType) -> None:
    cases = Cases()
    for shape, reps, axis in [((3,), 2, None), ((2, 3), 2, None), ((2, 3), 3, 0), ((2, 3), 2, -1),
                              ((2, 3), [1, 0, 2], 1), ((2, 3), (3, 1), 0), ((2, 3), [2], 1),
                              ((2, 3), 0, 1), ((), 3, None), ((0,), 2, 0), ((2, 0), 3, 1),
                              ((2, 3), [0, 0, 0], 1), ((1, 2, 2), [2, 1], 2)]:  # fmt: skip
        a = sample(dtype, shape, 9)
        run(cases, f"{shape} {reps} {axis}", lambda x, r=reps, ax=axis: nx.repeat(x, r, axis=ax),
            lambda a, r=reps, ax=axis: np.repeat(a, r, axis=ax), a, dtype)  # fmt: skip
    cases.finish()


def test_tile_and_repeat_errors() -> None:
    x = nx.ones((2, 3))
    with pytest.raises(nx.ShapeError, match=r"^tile: reps must be >= 0, got \(1, -1\)"):
        nx.tile(x, (1, -1))
    with pytest.raises(nx.ShapeError, match=r"^tile: reps must be an int or a sequence of ints"):
        nx.tile(x, 1.5)
    with pytest.raises(nx.ShapeError, match=r"^repeat: repeats must be >= 0, got -2"):
        nx.repeat(x, -2)
    with pytest.raises(
        nx.ShapeError,
        match=r"^repeat: repeats has 2 counts but axis 1 of f32\[2\]\[3\] \w+\([^)]*\) has 3 "
        r"elements",
    ):
        nx.repeat(x, [1, 2], axis=1)
    # repeats as an integer tensor: its values read eagerly, numpy's result
    counts = nx.tensor(np.array([1, 0, 2], np.int32), backend=x.backend)
    got = nx.repeat(x, counts, axis=1)
    want = np.repeat(np.asarray(x), [1, 0, 2], axis=1)
    assert (got.shape, got.dtype) == (want.shape, x.dtype), got.describe()
    np.testing.assert_array_equal(np.asarray(got), want)
    with pytest.raises(nx.ShapeError, match=r"^repeat: axis 2 is out of range"):
        nx.repeat(x, 2, axis=2)
    with pytest.raises(nx.ShapeError, match=r"^repeat: repeats must be an int or a sequence"):
        nx.repeat(x, [1.0, 2.0, 1.0], axis=1)


# ---------------------------------------------------------------- moveaxis, swapaxes, roll


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_moveaxis_and_swapaxes_match_numpy(dtype: dtypes.DType) -> None:
    cases = Cases()
    for shape, src, dst in [((2, 3, 4), 0, -1), ((2, 3, 4), -1, 0), ((2, 3, 4), (0, 1), (2, 0)),
                            ((2, 3, 4), [2, 0], [0, 1]), ((2, 3), 0, 0), ((5,), 0, -1),
                            ((2, 0, 3), 1, 2), ((2, 3, 4), (), ())]:  # fmt: skip
        a = sample(dtype, shape, 10)
        run(cases, f"moveaxis {shape} {src} {dst}", lambda x, s=src, d=dst: nx.moveaxis(x, s, d),
            lambda a, s=src, d=dst: np.moveaxis(a, s, d), a, dtype)  # fmt: skip
    for shape, a1, a2 in [((2, 3, 4), 0, 2), ((2, 3, 4), -1, 1), ((2, 3), 1, 1), ((0, 2), 0, 1)]:
        a = sample(dtype, shape, 11)
        run(cases, f"swapaxes {shape} {a1} {a2}", lambda x, p=a1, q=a2: nx.swapaxes(x, p, q),
            lambda a, p=a1, q=a2: np.swapaxes(a, p, q), a, dtype)  # fmt: skip
    cases.finish()


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_roll_matches_numpy(dtype: dtypes.DType) -> None:
    cases = Cases()
    for shape, shift, axis in [((5,), 2, None), ((5,), -1, None), ((5,), 12, 0), ((2, 3), 1, None),
                               ((2, 3), 1, 1), ((2, 3), -4, 0), ((2, 3), (1, 2), (0, 1)),
                               ((2, 3), 2, (0, 1)), ((2, 3), (1, 1), (1, 1)), ((2, 3), 0, 1),
                               ((), 3, None), ((0,), 2, 0), ((2, 0), 1, 1), ((2, 0), 1, 0),
                               ((3, 4), (5, -7), (-1, 0))]:  # fmt: skip
        a = sample(dtype, shape, 12)
        run(cases, f"{shape} {shift} {axis}", lambda x, s=shift, ax=axis: nx.roll(x, s, axis=ax),
            lambda a, s=shift, ax=axis: np.roll(a, s, axis=ax), a, dtype)  # fmt: skip
    cases.finish()


def test_moveaxis_swapaxes_roll_errors() -> None:
    x = nx.ones((2, 3))
    with pytest.raises(nx.ShapeError, match=r"^moveaxis: repeated axis in source \(0, -2\)"):
        nx.moveaxis(x, (0, -2), (0, 1))
    with pytest.raises(nx.ShapeError, match=r"^moveaxis: repeated axis in destination \(1, 1\)"):
        nx.moveaxis(x, (0, 1), (1, 1))
    with pytest.raises(
        nx.ShapeError, match=r"^moveaxis: source \(0, 1\) and destination 0 must have the same "
    ):
        nx.moveaxis(x, (0, 1), 0)
    with pytest.raises(nx.ShapeError, match=r"^moveaxis: axis 2 is out of range"):
        nx.moveaxis(x, 2, 0)
    with pytest.raises(nx.ShapeError, match=r"^swapaxes: axis -3 is out of range"):
        nx.swapaxes(x, 0, -3)
    with pytest.raises(
        nx.ShapeError, match=r"^roll: shift \(1, 2\) and axis 0 must have the same length"
    ):
        nx.roll(x, (1, 2), axis=0)
    with pytest.raises(nx.ShapeError, match=r"^roll: with axis=None, shift must be one int"):
        nx.roll(x, (1, 2))
    with pytest.raises(nx.ShapeError, match=r"^roll: axis 2 is out of range"):
        nx.roll(x, 1, axis=2)
    with pytest.raises(nx.ShapeError, match=r"^roll: shift must be an int or a sequence of ints"):
        nx.roll(x, 1.0)


def test_kernels_are_checked_against_the_rules() -> None:
    # the kit runs with [debug] check_rules on: every kernel of the backend under test is
    # wrapped, so a result whose shape or dtype (or its native array's) differs from the
    # primitive's rules fails the test that produced it with RuleCheckError
    backend = nx.get_default_backend()
    assert _dispatch.rule_checks_enabled()
    assert hasattr(type(backend).reshape, "_numerix_unchecked"), type(backend)
    x = nx.reshape(nx.arange(6, dtype=nx.int32), (2, 3))
    check(x, np.arange(6, dtype=np.int32).reshape(2, 3), dtypes.int32)
