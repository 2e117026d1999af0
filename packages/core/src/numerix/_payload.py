"""A primitive written once: payload functions, from which the core derives the kernel
method, its lowering and the fast path's shortcut (docs/contract.md, "One function per
primitive").

A backend writes, as a class attribute named after the primitive, either

- ``elementwise(fn)`` / ``elementwise.per_dtype(build)``: an element-wise primitive as
  a function of payloads (``torch.add``), or a builder ``build(dtype)`` returning that
  function for operands of ``dtype`` (kept per dtype), for a primitive computed apart
  for some dtypes (unsigned integers on their signed bits); or
- ``payload(fn)``: any other primitive as ``fn(*payloads, **params)``, the primitive's
  static parameters as keywords, and the output's ``shape`` / ``dtype`` as keywords
  where the primitive's rules take them (``out_params``) or ``reads`` names them.

:class:`numerix.backend.Backend` turns each into the method the contract calls, through
the class's :meth:`~numerix.backend.Backend.elementwise_kernel` and
:meth:`~numerix.backend.Backend.payload_kernel` (a backend whose payload functions need
a step around them, JAX's jit per shape, overrides those two), and its lowering and
shortcut read the same function: none can drift from the others.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from numerix.primitives._registry import REGISTRY, Primitive

__all__ = ["elementwise", "payload", "payload_of", "derive_payloads", "default_kernel"]


class elementwise:
    """An element-wise primitive as a function of payloads, per operand dtype.

    ``elementwise(fn)``: ``fn`` for every dtype; ``elementwise.per_dtype(build)``:
    ``build(dtype)`` for operands of ``dtype`` (the first input's), called once per
    dtype. Calling the declaration with a dtype returns that function."""

    __slots__ = ("build", "memo")

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.build: Callable[[Any], Callable[..., Any]] = lambda dtype: fn
        self.memo: dict[Any, Callable[..., Any]] = {}

    @classmethod
    def per_dtype(cls, build: Callable[[Any], Callable[..., Any]]) -> elementwise:
        made = cls.__new__(cls)
        made.build, made.memo = build, {}
        return made

    if TYPE_CHECKING:  # a class attribute holding one reads as the method derived from it

        def __get__(self, obj: Any, owner: Any) -> Callable[..., Any]: ...

    def __call__(self, dtype: Any) -> Callable[..., Any]:
        f = self.memo.get(dtype)
        if f is None:
            f = self.memo[dtype] = self.build(dtype)
        return f


class payload:
    """A primitive as ``fn(*payloads, **params)``: its static parameters as keywords,
    and the output's ``shape`` and ``dtype`` as keywords where the primitive's rules
    take them (:attr:`~numerix.primitives.Primitive.out_params`) or ``reads`` names
    them (``reads=("dtype",)``: a reduction's output dtype)."""

    __slots__ = ("fn", "reads")

    def __init__(self, fn: Callable[..., Any], *, reads: tuple[str, ...] = ()) -> None:
        if not set(reads) <= {"shape", "dtype"}:
            raise TypeError(f"payload(reads={reads!r}): an output reads as 'shape' or 'dtype'")
        self.fn, self.reads = fn, reads

    if TYPE_CHECKING:

        def __get__(self, obj: Any, owner: Any) -> Callable[..., Any]: ...

    def out_keywords(self, prim: Primitive) -> tuple[str, ...]:
        """What ``fn`` reads of the output, as keywords."""
        return tuple(dict.fromkeys((*prim.out_params, *self.reads)))


def payload_of(cls: type, op: str) -> elementwise | payload | None:
    """The declaration class ``cls``'s method for ``op`` was derived from, or None for a
    method written as one (a subclass's own, or one copying a derived method's
    attributes)."""
    method = getattr(cls, op, None)
    mark = getattr(method, "numerix_payload", None)
    return mark[1] if mark is not None and mark[0] is method else None


def _mark(kernel: Any, name: str, spec: Any) -> Any:
    kernel.__name__ = kernel.__qualname__ = name
    kernel.numerix_payload = (kernel, spec)
    return kernel


def default_kernel(spec: elementwise | payload, prim: Primitive) -> Callable[..., Any]:
    """The kernel calling the payload function on the inputs' data, with its lowering
    (the same function, parameters bound): what a backend whose payload functions run
    as they are (numpy, PyTorch) gets."""
    if isinstance(spec, elementwise):
        memo = spec.memo
        if len(prim.inputs) == 1:

            def unary(self: Any, out: Any, x: Any) -> Any:
                out.data = (memo.get(x.dtype) or spec(x.dtype))(x.data)
                return out

            method: Any = unary
        else:

            def binary(self: Any, out: Any, x1: Any, x2: Any) -> Any:
                out.data = (memo.get(x1.dtype) or spec(x1.dtype))(x1.data, x2.data)
                return out

            method = binary
        method.lowering = lambda params, ins, out: spec(ins[0][1])
        return _mark(method, prim.name, spec)
    fn, reads = spec.fn, spec.out_keywords(prim)
    kernel: Any
    kernel = _payload_method(prim, fn, reads)

    def lowering(params: Any, ins: Any, out: Any) -> Any:
        given = dict(params, **{k: out[0] if k == "shape" else out[1] for k in reads})
        return functools.partial(fn, **given) if given else fn

    kernel.lowering = lowering
    return _mark(kernel, prim.name, spec)


def _payload_method(prim: Primitive, fn: Callable[..., Any], reads: tuple[str, ...]) -> Any:
    """The method ``def <name>(self, out, <inputs>, *, <params>)`` calling ``fn`` on the
    inputs' data with the parameters (and what it reads of ``out``) by name: spelled out,
    as dataclasses writes its methods, since a method taking ``**params`` and passing
    them on costs a third of a microsecond a call more (``x.T`` on torch)."""
    ins = prim.inputs
    args = [f"*[t.data for t in {n[1:]}]" if n[0] == "*" else f"{n}.data" for n in ins]
    star = ["*"] if prim.params and not any(n[0] == "*" for n in ins) else []
    head = ", ".join(["self", "out", *ins, *star, *prim.params])
    call = ", ".join([*args, *(f"{p}={p}" for p in prim.params), *(f"{r}=out.{r}" for r in reads)])
    source = f"def {prim.name}({head}):\n    out.data = fn({call})\n    return out\n"
    scope: dict[str, Any] = {"fn": fn}
    exec(compile(source, f"<payload {prim.name}>", "exec"), scope)
    return scope[prim.name]


def derive_payloads(cls: Any) -> None:
    """Replace each payload declaration ``cls`` holds (its own or a mixin's) by the
    method the class's hooks derive from it."""
    for prim in REGISTRY:
        spec = getattr(cls, prim.name, None)
        if isinstance(spec, elementwise):
            if len(prim.inputs) not in (1, 2) or prim.params or prim.out_params:
                raise TypeError(
                    f"{cls.__name__}.{prim.name}: elementwise() declares a unary or binary "
                    f"element-wise primitive without parameters; declare it with payload()"
                )
            setattr(cls, prim.name, cls.elementwise_kernel(spec, prim))
        elif isinstance(spec, payload):
            setattr(cls, prim.name, cls.payload_kernel(spec, prim))
