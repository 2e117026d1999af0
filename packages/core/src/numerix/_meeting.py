"""Where operands meet: the one rule for the backend of a call, eager or compiled.

DESIGN "Mixing", as Nx does it: Python scalars, numpy arrays and host (``binary``)
tensors meeting a tensor of another backend move to it; two tensors on different
non-host backends, or on different devices of one backend (``xla(host:0)`` and
``xla(host:1)``), are refused with :class:`~numerix.errors.BackendMismatchError`
naming each operand and the ``backend_transfer`` call that fixes it. Eager dispatch
(``numerix.ops._core.unify``), :func:`numerix.jit` and every compiler (the evaluator,
xla, torch, a program from :func:`numerix.compile`) ask :func:`meeting_backend`, so a
call that fails eagerly fails the same way compiled.

A tensor freed with ``numerix.backend_deallocate`` lives on :data:`DEALLOCATED`; any
use of it raises :class:`~numerix.errors.DeallocatedError` naming the operation.

This module sits in the low layer (tensor, backend, errors): defn and the compilers
import it without the public ops.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from numerix.backend import Backend
from numerix.errors import BackendMismatchError, DeallocatedError

# the module, not its REGISTRY: read when a kernel is asked for, so the registry may
# import this module (Primitive.bind meets its operands here) without a cycle
from numerix.primitives import _registry

if TYPE_CHECKING:
    from numerix._tensor import Tensor
    from numerix.dtypes import DType

__all__ = [
    "check_concrete",
    "DEALLOCATED", "Operand", "meeting_backend", "mismatch_error", "deallocated_error",
    "check_live", "describe_operand",
]  # fmt: skip


class Operand(Protocol):
    """What the rule reads of an operand: a Tensor, or a compiler's ``ArgSpec``."""

    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def dtype(self) -> DType: ...
    @property
    def backend(self) -> Backend: ...


class _Deallocated(Backend):
    """The backend of a tensor freed by ``backend_deallocate``: every primitive and
    host exchange raises :class:`DeallocatedError` naming the operation."""

    name = "deallocated"
    install_fallbacks = False  # every primitive raises (__getattr__)

    def device_name(self) -> str:
        return "none"

    def __repr__(self) -> str:
        return "deallocated"

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):
            raise AttributeError(attr)
        if attr not in _registry.REGISTRY:
            raise DeallocatedError(
                f"{attr}: the tensor was deallocated with numerix.backend_deallocate (or donated "
                f"to a jitted program, donate_argnums); it holds no data any more (deallocate "
                f"or donate a tensor only after its last use)"
            )

        def kernel(out: Any, *inputs: Any, **params: Any) -> Any:
            dead = next((x for x in inputs if getattr(x, "backend", None) is self), out)
            raise deallocated_error(_registry.op_name(attr, params), dead)

        return kernel

    def to_numpy(self, x: Any) -> Any:
        raise deallocated_error("to_numpy", x)

    def from_dlpack(self, out: Any, capsule_owner: Any) -> Any:
        raise deallocated_error("backend_transfer", out)


#: The backend of every deallocated tensor.
DEALLOCATED: Backend = _Deallocated()


def describe_operand(x: Operand) -> str:
    """``f32[2][3] xla(host:0)``: dtype, shape, backend and device (``Tensor.describe``)."""
    return f"{x.dtype.short}{''.join(f'[{d}]' for d in x.shape)} {x.backend!r}"


def deallocated_error(op: str, x: Operand, what: str = "the tensor") -> DeallocatedError:
    shape = "".join(f"[{d}]" for d in x.shape)
    return DeallocatedError(
        f"{op}: {what} ({x.dtype.short}{shape}) was deallocated with "
        f"numerix.backend_deallocate (or donated to a jitted program, donate_argnums); it "
        f"holds no data any more (deallocate or donate a tensor only after its last use)"
    )


def check_concrete(t: Tensor, op: str) -> None:
    """Raise unless ``t`` holds values: a traced tensor, or a deallocated one."""
    b = t.backend
    if b.is_tracing:
        raise b.concrete_error(t, op)
    if b is DEALLOCATED:
        raise deallocated_error(op, t)


def check_live(op: str, x: Operand, what: str = "the tensor") -> None:
    """Raise :class:`DeallocatedError` for a deallocated ``x``."""
    if x.backend is DEALLOCATED:
        raise deallocated_error(op, x, what)


def meeting_backend(
    op: str,
    operands: Sequence[Operand],
    target: Backend | None = None,
    noun: str = "operand",
) -> Backend | None:
    """The backend ``operands`` meet on, or an error (see the module).

    :param op: the operation named in errors (``"add"``, ``"jit"``).
    :param operands: tensors, or anything with ``shape``, ``dtype`` and ``backend``.
    :param target: the backend the call is bound to, when it is (the device of a
        compiled program): every operand must be on it, or on the host.
    :param noun: what errors call an operand (``"argument"`` for a compiled call).
    :returns: ``target``; else the one non-host backend among the operands (a tracing
        backend wins over concrete ones, the innermost trace first: it captures the
        others); else the first operand's (host) backend; None for no operands.
    :raises DeallocatedError: for an operand freed by ``backend_deallocate``.
    :raises BackendMismatchError: for operands on two non-host backends or devices.
    """
    found = target
    for i, x in enumerate(operands):
        b = x.backend
        if b is found or b.is_host:
            continue
        if b is DEALLOCATED:
            raise deallocated_error(op, x, f"{noun} {i}")
        if found is None:
            found = b
        elif target is None and (b.is_tracing or found.is_tracing):
            found = _innermost_trace(found, b)
        else:
            raise mismatch_error(op, operands, target, noun)
    if found is None and operands:
        return operands[0].backend
    return found


def mismatch_error(
    op: str, operands: Sequence[Operand], target: Backend | None = None, noun: str = "operand"
) -> BackendMismatchError:
    """The error for operands that do not meet: each operand named, and the fix."""
    listing = ", ".join(f"{noun} {i}: {describe_operand(x)}" for i, x in enumerate(operands))
    if target is not None:
        listing += f"; the program runs on {target!r}"
    to = target or next(x.backend for x in operands if not x.backend.is_host)
    fix = f"numerix.backend_transfer(t, {to.name!r}" + "".join(
        f", {k}={v!r}" for k, v in to.options.items() if v is not None
    )
    return BackendMismatchError(
        f"{op}: {noun}s live on different backends or devices ({listing}); move them to one "
        f"first, e.g. {fix})"
    )


def _innermost_trace(a: Backend, b: Backend) -> Backend:
    if not a.is_tracing:
        return b
    if not b.is_tracing:
        return a
    return a if getattr(a, "depth", 0) >= getattr(b, "depth", 0) else b
