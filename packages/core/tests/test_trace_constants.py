"""Constants made while tracing: a Python scalar (``x * 2.0``) or a returned number is a
``constant`` node holding a numpy value of its exact dtype, made without loading any
backend (numerix.defn.expr.LiteralBackend)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import numerix as nx
from numerix.defn.expr import CONSTANT, LITERAL, Graph, Node


def _constants(graph: Graph) -> list[Node]:
    return [n for n in graph.nodes if n.op == CONSTANT]


def _one_constant(graph: Graph) -> np.ndarray:
    (node,) = _constants(graph)
    assert node.value.backend is LITERAL
    value = node.value.to_numpy()
    assert node.shape == () and value.shape == ()
    assert node.dtype is node.value.dtype
    assert value.dtype == node.dtype.numpy_dtype
    return value


# (tensor dtype, the scalar, the constant's dtype, its value as numpy stores it); none is
# the multiply's unit (x * 1 is folded to x, leaving no constant); bool tensors meet
# theirs in an exclusive or
_SCALARS = [
    ("float32", 3.1, "float32", np.float32(3.1)),
    ("float16", 3.1, "float16", np.float16(3.1)),
    ("bfloat16", 3.1, "bfloat16", np.array(3.1, nx.bfloat16.numpy_dtype)),
    ("float64", 3.1, "float64", np.float64(3.1)),
    ("complex64", 2.5, "complex64", np.complex64(2.5)),
    ("int8", 3, "int8", np.int8(3)),
    ("uint8", 255, "uint8", np.uint8(255)),
    ("int64", -7, "int64", np.int64(-7)),
    ("bool", True, "bool", np.bool_(True)),
    # a float meeting an integer tensor promotes to the default float
    ("int32", 0.5, "float32", np.float32(0.5)),
    # beyond float32's range: numpy's cast rounds it to inf (numerix.ops._core.stored)
    ("float32", 1e40, "float32", np.float32(np.inf)),
]


@pytest.mark.parametrize(("dtype", "scalar", "want_dtype", "want"), _SCALARS)
def test_a_scalar_in_a_trace_is_a_constant_of_its_exact_dtype_and_value(
    dtype: str, scalar: object, want_dtype: str, want: np.ndarray
) -> None:
    op = (lambda x: x ^ scalar) if dtype == "bool" else (lambda x: x * scalar)
    g = nx.trace(op, nx.template((3,), dtype))
    value = _one_constant(g)
    assert value.dtype == np.dtype(nx.dtypes.as_dtype(want_dtype, "test").numpy_dtype)
    np.testing.assert_array_equal(value, want)
    assert g.outputs[0].dtype.name == want_dtype


def test_negative_zero_keeps_its_sign() -> None:
    value = _one_constant(nx.trace(lambda x: nx.maximum(x, -0.0), nx.template((3,))))
    assert value == 0.0 and np.signbit(value)


def test_returned_numbers_are_constants_of_the_default_dtypes() -> None:
    g = nx.trace(lambda x: (x, 2.5, 3, True, 1 + 2j), nx.template((2,)))
    got = [(o.dtype.name, o.value.to_numpy().item()) for o in g.outputs[1:]]
    assert got == [("float32", 2.5), ("int64", 3), ("bool", True), ("complex64", 1 + 2j)]
    assert all(o.op == CONSTANT and o.value.backend is LITERAL for o in g.outputs[1:])
    with pytest.raises(nx.DTypeError, match=r"does not fit int64"):
        nx.trace(lambda x: (x, 2**70), nx.template((2,)))


def test_constants_run_on_the_evaluator_and_fold_on_binary() -> None:
    x = nx.tensor([1.0, -2.0, 3.0])
    f = nx.jit(lambda v: (nx.maximum(v * 2.0, 0.0), 2.0 * 3.0 + v), compiler="evaluator")
    a, b = f(x)
    assert a.dtype is nx.float32 and b.dtype is nx.float32
    np.testing.assert_array_equal(a.to_numpy(), np.float32([2.0, 0.0, 6.0]))
    np.testing.assert_array_equal(b.to_numpy(), np.float32([7.0, 4.0, 9.0]))
    # 2.0 * 3.0 folded at trace time: one constant, 6.0, where two scalars met
    consts = [n.value.to_numpy().item() for n in _constants(nx.trace(lambda v: 2.0 * 3.0 + v, x))]
    assert consts == [6.0]


_NO_BACKEND = """
import sys
import numerix as nx
g = nx.trace(lambda x: (nx.maximum(x * 2.0, 0.0) + 1, 0.5), nx.template((3,)))
print(sorted(m for m in sys.modules if m.startswith("numerix_")))
"""


def test_tracing_a_scalar_loads_no_backend() -> None:
    r = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", _NO_BACKEND],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert r.stdout.strip() == "[]", r.stdout + r.stderr
