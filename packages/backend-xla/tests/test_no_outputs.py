"""The xla compiler's programs with no outputs: what the function returned comes back, and
hooks (jax.debug.callback, ordered) still run on every call."""

from __future__ import annotations

from typing import Any

import pytest

import numerix as nx
from numerix.testing.defn_cases import check_no_outputs


@pytest.mark.parametrize(
    "x",
    [
        pytest.param(lambda: nx.tensor([1.0, 2.0], backend="xla"), id="f32[2]"),
        pytest.param(lambda: nx.tensor(3, dtype=nx.int32, backend="xla"), id="s32[]"),
        pytest.param(lambda: nx.zeros((0, 3), backend="xla"), id="f32[0,3]"),
        pytest.param(lambda: nx.tensor([1.0, 2.0]), id="host-argument"),
    ],
)
def test_xla_compiler_returns_what_the_function_returned(x: Any) -> None:
    check_no_outputs(x(), "xla")
