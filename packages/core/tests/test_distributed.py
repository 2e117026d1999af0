"""numerix.distributed in one process (every collective gives its input's value) and the
core's rules around the backends' collectives; the collectives over real processes are
tested by the xla and torch packages (test_multihost.py, test_distributed_torch.py)."""

from __future__ import annotations

import numpy as np
import pytest

import numerix as nx
from numerix import distributed
from numerix.plugins import register_backend, unregister_backend
from numerix_binary.backend import BinaryBackend


def test_one_process_gives_the_inputs_value() -> None:
    x = nx.tensor(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert distributed.process_count() == 1 and distributed.process_index() == 0
    assert distributed.process_count("binary") == 1
    for op in distributed.OPS:
        got = distributed.all_reduce(x, op)
        assert got.dtype is nx.int32 and got.shape == (2, 3) and got.backend is x.backend
        np.testing.assert_array_equal(got.to_numpy(), x.to_numpy(), strict=True)
    g = distributed.all_gather(x)
    assert g.shape == (1, 2, 3) and g.dtype is nx.int32
    np.testing.assert_array_equal(g.to_numpy()[0], x.to_numpy(), strict=True)
    assert distributed.all_gather(nx.tensor(2.5)).shape == (1,)


def test_bad_calls_are_refused_by_name() -> None:
    with pytest.raises(nx.ArgumentError, match="all_reduce: op must be one of sum, max, min"):
        distributed.all_reduce(nx.ones((2,)), "mean")
    with pytest.raises(nx.ArgumentError, match="all_gather: expected a tensor, got list"):
        distributed.all_gather([1, 2])
    with pytest.raises(nx.TracingError, match="all_reduce"):
        nx.jit(lambda t: distributed.all_reduce(t), compiler="evaluator")(nx.ones((2,)))


class _TwoProcesses(BinaryBackend):
    """A backend that says it runs over two processes and exchanges nothing."""

    name = "two-processes"

    def process_group(self) -> tuple[int, int]:
        return 1, 2


def test_a_backend_over_processes_without_collectives_is_named() -> None:
    register_backend("two-processes", _TwoProcesses, replace=True)
    try:
        x = nx.ones((2,), backend="two-processes")
        assert distributed.process_count("two-processes") == 2
        assert distributed.process_index("two-processes") == 1
        with pytest.raises(nx.ArgumentError, match=r"two-processes.*cannot exchange tensors"):
            distributed.all_reduce(x)
        with pytest.raises(nx.ArgumentError, match="all_gather: backend two-processes"):
            distributed.all_gather(x)
    finally:
        unregister_backend("two-processes")
