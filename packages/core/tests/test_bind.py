"""``Primitive.bind``: the rules build ``out``, the operands meet on one backend, the
kernel runs, and a trace records the same call."""

from __future__ import annotations

import numpy as np
import pytest

import numerix as nx
from numerix import _dispatch
from numerix._tensor import Tensor
from numerix.errors import ArgumentError, BackendMismatchError, DeallocatedError
from numerix.primitives import creation as creation_primitives
from numerix.primitives import elementwise as elementwise_primitives
from numerix.primitives import fft as fft_primitives
from numerix.primitives import shape as shape_primitives


@pytest.mark.parametrize("dtype", [nx.bool_, nx.int8, nx.uint32, nx.float16, nx.complex64], ids=str)
@pytest.mark.parametrize("shape", [(6,), (2, 3), (0, 3), (1,)], ids=str)
def test_bind_builds_out_from_the_rules(dtype: nx.DType, shape: tuple[int, ...]) -> None:
    a = (np.arange(int(np.prod(shape))) % 2).astype(dtype.numpy_dtype).reshape(shape)
    x = nx.from_numpy(a)
    flat = shape_primitives.reshape.bind(x, shape=(a.size,))
    assert (flat.shape, flat.dtype) == ((a.size,), dtype)
    np.testing.assert_array_equal(flat.to_numpy(), a.reshape(-1))
    t = shape_primitives.transpose.bind(x, axes=tuple(range(x.ndim - 1, -1, -1)))
    assert (t.shape, t.dtype) == (a.T.shape, dtype)
    np.testing.assert_array_equal(t.to_numpy(), a.T)
    c = shape_primitives.concatenate.bind(x, x, axis=0)
    np.testing.assert_array_equal(c.to_numpy(), np.concatenate([a, a]))
    assert c.dtype is dtype


def test_bind_creates_on_the_backend_given() -> None:
    b = nx.get_backend("binary")
    f = creation_primitives.full.bind(shape=(2, 0, 3), dtype=nx.int16, value=7, backend=b)
    assert (f.shape, f.dtype, f.backend) == ((2, 0, 3), nx.int16, b)
    r = creation_primitives.iota.bind(shape=(2, 3), dtype=nx.float32, axis=1, backend=b)
    np.testing.assert_array_equal(r.to_numpy(), np.broadcast_to(np.arange(3.0), (2, 3)))
    with pytest.raises(ArgumentError, match=r"^full: no tensor input to take the backend from"):
        creation_primitives.full.bind(shape=(), dtype=nx.float32, value=0)


def test_bind_runs_the_dtype_rule() -> None:
    x = nx.tensor([1.0, 2.0], dtype=nx.complex64)
    y = fft_primitives.fft.bind(x, length=4)
    assert (y.shape, y.dtype) == ((4,), nx.complex64)
    np.testing.assert_allclose(y.to_numpy(), np.fft.fft([1, 2], n=4), rtol=1e-6)
    z = elementwise_primitives.as_type.bind(nx.tensor([1.7, -2.5]), dtype=nx.int32)
    assert z.dtype is nx.int32 and z.tolist() == [1, -2]


def test_a_trace_records_the_kernel_call() -> None:
    g = nx.trace(
        lambda x: shape_primitives.reshape.bind(x, shape=(3, 2)), nx.template((6,), nx.int32)
    )
    node = g.nodes[-1]
    # the rules' own parameter is not the kernel's: the node keeps what the kernel takes
    assert (node.op, node.params, node.shape, node.dtype) == ("reshape", {}, (3, 2), nx.int32)
    f = nx.jit(lambda x: shape_primitives.transpose.bind(x, axes=(1, 0)))
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    np.testing.assert_array_equal(f(nx.from_numpy(a)).to_numpy(), a.T)


def test_operands_meet_by_the_meeting_rule() -> None:
    pytest.importorskip("numerix_torch")  # core and binary alone: nothing to meet
    torch_backend = nx.get_backend("torch")
    host = nx.tensor([1, 2], dtype=nx.int32)
    dev = nx.tensor([3], dtype=nx.int32, backend=torch_backend)
    r = shape_primitives.concatenate.bind(host, dev, axis=0)
    assert type(r) is Tensor and r.backend is torch_backend and r.tolist() == [1, 2, 3]
    pytest.importorskip("numerix_xla")
    xla = nx.get_backend("xla")
    other = nx.tensor([4], dtype=nx.int32, backend=xla)
    with pytest.raises(BackendMismatchError, match=r"^concatenate: operands live on different"):
        shape_primitives.concatenate.bind(dev, other, axis=0)


def test_a_deallocated_operand_is_named() -> None:
    x = nx.tensor([1.0, 2.0])
    y = nx.tensor([3.0])
    nx.backend_deallocate(y)
    with pytest.raises(
        DeallocatedError, match=r"^concatenate: operand 1 \(f32\[1\]\) was deallocated"
    ):
        shape_primitives.concatenate.bind(x, y, axis=0)
    with pytest.raises(DeallocatedError, match=r"^reverse: .*was deallocated"):
        shape_primitives.reverse.bind(y, axes=(0,))


def test_bind_is_the_registry_primitive_method() -> None:
    assert shape_primitives.reshape.bind.__func__ is _dispatch.bind  # type: ignore[attr-defined]
