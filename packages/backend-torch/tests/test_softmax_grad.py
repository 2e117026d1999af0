"""The derivatives of softmax, log_softmax and logsumexp on torch against torch's autograd,
at ties of the maximum they subtract for stability: no derivative flows through that
maximum (the result does not depend on it), so the backward pass holds none of the
maximum's rule for ties."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import numerix as nx

ROWS = np.array([[1.0, 3.0, 3.0, -2.0], [0.0, 0.0, 0.0, 0.0], [5.0, -1.0, 5.0, 5.0]])
WEIGHTS = np.array([[1.0, 2.0, -3.0, 0.5], [0.25, -1.0, 2.0, 1.0], [3.0, 1.0, -2.0, 0.0]])

CASES: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "softmax": (lambda x: nx.softmax(x, axis=-1), lambda x: torch.softmax(x, -1)),
    "log_softmax": (lambda x: nx.log_softmax(x, axis=-1), lambda x: torch.log_softmax(x, -1)),
    "logsumexp": (
        lambda x: nx.logsumexp(x, axis=-1, keepdims=True),
        lambda x: torch.logsumexp(x, -1, keepdim=True),
    ),
}


@pytest.mark.parametrize("dtype", [nx.float32, nx.float64], ids=str)
@pytest.mark.parametrize("name", list(CASES))
def test_grad_at_ties_matches_torch_autograd(name: str, dtype: Any) -> None:
    ours, theirs = CASES[name]
    w = nx.tensor(WEIGHTS, dtype=dtype, backend="torch")

    def loss(x: nx.Tensor) -> nx.Tensor:
        return nx.sum(ours(x) * w[:, : 1 if name == "logsumexp" else 4])

    x = nx.tensor(ROWS, dtype=dtype, backend="torch")
    tx = torch.tensor(ROWS, dtype=x.data.dtype, requires_grad=True)
    tw = torch.tensor(WEIGHTS, dtype=x.data.dtype)
    (theirs(tx) * tw[:, : 1 if name == "logsumexp" else 4]).sum().backward()
    assert tx.grad is not None
    tol = 1e-6 if dtype is nx.float32 else 1e-12
    for g in (nx.grad(loss)(x), nx.jit(nx.grad(loss), compiler="torch")(x)):
        assert g.dtype is dtype and g.shape == ROWS.shape
        np.testing.assert_allclose(g.to_numpy(), tx.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", list(CASES))
def test_backward_holds_no_rule_of_the_maximum(name: str) -> None:
    ours, _ = CASES[name]
    x = nx.tensor(ROWS, dtype=nx.float32, backend="torch")
    graph = nx.trace(nx.grad(lambda x: nx.sum(ours(x))), x)
    ops = [n.value.name if n.op == "block" else n.op for n in graph.nodes]
    maxima = [n.params["kind"] for n in graph.nodes if n.op == "reduce"].count("max")
    if name == "logsumexp":
        assert "stability_shift" in ops
        assert maxima == 1  # the forward's one max
    else:  # one block, differentiated by its own rule: no maximum in the graph at all
        assert ops.count(name) == 1 and maxima == 0
    # the rule for ties would compare x with the maximum (equal)
    assert "equal" not in ops


BACKWARD_CASES = [((1,), nx.float32), ((0, 2), nx.float64), ((1, 2), nx.float32),
                  ((), nx.float64), ((2,), nx.float16)]  # fmt: skip


@pytest.mark.parametrize(("axes", "dtype"), BACKWARD_CASES, ids=str)
def test_backward_blocks_run_torchs_kernels_with_the_core_versions_values(
    axes: tuple[int, ...], dtype: Any
) -> None:
    """The backward pass of tanh and log_softmax compiled for torch calls torch's
    backward kernels (one line each in the program), one axis or several (merged) or
    none, and gives what the core's ops give on binary."""
    a = np.random.default_rng(3).standard_normal((3, 4, 5))
    w = np.random.default_rng(4).standard_normal((3, 4, 5))

    def loss(x: nx.Tensor, w: nx.Tensor) -> nx.Tensor:
        return nx.sum(nx.log_softmax(nx.tanh(x), axis=axes) * w)

    got = {}
    for backend, compiler in (("torch", "torch"), ("binary", "evaluator")):
        x, tw = (nx.tensor(v, dtype=dtype, backend=backend) for v in (a, w))
        got[backend] = nx.jit(nx.grad(loss), compiler=compiler)(x, tw).to_numpy()
        if backend == "torch":
            source = nx.compile(nx.grad(loss), x, tw, compiler="torch").run.program.source
            assert "# block_tanh_grad" in source and "# block_log_softmax_grad" in source
    tol = {nx.float16: 2e-3, nx.float32: 1e-6, nx.float64: 1e-12}[dtype]
    np.testing.assert_allclose(got["torch"], got["binary"], rtol=tol, atol=tol)
