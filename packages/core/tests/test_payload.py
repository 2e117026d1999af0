"""One payload function per primitive: the kernel, its lowering and the fast path's
shortcut derived from one declaration (numerix.backend.elementwise / payload)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix.backend import elementwise, payload, payload_of
from numerix_binary.backend import BinaryBackend

built: list[Any] = []


def _negative(dtype: Any) -> Any:
    built.append(dtype)
    if dtype.kind == "u":
        return lambda a: (0 - a).astype(a.dtype)
    return np.negative


def _reduce(a: np.ndarray, *, kind: str, axes: tuple[int, ...], keepdims: bool, dtype: Any) -> Any:
    fn = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod, "all": np.all}.get(
        kind, np.any
    )
    return np.asarray(fn(a, axis=axes, keepdims=keepdims), dtype=dtype.numpy_dtype)


class Declared(BinaryBackend):
    name = "declared"
    payload_type = np.ndarray
    add = elementwise(np.add)
    negative = elementwise.per_dtype(_negative)
    reduce = payload(_reduce, reads=("dtype",))
    reshape = payload(lambda a, *, shape: a.reshape(shape))
    concatenate = payload(lambda *arrays, axis: np.concatenate(arrays, axis))

    def fast_kernel(self, op: str, form: str, dtype: Any) -> Any:
        return super(BinaryBackend, self).fast_kernel(op, form, dtype)  # Backend's default


@pytest.fixture
def declared() -> Any:
    nx.register_backend("declared", Declared, replace=True)
    yield nx.get_backend("declared")
    nx.unregister_backend("declared")


def test_a_declaration_becomes_the_method_its_kernel_lowering_and_shortcut_share(declared) -> None:
    x = nx.tensor(np.array([1.5, -2.0], np.float32), backend="declared")
    r = x + x
    assert r.dtype is nx.float32 and r.to_numpy().tolist() == [3.0, -4.0]
    assert payload_of(Declared, "add") is Declared.__dict__["add"].numerix_payload[1]
    ins = (((2,), nx.float32),) * 2
    assert declared.lower("add", {}, ins, ((2,), nx.float32)) is np.add
    assert declared.fast_kernel("add", "tt", nx.float32)[:2] == (np.add, np.ndarray)
    assert declared.fast_kernel("add", "mm", nx.float32) is None


def test_a_per_dtype_builder_is_called_once_per_dtype(declared) -> None:
    built.clear()
    u = nx.tensor(np.array([1, 2], np.uint8), backend="declared")
    for _ in range(3):
        assert (-u).to_numpy().tolist() == [255, 254]
    f = nx.tensor(np.array([1.0], np.float64), backend="declared")
    assert (-f).to_numpy().tolist() == [-1.0]
    assert built == [nx.uint8, nx.float64]
    assert declared.fast_kernel("negative", "u", nx.float64)[0] is np.negative


def test_a_payload_gets_its_parameters_and_the_output_it_reads(declared) -> None:
    x = nx.tensor(np.arange(6, dtype=np.int8).reshape(2, 3), backend="declared")
    s = nx.sum(x, axis=1)
    assert (s.shape, s.dtype, s.to_numpy().tolist()) == ((2,), nx.int64, [3, 12])
    assert x.reshape((3, 2)).to_numpy().tolist() == [[0, 1], [2, 3], [4, 5]]
    assert nx.concatenate([x, x], axis=0).shape == (4, 3)
    params = {"kind": "sum", "axes": (1,), "keepdims": False}
    lowered = declared.lower("reduce", params, (((2, 3), nx.int8),), ((2,), nx.int64))
    got = lowered(x.data)
    assert got.dtype == np.int64 and got.tolist() == [3, 12]
    reshaped = declared.lower("reshape", {}, (((2, 3), nx.int8),), ((6,), nx.int8))(x.data)
    assert reshaped.shape == (6,)


def test_a_subclass_method_of_its_own_is_not_taken_for_the_declaration(declared) -> None:
    class Own(Declared):
        name = "own"

        def add(self, out: Any, x1: Any, x2: Any) -> Any:
            out.data = np.subtract(x1.data, x2.data)
            return out

    assert payload_of(Own, "add") is None
    assert Own().fast_kernel("add", "tt", nx.float32) is None
    assert Own().lower("add", {}, (((2,), nx.float32),) * 2, ((2,), nx.float32)) is None


def test_a_declaration_of_the_wrong_kind_is_refused_with_its_name() -> None:
    with pytest.raises(TypeError, match=r"Wrong\.reduce: elementwise\(\) declares"):

        class Wrong(BinaryBackend):
            name = "wrong"
            reduce = elementwise(np.sum)

    with pytest.raises(TypeError, match=r"reads as 'shape' or 'dtype'"):
        payload(np.sum, reads=("axes",))
