"""The one meeting rule (where operands meet, eager and compiled) and deallocated tensors."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
import pytest

import numerix as nx
from numerix._meeting import DEALLOCATED, meeting_backend
from numerix.defn.compilers import ArgSpec
from numerix_binary.backend import BinaryBackend


class FakeDevice(BinaryBackend):
    """A non-host backend with numbered devices, computing with numpy."""

    name = "meetdev"
    default_options: ClassVar[dict[str, Any]] = {"device": "cpu", "device_id": 0}
    spec_fields = ("device", "device_id")
    is_host = False

    def device_name(self) -> str:
        return f"{self.options['device']}:{self.options['device_id']}"

    def from_numpy(self, out: Any, array: np.ndarray) -> Any:
        out.data = np.array(array, copy=True)
        return out

    def from_dlpack(self, out: Any, source: Any) -> None:
        return None


@pytest.fixture
def dev() -> Iterator[tuple[Any, Any]]:
    """Two devices of one non-host backend."""
    nx.register_backend("meetdev", FakeDevice, replace=True)
    yield nx.get_backend("meetdev", device_id=0), nx.get_backend("meetdev", device_id=1)
    nx.unregister_backend("meetdev")


def _spec(backend: Any) -> ArgSpec:
    return ArgSpec((2,), nx.float32, backend)


# ---------------------------------------------------------------- the rule itself


def test_host_operands_join_the_other_backend(dev: tuple[Any, Any]) -> None:
    d0, _ = dev
    host = nx.get_backend("binary")
    assert meeting_backend("add", [_spec(host), _spec(d0), _spec(host)]) is d0
    assert meeting_backend("add", [_spec(host), _spec(host)]) is host
    assert meeting_backend("add", []) is None
    # bound to a backend (a compiled program's): host operands and its own meet it
    assert meeting_backend("jit", [_spec(host), _spec(d0)], d0) is d0
    assert meeting_backend("jit", [], d0) is d0


def test_two_devices_or_backends_raise_naming_each_operand_and_the_fix(
    dev: tuple[Any, Any],
) -> None:
    d0, d1 = dev
    host = nx.get_backend("binary")
    msg = (
        "add: operands live on different backends or devices (operand 0: f32[2] binary(cpu), "
        "operand 1: f32[2] meetdev(cpu:1), operand 2: f32[2] meetdev(cpu:0)); move them to one "
        "first, e.g. numerix.backend_transfer(t, 'meetdev', device='cpu', device_id=1)"
    )
    with pytest.raises(nx.BackendMismatchError, match=f"^{re.escape(msg)}$"):
        meeting_backend("add", [_spec(host), _spec(d1), _spec(d0)])
    # a program bound to d0: an argument on d1, or a host-bound program and d0
    with pytest.raises(
        nx.BackendMismatchError,
        match=re.escape(
            "jit: arguments live on different backends or devices (argument 0: f32[2] "
            "meetdev(cpu:1); the program runs on meetdev(cpu:0)); move them to one first, "
            "e.g. numerix.backend_transfer(t, 'meetdev', device='cpu', device_id=0)"
        ),
    ):
        meeting_backend("jit", [_spec(d1)], d0, noun="argument")
    with pytest.raises(nx.BackendMismatchError, match=r"the program runs on binary\(cpu\)"):
        meeting_backend("compile", [_spec(d0)], host, noun="argument")


def test_a_deallocated_operand_raises_deallocated_error(dev: tuple[Any, Any]) -> None:
    d0, _ = dev
    with pytest.raises(nx.DeallocatedError, match=r"^jit: argument 1 \(f32\[2\]\) was dealloc"):
        meeting_backend("jit", [_spec(d0), _spec(DEALLOCATED)], noun="argument")
    assert issubclass(nx.DeallocatedError, nx.NumerixError)


# ---------------------------------------------------------------- the same rule everywhere


def test_eager_jit_and_compile_refuse_two_devices_alike(dev: tuple[Any, Any]) -> None:
    a = nx.tensor([1.0, 2.0], backend="meetdev:cpu:0")
    b = nx.tensor([3.0, 4.0], backend="meetdev:cpu:1")
    want = (
        r"live on different backends or devices \(\w+ 0: f32\[2\] meetdev\(cpu:0\), \w+ 1: "
        r"f32\[2\] meetdev\(cpu:1\)\); move them to one first, e.g. "
        r"numerix.backend_transfer\(t, 'meetdev', device='cpu', device_id=0\)"
    )
    with pytest.raises(nx.BackendMismatchError, match="^add: operands " + want):
        a + b
    f = nx.jit(lambda x, y: x + y, compiler="evaluator")
    with pytest.raises(nx.BackendMismatchError, match="^jit: arguments " + want):
        f(a, b)
    assert f.trace_count == 0  # refused before tracing
    with pytest.raises(nx.BackendMismatchError, match="^compile: arguments " + want):
        nx.compile(lambda x, y: x + y, a, b)
    with pytest.raises(nx.BackendMismatchError, match="^jit: arguments " + want):
        nx.jit(lambda x, y, s: x + y * s)(a, b, 2.0)  # with a number: the same error


def test_compiled_program_refuses_another_backend_and_takes_host_data(
    dev: tuple[Any, Any],
) -> None:
    d0, d1 = dev
    on_binary = nx.compile(lambda x: x + 1, nx.template((2,), nx.float32))
    with pytest.raises(
        nx.BackendMismatchError,
        match=re.escape(
            "compile: arguments live on different backends or devices (argument 0: f32[2] "
            "meetdev(cpu:0); the program runs on binary(cpu)); move them to one first, "
            "e.g. numerix.backend_transfer(t, 'binary', device='cpu')"
        ),
    ):
        on_binary(nx.tensor([1.0, 2.0], backend=d0))
    on_d0 = nx.compile(lambda x, y: x * y, nx.template((2,), nx.float32, backend=d0), 1.0)
    with pytest.raises(nx.BackendMismatchError, match=r"argument 0: f32\[2\] meetdev\(cpu:1\)"):
        on_d0(nx.tensor([1.0, 2.0], backend=d1), 2.0)
    r = on_d0(nx.tensor([1.0, 2.0]), 3.0)  # host data moves to the program's device
    assert r.backend is d0
    np.testing.assert_array_equal(r.to_numpy(), np.array([3.0, 6.0], np.float32))


def test_python_numbers_go_where_the_tensor_arguments_meet(dev: tuple[Any, Any]) -> None:
    d0, _ = dev
    f = nx.jit(lambda x, y, s: x + y + s)
    r = f(nx.tensor([1.0, 2.0]), nx.tensor([1.0, 1.0], backend=d0), 0.5)
    assert r.backend is d0 and r.tolist() == [2.5, 3.5]


# ---------------------------------------------------------------- deallocated tensors


def _dead(backend: Any = None, dtype: Any = nx.float32) -> nx.Tensor:
    t = nx.tensor([1.0, 2.0], dtype=dtype, backend=backend)
    nx.backend_deallocate(t)
    return t


_GONE = r"\(f32\[2\]\) was deallocated with numerix.backend_deallocate"


def test_deallocated_operands_raise_one_error_naming_the_op() -> None:
    live = nx.tensor([1.0, 2.0])
    dead = _dead()
    for fn, op, which in (
        (lambda: dead + live, "add", "operand 0"),
        (lambda: live * dead, "multiply", "operand 1"),
        (lambda: dead + 1, "add", "operand 0"),
        (lambda: 2 - dead, "subtract", "operand 1"),
        (lambda: nx.exp(dead), "exp", "the tensor"),
        (lambda: nx.sum(dead), "sum", "the tensor"),
        (lambda: dead.tolist(), "tolist", "the tensor"),
        (lambda: nx.backend_transfer(dead, "binary"), "backend_transfer", "the tensor"),
    ):
        with pytest.raises(nx.DeallocatedError, match=f"^{op}: {which} {_GONE}"):
            fn()
    dead_int = _dead(dtype=nx.int32)
    with pytest.raises(nx.DeallocatedError, match=r"^exp: operand 0 \(s32\[2\]\)"):
        nx.exp(dead_int)  # the cast to float runs first: the error still names exp
    with pytest.raises(nx.DeallocatedError, match=r"^add: operand 0 \(s32\[2\]\)"):
        dead_int + live


def test_deallocated_tensor_repr_says_so() -> None:
    dead = _dead()
    assert repr(dead) == "Tensor<f32[2] deallocated>"
    assert str(dead) == repr(dead)
    assert dead.describe() == "f32[2] deallocated"


def test_deallocated_tensors_under_jit_and_compile() -> None:
    live = nx.tensor([1.0, 2.0])
    f = nx.jit(lambda x, y: x + y, compiler="evaluator")
    with pytest.raises(nx.DeallocatedError, match=f"^jit: argument 0 {_GONE}"):
        f(_dead(), live)
    assert not f.is_cached(_dead(), live)
    c = nx.compile(lambda x: x * 2, nx.template((2,), nx.float32))
    with pytest.raises(nx.DeallocatedError, match=f"^compile: argument 0 {_GONE}"):
        c(_dead())
    with pytest.raises(nx.DeallocatedError, match=f"^compile: argument 1 {_GONE}"):
        nx.compile(lambda x, y: x * y, live, _dead())  # a deallocated tensor as template
    w = _dead()
    with pytest.raises(nx.DeallocatedError, match=f"^add: operand 1 {_GONE}"):
        nx.jit(lambda x: x + w)(live)  # captured while tracing
