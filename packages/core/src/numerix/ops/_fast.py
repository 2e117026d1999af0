"""The compiled fast path's Python side: what the rules decide, asked once per key.

:mod:`numerix._speedups` (docs/decisions.md 38) keeps, per op and per (backend, dtype,
form), the answer of :func:`resolve`: the backend's kernel and the output's dtype, or
``None`` for "the Python op takes it". It holds no rule of its own. Where it is not built,
or is turned off with ``NUMERIX_SPEEDUPS=0``, :func:`fast_op` returns the Python op
unchanged and Tensor keeps its Python operators: the same results and the same errors.

An op is wrapped only where its Python body is exactly what the fast path does after
the lookup: build the output (the input's shape, the dtype the table gives) and call the
kernel (``elementwise_unary`` / ``elementwise_binary`` of one primitive, ``matmul``'s
two-matrix case). ``tests/test_speedups.py`` runs every wrapped op both ways and compares.

Where the output's shape or the kernel's parameters depend on the operands' shapes (a
matrix product, a reduction, ``x[a:b:c]``, ``x[i]``, ``x.reshape(shape)``), the op's own
module gives a *planner*, ``plan(form, x, arg) -> (shape, kwnames, kwvalues, extra) |
None``, built on the Python op's own plan; the compiled module keeps its answer per
shapes and key and replays it, and reads no shape itself.
"""

from __future__ import annotations

import functools
import sys
import types
from collections.abc import Callable
from typing import Any, TypeVar

from numerix import _tensor
from numerix._dispatch import rule_checks_enabled
from numerix._meeting import DEALLOCATED
from numerix.backend import ShortcutDeclined
from numerix.dtypes import DType, weak_promote
from numerix.errors import DTypeError
from numerix.ops._core import check_scalar_fits, scalar_operand
from numerix.plugins import clears_with_caches
from numerix.primitives._registry import Primitive
from numerix.primitives.reduction import reduce_dtypes

__all__ = [
    "SPEEDUPS", "fast_op", "method_op", "METHOD_OPS", "reduction_methods", "resolve", "Plan",
    "UNARY", "BINARY", "MATRIX", "REDUCE",
]  # fmt: skip

F = TypeVar("F", bound=Callable[..., Any])

#: The compiled module, or None where the Python operators serve.
SPEEDUPS: Any = _tensor._speedups

#: The forms an op takes: one tensor; two tensors of one shape (or one of them 0-d, by
#: the backend's shortcut alone), or a tensor and a Python float or int; two matrices;
#: one non-empty tensor reduced over every axis.
UNARY, BINARY, MATRIX, REDUCE = 1, 2, 3, 4

# the kernel a form calls, where it is not the primitive's own
_KERNEL_OF_FORM = {"mm": "dot", "rs": "reshape", "sl": "slice", "ix": "slice"}
# a Python int's operand is a 0-d payload as a float's is, and so is a 0-d tensor meeting
# a tensor: the same shortcut (t0/0t take no kernel: it wants operands of one shape)
_SHORTCUT_FORM = {"ti": "ts", "it": "st", "t0": "ts", "0t": "st"}
# the Python scalar each scalar form meets (its value does not change the dtype)
_WEAK_SCALAR = {"ts": 0.0, "st": 0.0, "ti": 0, "it": 0}

#: A planner's answer (see the module's docstring): the output's shape, or None when the
#: Python op returns the operand itself; the kernel's keyword names and values, or None
#: (no kernel call: the shortcut alone serves); what the shortcut takes after the
#: payloads, or None.
Plan = tuple[Any, Any, Any, Any]


def _kernel(backend: Any, name: str) -> Any:
    """The function behind ``backend.<name>`` when that is a plain method of its class
    (what the Python op calls), else None: a kernel set on the instance, or served by
    ``__getattr__``, is left to the Python op."""
    bound = getattr(backend, name, None)
    if type(bound) is not types.MethodType or bound.__self__ is not backend:
        return None
    func = bound.__func__
    return func if getattr(type(backend), name, None) is func else None


