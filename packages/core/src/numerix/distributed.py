"""Collectives over the processes of a computation on several hosts: each process
passes its own tensor and receives what all of them make together, as
``torch.distributed`` and ``jax.experimental.multihost_utils`` do.

A backend joins a computation of several processes through its settings
(``[backends.xla.distributed]``, ``[backends.torch.distributed]``; see docs/scaling.md).
In a process of its own every collective returns its input's value: the same code runs
on one process and on many.

>>> import numerix as nx
>>> from numerix import distributed
>>> distributed.process_count(), distributed.process_index()
(1, 0)
>>> distributed.all_reduce(nx.tensor([1.0, 2.0])).tolist()
[1.0, 2.0]
>>> distributed.all_gather(nx.tensor([1, 2])).shape
(1, 2)
"""

from __future__ import annotations

from typing import Any

from numerix._dispatch import check_concrete, new_out
from numerix._tensor import Tensor
from numerix.backend import Backend
from numerix.configuration import get_default_backend, resolve_backend
from numerix.errors import ArgumentError
from numerix.ops.shape import expand_dims

__all__ = ["process_count", "process_index", "all_reduce", "all_gather", "OPS"]

#: the ways :func:`all_reduce` combines the processes' tensors
OPS = ("sum", "max", "min")


def _backend(backend: Any, op: str) -> Backend:
    return resolve_backend(get_default_backend() if backend is None else backend, op)


def process_count(backend: Any = None) -> int:
    """How many processes take part in ``backend``'s computation (default: the default
    backend's); 1 when it runs in this process alone."""
    return _backend(backend, "process_count").process_group()[1]


def process_index(backend: Any = None) -> int:
    """This process's index among them, from 0."""
    return _backend(backend, "process_index").process_group()[0]


def _operand(x: Any, op: str) -> Tensor:
    if type(x) is not Tensor:
        raise ArgumentError(f"{op}: expected a tensor, got {type(x).__name__}")
    check_concrete(x, op)
    return x


def all_reduce(x: Tensor, op: str = "sum") -> Tensor:
    """Every process's ``x`` (each of the same shape and dtype) combined element by
    element with ``op`` (``"sum"``, ``"max"`` or ``"min"``), returned in every process,
    on ``x``'s backend. Every process must call it at the same point.

    :raises ArgumentError: an unknown ``op``, or a backend that cannot exchange tensors
        between its processes.
    """
    x = _operand(x, "all_reduce")
    if op not in OPS:
        raise ArgumentError(f"all_reduce: op must be one of {', '.join(OPS)}, got {op!r}")
    if x.backend.process_group()[1] == 1:
        return x
    done = x.backend.all_reduce(new_out(x.shape, x.dtype, x.backend), x, op)
    if done is None:
        raise ArgumentError(
            f"all_reduce: backend {x.backend!r} runs over several processes but cannot "
            f"exchange tensors between them"
        )
    return done


def all_gather(x: Tensor) -> Tensor:
    """Every process's ``x`` (each of the same shape and dtype) stacked along a new first
    axis, by process index, returned in every process, on ``x``'s backend. Every process
    must call it at the same point."""
    x = _operand(x, "all_gather")
    count = x.backend.process_group()[1]
    if count == 1:
        return expand_dims(x, 0)
    done = x.backend.all_gather(new_out((count, *x.shape), x.dtype, x.backend), x)
    if done is None:
        raise ArgumentError(
            f"all_gather: backend {x.backend!r} runs over several processes but cannot "
            f"exchange tensors between them"
        )
    return done
