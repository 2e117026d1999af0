"""Tensor.__getitem__ against numpy's indexing: ints, slices with any step, None,
Ellipsis, integer arrays (with numpy's placement of the advanced dimensions) and
boolean masks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import dtypes as D
from numerix.testing.oracle import ALL, check, ids, noncontiguous, sample

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
def test_getitem_every_dtype(dtype: D.DType) -> None:
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
    for key in keys:
        check(nx.tensor(a)[key], a[key], nx.float32)


def test_iteration_and_len_follow_the_first_axis() -> None:
    a = sample(nx.int16, (3, 2), 2)
    rows = list(nx.tensor(a))
    assert len(rows) == len(a) == len(nx.tensor(a))
    for got, want in zip(rows, a, strict=True):
        check(got, want, nx.int16)
    assert list(nx.zeros((0, 3))) == []


def test_getitem_errors() -> None:
    x = nx.tensor(A)
    d = r"\(s64\[2\]\[3\]\[4\]\[5\] binary\(cpu\)\)"
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
        r"binary\(cpu\): 4 dimension\(s\), 5 indexed",
    ):
        x[0, 0, 0, 0, 0]
    with pytest.raises(
        nx.IndexingError, match=r"^getitem: too many indices for .* 4 dimension\(s\), 5 "
    ):
        x[A[0] > 0, 0, 0]  # a 3-d mask consumes three axes
    with pytest.raises(
        nx.IndexingError, match=r"^getitem: too many indices for s32 binary\(cpu\): 0 "
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
        r"f32\[2\] binary\(cpu\)",
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
    with pytest.raises(nx.IndexingError, match=r"^getitem: a 0-d bool index is not supported"):
        x[nx.tensor(True)]
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
    with pytest.raises(TypeError, match=r"does not support item assignment"):
        x[0] = 1
    assert isinstance(nx.IndexingError("x"), IndexError)