def resolve(
    prim: Primitive, form: str, backend: Any, dtype: DType, params: Any = None
) -> tuple[Any, str, DType, Any, type | None, Any, Any] | None:
    """(kernel, its name, output dtype, the backend's shortcut, the type of what it
    returns, the context it runs in and :attr:`~numerix.Backend.scalar_payload`, or None
    four times) for ``prim`` on operands of
    ``dtype`` on ``backend`` in ``form``, when the Python op would call that kernel with
    no cast; None when the Python op must take the call. ``params``: the op's own (a
    reduction's kind)."""
    if backend is DEALLOCATED or backend.is_tracing:
        return None
    if form in ("tt", "t0", "0t"):  # t0/0t: a tensor and a 0-d tensor, of one dtype
        r = prim.extra["table"].get((dtype, dtype))
    elif form in _WEAK_SCALAR:
        # the dtype a Python scalar meets the tensor on (weak), as the Python op takes it;
        # an int's value is checked to fit per value (int_operand)
        r = prim.extra["unary_table"].get(weak_promote(dtype, _WEAK_SCALAR[form]))
    elif form == "u":
        r = prim.extra["table"].get(dtype)
    elif form == "mm":
        r = None if dtype.kind == "b" else (dtype, dtype)
    elif form in ("rs", "sl", "ix"):  # ix: x[i], served by a shortcut alone
        r = (dtype, dtype)
    elif form == "rd":  # the reduction ``params`` over every axis, its dtypes by its rule
        try:
            r = reduce_dtypes(params, dtype)
        except DTypeError:
            return None
    else:
        return None
    if r is None or r[0] is not dtype:
        return None
    name = _KERNEL_OF_FORM.get(form, prim.name)
    kernel = _kernel(backend, name)
    if kernel is None:
        return None
    # the backend's shortcut past the kernel, unless every kernel's result is checked; a
    # reduction's form names its kind ("rd_sum")
    asked = f"rd_{params}" if form == "rd" else _SHORTCUT_FORM.get(form, form)
    short = None if rule_checks_enabled() else backend.fast_kernel(name, asked, dtype)
    if short is None:
        return kernel, sys.intern(name), r[1], None, None, None, None
    payload, payload_type, *context = short
    context_ = (context or [None])[0]
    # read on the class: a plain function there is not bound to the backend
    as_payload = type(backend).scalar_payload
    return kernel, sys.intern(name), r[1], payload, payload_type, context_, as_payload


def int_operand(prim: Primitive, value: int, dtype: DType, backend: Any) -> Any:
    """The 0-d operand of the Python int ``value`` meeting a tensor of ``dtype``: checked
    to fit an integer dtype (the error the Python op raises), then scalar_operand's."""
    check_scalar_fits(prim.name, value, dtype)
    return scalar_operand(value, dtype, backend)


def fast_op(
    prim: Primitive,
    form: int,
    params: Any = None,
    plan: Callable[[str, Any, Any], Plan | None] | None = None,
) -> Callable[[F], F]:
    """The op with the compiled fast path of ``form`` (:data:`UNARY`, :data:`BINARY`,
    :data:`MATRIX`, :data:`REDUCE`) for ``prim`` in front of it, ``params`` what
    :func:`resolve` is told besides (a reduction's kind), ``plan`` the op's planner (the
    matrix and reduction forms); the op itself where that is not built."""

    def wrap(fn: F) -> F:
        if SPEEDUPS is None:
            return fn
        op = SPEEDUPS.Op(prim, fn, form, params, plan)
        functools.update_wrapper(op, fn, updated=())  # name, doc, __wrapped__: fn's
        return op

    return wrap


def method_op(method: str, prim: Primitive, plan: Callable[[str, Any, Any], Plan | None]) -> None:
    """Serve Tensor's ``method`` (``"getitem"`` or ``"reshape"``) from the compiled base
    with the kernel of ``prim`` and the planner ``plan``: called by the op's family as it
    loads. Until then, and where the module is not built, the Python method serves."""
    if SPEEDUPS is not None:
        fallback = _tensor.python_method("__getitem__" if method == "getitem" else method)
        op = METHOD_OPS[method] = SPEEDUPS.Op(prim, fallback, UNARY, None, plan)
        SPEEDUPS.serve(**{method: op})


#: The Ops serving Tensor's methods (by :func:`method_op`), once their families loaded.
METHOD_OPS: dict[str, Any] = {}


def reduction_methods(**ops: Any) -> None:
    """Serve Tensor's reductions over every axis (``x.sum()``: ``sum=`` the public op, one
    of :data:`~numerix._tensor.REDUCTION_METHODS`) from the compiled base with the op's own
    fast path: called by the reduction family as it loads. Until then, and where the
    module is not built, the Python methods serve."""
    if SPEEDUPS is not None:
        SPEEDUPS.serve(**ops)


if SPEEDUPS is not None:
    SPEEDUPS.configure(_tensor.Tensor, resolve, scalar_operand, int_operand, ShortcutDeclined)
    clears_with_caches(SPEEDUPS.clear)


def attach(ops: Any) -> None:
    """Give the compiled base what Tensor's operators call (``ops``, the namespace the
    Python operators call too) and its Python x[key] and reshape to fall back to."""
    if SPEEDUPS is not None:
        reductions = tuple(map(_tensor.python_method, _tensor.REDUCTION_METHODS))
        SPEEDUPS.attach(ops, _tensor.python_method("__getitem__"),
                        _tensor.python_method("reshape"), reductions)  # fmt: skip
