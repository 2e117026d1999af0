"""The compiled fast path (numerix._speedups, docs/decisions.md 38) on the torch backend:
the same outcome as the Python path for every fast op, x[a:b:c] and x.reshape over every
dtype torch holds, and the shortcuts past the kernels (TorchBackend.fast_kernel) taken
where a kernel is one torch call and left where it is not."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import numerix as nx
from numerix.dtypes import as_dtype
from numerix.ops import _fast
from numerix.testing import speedups
from numerix.testing.oracle import sample

pytestmark = pytest.mark.skipif(
    _fast.SPEEDUPS is None, reason="runs where the compiled module serves (built, not turned off)"
)


@pytest.fixture
def backend() -> Iterator[nx.Backend]:
    # the kit's plugin turns the rule check on, under which no shortcut is asked
    with speedups.shortcuts_asked():
        yield nx.tensor([0.0], backend="torch:cpu").backend


def _takes(backend: nx.Backend, op: str, dtype: str, form: str) -> bool:
    """Whether op on dtype in form, alone in a fresh memo, goes through the shortcut."""
    _fast.SPEEDUPS.clear()
    d = as_dtype(dtype)
    x = nx.tensor(sample(d, (2, 3), 1), dtype=d, backend=backend)
    if form == "sl":
        x[1:2]
    elif form == "ix":
        x[1]
    elif form == "rs":
        x.reshape((3, 2))
    elif form == "mm":
        x @ x.reshape((3, 2))
    elif form == "u":
        getattr(nx, op)(x)
    else:
        getattr(nx, op)(*{"tt": (x, x), "ts": (x, 1.5), "st": (1.5, x)}[form])
    return (op, dtype, form) in speedups.shortcuts(backend)


def test_every_fast_op_and_method_agrees_with_the_python_path_on_torch(backend) -> None:
    speedups.check_backend(backend)


@pytest.mark.parametrize(
    "op, dtype, form",
    [("add", "float32", "tt"), ("multiply", "float32", "ts"), ("subtract", "float64", "st"),
     ("divide", "float32", "tt"), ("exp", "float32", "u"), ("exp", "bfloat16", "u"),
     ("add", "int32", "tt"), ("maximum", "int8", "tt"), ("less", "uint8", "tt"),
     ("negative", "int64", "u"), ("matmul", "float32", "mm"), ("matmul", "int64", "mm"),
     ("slice", "float32", "sl"), ("slice", "uint64", "sl"), ("slice", "float32", "ix"),
     ("slice", "uint16", "ix"), ("add", "uint32", "tt"), ("maximum", "uint64", "tt"),
     ("less", "uint16", "tt"), ("abs", "uint8", "u"), ("sign", "float32", "u"),
     ("matmul", "uint32", "mm"), ("reshape", "float32", "rs")],
)  # fmt: skip
def test_a_kernel_that_is_one_torch_call_is_passed_by_its_shortcut(backend, op, dtype, form):
    # any dtype: the payload function its kernel runs (on the signed bits of uint16/32/64,
    # or an emulation; an unsigned abs is the operand itself; a reshape flattens with
    # ravel, a contiguous copy where a.reshape(shape) gives a strided view)
    assert _takes(backend, op, dtype, form)


def test_a_row_of_a_strided_matrix_is_the_contiguous_copy_the_kernels_make(backend) -> None:
    x = nx.transpose(nx.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), backend=backend))
    row = x[1]  # the shortcut: torch's a[1] would be a strided view
    assert ("slice", "float32", "ix") in speedups.shortcuts(backend)
    assert row.data.is_contiguous() and row.to_numpy().tolist() == [1.0, 4.0]
    y = nx.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), backend=backend)
    assert y[1].data.data_ptr() == y.data.data_ptr() + 3 * 4  # a contiguous row: a view


def test_slices_with_bounds_past_int64_clamp_as_numpy_does_on_torch(backend) -> None:
    # torch's a[::2**63 - 1] says (1,) and holds nothing, with a truncation warning
    kinds = tuple(as_dtype(d) for d in ("float32", "uint64", "complex128", "int8", "bool"))
    speedups.check_huge_slices(backend, kinds)


def test_x_i_of_every_row_is_numpys_and_past_the_ends_the_same_error_on_torch(backend) -> None:
    kinds = tuple(as_dtype(d) for d in ("float32", "uint64", "complex128", "int8", "bool"))
    speedups.check_rows(backend, kinds)


@pytest.mark.parametrize("where", ["resolver", "scalar"])
def test_a_keyboard_interrupt_in_python_code_the_fast_path_runs_reaches_the_caller(
    backend, where, monkeypatch
) -> None:
    # raised once, as an alarm's handler would: the Python op, run after it, would succeed
    raised = []
    name = "fast_kernel" if where == "resolver" else "full"
    own = getattr(type(backend), name)

    def interrupt(*args, **kwargs):
        if not raised:
            raised.append(1)
            raise KeyboardInterrupt
        return own(*args, **kwargs)

    x = nx.tensor(np.array([1.0, 2.0], np.float32), backend=backend)
    monkeypatch.setattr(type(backend), name, interrupt)
    _fast.SPEEDUPS.clear()
    with pytest.raises(KeyboardInterrupt):
        x + x if where == "resolver" else x * 1.25
    assert raised == [1]


def test_a_kernel_that_raises_runs_once_and_its_error_is_raised(backend, monkeypatch) -> None:
    calls = []

    def failing(self, out, x):
        calls.append(out.shape)
        raise ValueError("the kernel's own error")

    monkeypatch.setattr(type(backend), "exp", failing)
    _fast.SPEEDUPS.clear()
    with pytest.raises(ValueError, match="the kernel's own error"):
        nx.exp(nx.tensor(np.array([1.0, 2.0], np.float32), backend=backend))
    assert calls == [(2,)], "the Python op ran the kernel a second time"
