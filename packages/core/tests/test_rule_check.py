"""The rule check (``[debug] check_rules``): a kernel whose result differs from its
primitive's shape and dtype rules is caught, by name, and nothing is wrapped when off."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import _dispatch
from numerix._tensor import Tensor
from numerix.backend import Backend
from numerix.errors import RuleCheckError
from numerix.ops._core import bind, new_out
from numerix.primitives import shape as shape_primitives
from numerix_binary.backend import BinaryBackend


class WrongBackend(BinaryBackend):
    """binary with three broken kernels: a shape, a dtype and a return value wrong."""

    name = "wrong"

    def reshape(self, out: Tensor, x: Tensor) -> Tensor:
        out.data = np.asarray(x.data).ravel()  # forgets out.shape
        return out

    def negative(self, out: Tensor, x: Tensor) -> Tensor:
        out.data = np.negative(x.data).astype(np.float64)  # widens
        return out

    def exp(self, out: Tensor, x: Tensor) -> Any:
        return np.exp(x.data)  # a bare array, not out


@pytest.fixture(autouse=True)
def start_unchecked() -> Iterator[None]:
    # the kit turns the check on for the rest of its process: a test here that shares a
    # worker with kit tests starts from off, and leaves the check as it found it
    was = _dispatch.rule_checks_enabled()
    _dispatch.check_rules(False)
    try:
        yield
    finally:
        _dispatch.check_rules(was)


@pytest.fixture
def checking(start_unchecked: None) -> None:
    # start_unchecked puts the check back as it found it
    _dispatch.check_rules(True)


def _tensor(b: Backend, shape: tuple[int, ...], dtype: Any = np.float32) -> Tensor:
    return nx.from_numpy(np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape), backend=b)


def test_a_wrong_shape_is_caught(checking: None) -> None:
    b = WrongBackend()  # defined before the check was on: wrapped when it turned on
    x = _tensor(b, (6,))
    with pytest.raises(RuleCheckError) as e:
        nx.reshape(x, (2, 3))
    msg = str(e.value)
    assert msg.startswith("reshape on wrong(cpu): the kernel's native array has shape (6,)")
    assert "the rules give shape (2, 3) and dtype float32 for f32[6] wrong(cpu)" in msg
    assert isinstance(e.value, nx.NumerixError)


def test_a_wrong_dtype_is_caught(checking: None) -> None:
    x = _tensor(WrongBackend(), (2, 0))
    with pytest.raises(RuleCheckError, match=r"^negative on wrong\(cpu\): .*dtype float64 but "
                       r"the rules give shape \(2, 0\) and dtype float32"):  # fmt: skip
        nx.negative(x)


def test_a_kernel_returning_no_tensor_is_caught(checking: None) -> None:
    x = _tensor(WrongBackend(), ())
    with pytest.raises(RuleCheckError, match=r"^exp on wrong\(cpu\): the kernel returned a "):
        nx.exp(x)


def test_a_class_defined_while_checking_is_wrapped(checking: None) -> None:
    class Later(WrongBackend):
        name = "later"

        def reverse(self, out: Tensor, x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
            out.data = np.asarray(x.data)[:1]
            return out

    x = _tensor(Later(), (3,))
    with pytest.raises(RuleCheckError, match=r"^reverse on later\(cpu\): .*shape \(1,\)"):
        nx.flip(x)


def test_an_out_built_against_the_rules_is_caught(checking: None) -> None:
    x = _tensor(nx.get_backend("binary"), (2, 3))
    with pytest.raises(RuleCheckError, match=r"^transpose on binary\(cpu\): the core built out "
                       r"as f32\[2\]\[3\] binary\(cpu\) but the rules give float32\[3, 2\]"):  # fmt: skip
        bind(shape_primitives.transpose, new_out((2, 3), x.dtype, x.backend), x, axes=(1, 0))


def test_correct_kernels_pass_and_agree_with_numpy(checking: None) -> None:
    b = nx.get_backend("binary")
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    x = nx.from_numpy(a, backend=b)
    y = nx.concatenate([nx.flip(x.T, axis=0), x.T], axis=1) + 1
    want = np.concatenate([np.flip(a.T, axis=0), a.T], axis=1) + 1
    assert y.dtype is nx.int16 and y.shape == want.shape
    np.testing.assert_array_equal(y.to_numpy(), want)


def test_off_nothing_is_wrapped_and_a_wrong_kernel_goes_through() -> None:
    assert not _dispatch.rule_checks_enabled()
    own = BinaryBackend.__dict__["add"]
    _dispatch.check_rules(True)
    assert BinaryBackend.__dict__["add"] is not own
    _dispatch.check_rules(False)
    assert BinaryBackend.__dict__["add"] is own
    # unchecked, the wrong kernel's array is taken as it is: this is what the check is for
    r = nx.reshape(_tensor(WrongBackend(), (6,)), (2, 3))
    assert r.shape == (2, 3) and np.asarray(r.data).shape == (6,)


def test_the_setting_turns_it_on(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not _dispatch.rule_checks_enabled()
    monkeypatch.setenv("NUMERIX_DEBUG__CHECK_RULES", "1")
    try:
        assert nx.reload_config().debug.check_rules is True
        assert _dispatch.rule_checks_enabled()
        with pytest.raises(RuleCheckError, match=r"^reshape on wrong\(cpu\)"):
            nx.reshape(_tensor(WrongBackend(), (6,)), (3, 2))
    finally:
        monkeypatch.delenv("NUMERIX_DEBUG__CHECK_RULES")
        assert nx.reload_config().debug.check_rules is False
    assert not _dispatch.rule_checks_enabled()


class WrongBlockBackend(BinaryBackend):
    """binary with a native top_k block whose indices come back as int32."""

    name = "wrongblock"

    def block_top_k(self, out: Any, x: Tensor, *, k: int, axis: int) -> Any:
        values, indices = out
        order = np.flip(np.argsort(np.asarray(x.data), axis=axis, kind="stable"), axis=axis)
        idx = np.take(order, np.arange(k), axis=axis)
        values.data = np.take_along_axis(np.asarray(x.data), idx, axis=axis)
        indices.data = idx.astype(np.int32)
        return out


def test_a_native_block_is_checked_against_its_rules(checking: None) -> None:
    x = _tensor(WrongBlockBackend(), (2, 5))
    with pytest.raises(RuleCheckError, match=r"^top_k on wrongblock\(cpu\): the kernel's native "
                       r"array of output 1 has shape \(2, 3\) and dtype int32 but the rules give "
                       r"shape \(2, 3\) and dtype int64"):  # fmt: skip
        nx.top_k(x, 3)
