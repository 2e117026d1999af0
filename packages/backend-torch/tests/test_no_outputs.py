"""The torch compiler's programs with no outputs, replayed and through inductor: what the
function returned comes back, and hooks still run on every call."""

from __future__ import annotations

from typing import Any

import pytest

import numerix as nx
from numerix.testing.defn_cases import check_no_outputs


@pytest.mark.parametrize(
    "x",
    [
        pytest.param(lambda: nx.tensor([1.0, 2.0], backend="torch"), id="f32[2]"),
        pytest.param(lambda: nx.tensor(3, dtype=nx.int32, backend="torch"), id="s32[]"),
        pytest.param(lambda: nx.zeros((0, 3), backend="torch"), id="f32[0,3]"),
        pytest.param(lambda: nx.tensor([1.0, 2.0]), id="host-argument"),
    ],
)
@pytest.mark.parametrize("mode", ["replay", "inductor"])
@pytest.mark.filterwarnings("ignore:jit.*the graph has hook node:UserWarning")
def test_torch_compiler_returns_what_the_function_returned(x: Any, mode: str) -> None:
    check_no_outputs(x(), "torch", mode=mode)
