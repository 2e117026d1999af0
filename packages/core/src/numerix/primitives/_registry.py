"""The registry of primitives: the backend contract, declared once.

A primitive is what a backend implements: a method ``backend.<name>(out, *inputs,
**params)`` that fills ``out`` (a tensor whose shape, dtype and backend the core has
already inferred) and returns it. Each primitive is declared here once, with its
parameters, its shape rule and its dtype rule side by side (and, when grad lands,
its derivative rule), so that the public ops, the tracing backend, the contract
documentation and the conformance kit all read the same declaration.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from numerix._frozen import Frozen
from numerix.errors import ArgumentError

if TYPE_CHECKING:
    from numerix._tensor import Tensor

__all__ = [
    "Primitive", "PrimitiveRegistry", "REGISTRY", "CONTRACT_VERSION", "Block", "BLOCKS",
    "declare_block", "vjp_rule", "fallback_rule", "nondifferentiable", "NONDIFFERENTIABLE", "CONTRACT_CHANGES",
    "batch_rule", "batch_loops", "Loops",
    "op_name", "unknown_kind", "REQUIRED", "REQUIRED_FOR_COMPLEX",
]  # fmt: skip

#: The version of the backend contract this core implements. A plugin declares the
#: contract version it was built for; the core refuses any other major version.
CONTRACT_VERSION = 2

#: What each contract version changed for a backend, for the message that refuses a
#: backend built for an older one.
CONTRACT_CHANGES = {
    2: "the reductions (sum, prod, max, min, all, any), argmax/argmin, the cumulative "
    "ops, the window reductions and the window scatters are one primitive per family "
    "with a kind parameter: reduce, argreduce, cumulative, window_reduce, window_scatter",
}


def unknown_kind(op: str, kind: object, kinds: tuple[str, ...]) -> ArgumentError:
    """The error for a ``kind`` that is not one of ``kinds`` (the parameter of a primitive
    family), naming ``op`` and the kinds it takes."""
    return ArgumentError(f"{op}: unknown kind {kind!r}; the kinds are {', '.join(kinds)}")


class Primitive(Frozen):
    """One primitive of the backend contract.

    :param name: the backend method that implements it.
    :param family: the op family (``creation``, ``elementwise``, ``reduction``, ...).
    :param inputs: names of the tensor inputs, in order (``*name`` for a sequence).
    :param params: names of the static parameters the kernel takes, as keywords.
    :param shape_rule: ``(*input_shapes, **params) -> out_shape``; every primitive has
        one (``tests/test_primitive_rules.py`` walks the registry).
    :param dtype_rule: ``(*input_dtypes, **params) -> out_dtype``; every primitive has one.
    :param vjp: the derivative rule (reverse mode), attached with :func:`vjp_rule`
        beside the declaration, or :data:`NONDIFFERENTIABLE`.
    :param doc: one line for the contract page.
    :param out_params: the parameters only the rules read, never the kernel: what fixes
        the output where no input does (``shape`` for reshape and broadcast, ``shape``
        and ``dtype`` for the creation primitives). :meth:`bind` passes them to the
        rules and the rest of ``params`` to the kernel, which reads them from ``out``.
    :param batch: the batching rule (:func:`numerix.vmap`), attached with
        :func:`batch_rule` beside the declaration, or a :class:`Loops` declaration.
    """

    __slots__ = (
        "batch", "doc", "dtype_rule", "extra", "fallback", "family", "inputs", "name",
        "out_params", "params", "shape_rule", "vjp",
    )  # fmt: skip

    name: str
    family: str
    inputs: tuple[str, ...]
    params: tuple[str, ...]
    shape_rule: Callable[..., tuple[int, ...]]
    dtype_rule: Callable[..., Any]
    doc: str
    vjp: Callable[..., Any] | None
    extra: dict[str, Any]
    out_params: tuple[str, ...]
    #: the core's version of an optional primitive, ``fallback(out, *inputs, **params)``
    #: (see :func:`fallback_rule`); None for a required one (:data:`REQUIRED`)
    fallback: Callable[..., Any] | None
    #: the batching rule (see :func:`batch_rule`), a :class:`Loops`, or None
    batch: Callable[..., Any] | Loops | None

    # a declaration is itself: equal to and hashed as no other
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __init__(
        self,
        name: str,
        family: str,
        inputs: tuple[str, ...],
        params: tuple[str, ...],
        shape_rule: Callable[..., tuple[int, ...]],
        dtype_rule: Callable[..., Any],
        doc: str,
        vjp: Callable[..., Any] | None = None,
        extra: dict[str, Any] | None = None,
        out_params: tuple[str, ...] = (),
    ) -> None:
        self._set(
            name=name, family=family, inputs=inputs, params=params, shape_rule=shape_rule,
            dtype_rule=dtype_rule, doc=doc, vjp=vjp, extra={} if extra is None else extra,
            out_params=out_params, fallback=None, batch=None,
        )  # fmt: skip

    #: ``prim.bind(*inputs, backend=None, **params) -> Tensor``: run the rules, build
    #: ``out``, find the backend the operands meet on and call the kernel (or record the
    #: call when that backend traces). Installed by :mod:`numerix._dispatch`, which
    #: chooses once between the plain call and the one that checks each kernel's result
    #: against the rules (``[debug] check_rules``).
    bind: ClassVar[Callable[..., Tensor]]

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"

    @property
    def differentiable(self) -> bool:
        """Whether a derivative flows through this primitive (it has a rule)."""
        return self.vjp is not None and self.vjp is not NONDIFFERENTIABLE

    @property
    def required(self) -> bool:
        """Whether every backend implements it (:data:`REQUIRED`, and for a backend
        holding complex dtypes :data:`REQUIRED_FOR_COMPLEX`); the others have a core
        fallback written with the required ones."""
        return self.name in REQUIRED or self.name in REQUIRED_FOR_COMPLEX


def op_name(name: str, params: Mapping[str, Any]) -> str:
    """The public op a call of primitive ``name`` with ``params`` stands for, for messages:
    the primitive's ``extra["op_name"]`` filled with its ``kind`` (``reduce`` with kind
    ``max``: ``max``), else ``name``."""
    p = REGISTRY._prims.get(name)
    form = None if p is None else p.extra.get("op_name")
    if form is None or "kind" not in params:
        return name
    return str(form).format(kind=params["kind"])


class PrimitiveRegistry:
    """An explicit registry object: primitives are declared into it by name."""

    def __init__(self) -> None:
        self._prims: dict[str, Primitive] = {}

    def declare(
        self,
        name: str,
        family: str,
        *,
        inputs: tuple[str, ...],
        params: tuple[str, ...] = (),
        shape_rule: Callable[..., tuple[int, ...]],
        dtype_rule: Callable[..., Any],
        out_params: tuple[str, ...] = (),
        doc: str,
        **extra: Any,
    ) -> Primitive:
        if name in self._prims:
            raise ValueError(f"primitive {name!r} is declared twice")
        p = Primitive(
            name, family, inputs, params, shape_rule, dtype_rule, doc,
            extra=extra, out_params=out_params,
        )  # fmt: skip
        self._prims[name] = p
        return p

    def __getitem__(self, name: str) -> Primitive:
        return self._prims[name]

    def __contains__(self, name: object) -> bool:
        return name in self._prims

    def __iter__(self) -> Iterator[Primitive]:
        return iter(self._prims.values())

    def __len__(self) -> int:
        return len(self._prims)

    def names(self) -> list[str]:
        return list(self._prims)

    def by_family(self) -> dict[str, list[Primitive]]:
        out: dict[str, list[Primitive]] = {}
        for p in self._prims.values():
            out.setdefault(p.family, []).append(p)
        return out


REGISTRY = PrimitiveRegistry()

#: The required core: the primitives every backend implements, each with why no
#: composition of the others gives it exactly (numpy's results, special values and
#: all). Every other primitive is optional: the core's fallback, written with these,
#: runs where a backend has no method for it. ``docs/contract.md`` lists both sets.
REQUIRED: dict[str, str] = {
    "from_numpy": "the host's way in: every constant, and the creation ops' fallbacks",
    "as_type": "dtype conversion (rounding, saturation, NaN to 0) is the library's own",
    "bitcast": "reading a value's bits (random bits, sign bits) has no arithmetic form",
    "add": "IEEE-rounded arithmetic: no composition rounds as the operation does",
    "subtract": "IEEE-rounded; a + (-1 * b) is wrong for complex infinities",
    "multiply": "IEEE-rounded, wrapping for integers",
    "divide": "IEEE-rounded; a * (1 / b) rounds twice",
    "floor_divide": "integer division (no exact composition for 64-bit integers)",
    "remainder": "the exact floating remainder (fmod) and integer remainder",
    "pow": "IEEE pow and wrapping integer powers; exp(b * log(a)) loses digits",
    "exp": "the exponential (expm1, sinh, cosh, tanh, sigmoid and exp2 are composed from it)",
    "log": "the logarithm (log1p and the inverse hyperbolics are composed from it)",
    "sin": "a transcendental base (tan is sin / cos)",
    "cos": "a transcendental base",
    "atan2": "the angle (atan, asin, acos and complex angles are composed from it)",
    "sqrt": "correctly rounded square root (rsqrt, hypot and cbrt's start use it)",
    "equal": "equality, NaN-aware (not_equal and the classifiers are composed from it)",
    "less": "order, NaN-aware (greater, less_equal, maximum and minimum are composed from it)",
    "bitwise_and": "bit logic (xor, invert, shifts and bit counts are composed from it and or)",
    "bitwise_or": "bit logic",
    "select": "choice by a mask, broadcasting its operands (broadcast is composed from it)",
    "reduce": "sum, prod, max, min, all and any over axes: no loop-free composition",
    "reshape": "a new shape over the same elements in order",
    "gather": "reading elements by index (slices, transposes, reversals, sorts compose it)",
}

#: Required of a backend that holds complex dtypes: the parts of a complex number, as no
#: composition of real arithmetic builds or splits one exactly (``0 * inf`` is NaN).
REQUIRED_FOR_COMPLEX: dict[str, str] = {
    "real": "the real part of a complex number",
    "imag": "the imaginary part of a complex number",
    "conj": "the conjugate of a complex number",
}


class Block(Frozen):
    """A composite a backend may implement natively (Nx's "optional" callbacks).

    The core's version, written with primitives, is the fallback; a backend that has a
    method ``block_<name>(out, *inputs, **params)`` runs instead. ``out`` is the
    inferred output (a tensor, or a tuple of tensors).
    """

    __slots__ = ("batch", "doc", "dtype_rule", "fallback", "family", "inputs", "method", "name",
                 "params", "shape_rule", "vjp")  # fmt: skip

    name: str
    #: the backend's method of this block, ``block_<name>``
    method: str
    family: str
    inputs: tuple[str, ...]
    params: tuple[str, ...]
    doc: str
    #: the derivative rule (see :func:`vjp_rule`); without one, grad differentiates
    #: through the core's fallback.
    vjp: Callable[..., Any] | None
    #: ``(*input_shapes, **params) -> out shape``, a tuple of shapes for a block with
    #: several outputs; every declared block has one (a test walks :data:`BLOCKS`).
    shape_rule: Callable[..., Any] | None
    #: ``(*input_dtypes, **params) -> out dtype``, a tuple of dtypes for several outputs.
    dtype_rule: Callable[..., Any] | None
    #: the core's version, ``fallback(*inputs, **params)`` (see :func:`fallback_rule`): a
    #: backend's native block may call it for inputs its library refuses, through the
    #: registry, without importing the ops layer that writes it
    fallback: Callable[..., Any] | None
    #: the batching rule (see :func:`batch_rule`); without one, :func:`numerix.vmap`
    #: batches the block's core version, primitive by primitive
    batch: Callable[..., Any] | Loops | None

    # a declaration is itself: equal to and hashed as no other
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __init__(
        self,
        name: str,
        family: str,
        inputs: tuple[str, ...],
        params: tuple[str, ...],
        doc: str,
        vjp: Callable[..., Any] | None = None,
        shape_rule: Callable[..., Any] | None = None,
        dtype_rule: Callable[..., Any] | None = None,
        fallback: Callable[..., Any] | None = None,
        batch: Callable[..., Any] | None = None,
    ) -> None:
        self._set(
            name=name, family=family, inputs=inputs, params=params, doc=doc, vjp=vjp,
            shape_rule=shape_rule, dtype_rule=dtype_rule, fallback=fallback, batch=batch,
            # the name of a backend's method, made once and interned: run_block looks it up
            # on the backend's class per call, and the type's attribute cache serves only
            # a name it has seen (a name built per call cost 170 ns against 30)
            method=sys.intern(f"block_{name}"),
        )  # fmt: skip

    @property
    def differentiable(self) -> bool:
        """Whether a derivative flows through this block (a rule, or its fallback)."""
        return self.vjp is not NONDIFFERENTIABLE


BLOCKS: dict[str, Block] = {}


def declare_block(
    name: str,
    family: str,
    *,
    inputs: tuple[str, ...],
    params: tuple[str, ...] = (),
    shape_rule: Callable[..., Any],
    dtype_rule: Callable[..., Any],
    doc: str,
) -> Block:
    """Declare a block (once), with its output rules; see :class:`Block`."""
    if name in BLOCKS:
        raise ValueError(f"block {name!r} is declared twice")
    b = Block(name, family, inputs, params, doc, shape_rule=shape_rule, dtype_rule=dtype_rule)
    BLOCKS[name] = b
    return b


class _NonDifferentiable:
    """The derivative rule of a primitive whose output carries no derivative."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NONDIFFERENTIABLE"


#: Declared as the ``vjp`` of a primitive with no derivative (comparisons, indices,
#: rounding, bitwise and integer ops): its inputs receive no cotangent and its output
#: is a constant to grad.
NONDIFFERENTIABLE: Any = _NonDifferentiable()


def _target(name: str) -> Primitive | Block:
    if name in REGISTRY:
        return REGISTRY[name]
    if name in BLOCKS:
        return BLOCKS[name]
    raise KeyError(f"no primitive or block named {name!r} is declared")


def _attach(name: str, rule: Any) -> None:
    target = _target(name)
    if target.vjp is not None:
        raise ValueError(f"{name!r} already has a derivative rule")
    object.__setattr__(target, "vjp", rule)  # frozen: set once, beside the declaration


def vjp_rule(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Attach a reverse-mode derivative rule to the primitives or blocks ``names``.

    Written in the module that declares them, right after the declaration::

        @vjp_rule("exp")
        def exp_vjp(ops, cotangent, out, x):
            return (cotangent * out,)

    A rule is called as ``rule(ops, cotangent, out, *inputs, **params)``:

    - ``ops`` is the public op namespace (``numerix.ops``), passed in so that this low
      layer never imports the layer above it;
    - ``cotangent`` has ``out``'s shape and dtype (for a block with several outputs,
      both are tuples, and a cotangent may be ``None``, meaning zero);
    - ``inputs`` are the primitive's tensor inputs in declaration order, a sequence
      input (``*tensors``) spread out; ``params`` its static parameters.

    It returns a tuple with one entry per input: the cotangent of that input (same
    shape and dtype as the input: undo any broadcasting), or ``None`` for no
    derivative (an integer input, an index, an input the output does not depend on).
    Rules are written with numerix ops only, so they run eagerly, inside a trace and
    under every compiler, and can themselves be differentiated.
    """

    def attach(rule: Callable[..., Any]) -> Callable[..., Any]:
        for name in names:
            _attach(name, rule)
        return rule

    return attach


def fallback_rule(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Record ``fn`` as the core's version of block or optional primitive ``name``,
    written in the module of the public op, beside its call.

    A block's fallback takes the block's inputs and params (:attr:`Block.fallback`)::

        @fallback_rule("cholesky")
        def cholesky_fallback(x, *, upper): ...

    An optional primitive's takes what its kernel takes, ``(out, *inputs, **params)``
    (``out`` carries the inferred shape, dtype and backend, and the rules-only
    parameters are read from it), and returns a tensor of ``out``'s shape and dtype on
    ``out.backend``, computed with numerix ops that bottom out in required primitives
    (:attr:`Primitive.fallback`); a backend without the primitive runs it, eagerly and
    under every compiler::

        @fallback_rule("sigmoid")
        def sigmoid_fallback(out, x):
            return 1 / (1 + ops.exp(-x))
    """

    def attach(fn: Callable[..., Any]) -> Callable[..., Any]:
        target = _target(name)
        if isinstance(target, Primitive) and target.required:
            raise ValueError(f"primitive {name!r} is required: it has no fallback")
        if target.fallback is not None:
            raise ValueError(f"{name!r} already has a fallback")
        object.__setattr__(target, "fallback", fn)  # frozen: set once, beside the op
        return fn

    return attach


def nondifferentiable(*names: str) -> None:
    """Declare primitives (or blocks) whose output carries no derivative."""
    for name in names:
        _attach(name, NONDIFFERENTIABLE)


class Loops:
    """The batching declaration of a primitive that :func:`numerix.vmap` runs once per
    example (and stacks), with the reason no batched form exists."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return f"Loops({self.reason!r})"


def _attach_batch(name: str, rule: Any) -> None:
    target = _target(name)
    if target.batch is not None:
        raise ValueError(f"{name!r} already has a batching rule")
    object.__setattr__(target, "batch", rule)  # frozen: set once, beside the declaration


def batch_rule(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Attach a batching rule (for :func:`numerix.vmap`) to the primitives or blocks
    ``names``, written beside their declaration, as derivative rules are::

        @batch_rule("reduce")
        def reduce_batch(ops, call, args, batched, *, kind, axes, keepdims):
            return call(args[0], kind=kind, axes=shifted(axes), keepdims=keepdims)

    A rule is called as ``rule(ops, call, args, batched, **params)`` when at least one
    input carries the batch:

    - ``ops`` is the public op namespace (``numerix.ops``);
    - ``call(*inputs, **params)`` runs the same primitive or block again (on the
      backend the inputs meet on, or recorded into the active trace);
    - ``args`` are the inputs in declaration order (a sequence input spread out); an
      input whose entry of ``batched`` is True carries the batch as its axis 0, one
      more than the primitive's rules expect; the others are as the unbatched
      program had them;
    - ``params`` are the node's parameters (the rules-only ones included).

    It returns the output with the batch as axis 0 (a tuple of them for a block with
    several outputs), computed with ordinary primitives: a batched program is a program
    every backend and compiler already runs. Where no batched form exists, a rule may
    run ``numerix.primitives._batch.loop``, or the primitive be declared with
    :func:`batch_loops` and a reason.
    """

    def attach(rule: Callable[..., Any]) -> Callable[..., Any]:
        for name in names:
            _attach_batch(name, rule)
        return rule

    return attach


def batch_loops(*names: str, reason: str) -> None:
    """Declare that :func:`numerix.vmap` batches ``names`` by running them once per
    example and stacking the results, for ``reason`` (said in the contract page)."""
    if not reason.strip():
        raise ValueError("batch_loops: give the reason no batched form exists")
    for name in names:
        _attach_batch(name, Loops(reason))
