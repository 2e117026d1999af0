"""jit, defn and compile of functions with no outputs: what the function returned comes
back (jax.jit's behaviour), its hooks still run; grad of such a function is refused."""

from __future__ import annotations

import re
from typing import Any

import pytest

import numerix as nx
from numerix.defn.autodiff import NonScalarOutputError
from numerix.testing.defn_cases import check_no_outputs

ARGS = [
    pytest.param(nx.tensor([1.0, 2.0]), id="f32[2]"),
    pytest.param(nx.tensor(3, dtype=nx.int32), id="s32[]"),
    pytest.param(nx.zeros((0, 3)), id="f32[0,3]"),
]


@pytest.mark.parametrize("x", ARGS)
def test_evaluator_returns_what_the_function_returned(x: Any) -> None:
    check_no_outputs(x, "evaluator")


def test_default_compiler_and_defn_return_none() -> None:
    check_no_outputs(nx.tensor([1.0, 2.0]))

    @nx.defn
    def f(x: Any) -> None:
        nx.print_value(x * 2)

    assert f(nx.tensor(1.0)) is None


def test_print_value_prints_on_every_call(capsys: pytest.CaptureFixture[str]) -> None:
    @nx.jit
    def show(x: Any) -> None:
        nx.print_value(x + 1, label="x+1")

    assert show(nx.tensor([1.0, 2.0])) is None
    assert show(nx.tensor([5.0, 6.0])) is None
    out = capsys.readouterr().out
    assert out.count("x+1: Tensor<f32[2] binary(cpu)>") == 2
    assert "[2., 3.]" in out and "[6., 7.]" in out


@pytest.mark.parametrize("transform", [nx.grad, nx.value_and_grad])
@pytest.mark.parametrize("result", [None, (), {}, []], ids=repr)
def test_grad_of_a_function_with_no_outputs_is_refused(transform: Any, result: Any) -> None:
    name = transform.__name__
    with pytest.raises(
        NonScalarOutputError,
        match=rf"^{name}: the function must return one 0-d float tensor \(a loss\), it "
        rf"returned {re.escape(repr(result))}; reduce it",
    ):
        transform(lambda x: result)(nx.tensor(1.0))
    with pytest.raises(NonScalarOutputError, match=rf"^{name}: .* returned"):
        nx.jit(transform(lambda x: result))(nx.tensor(1.0))
