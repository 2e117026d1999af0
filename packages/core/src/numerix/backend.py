"""The backend contract: :class:`Backend`.

A backend holds tensors' data (its native array: ``numpy.ndarray``, ``jax.Array``,
``torch.Tensor``) and implements the primitives declared in
:data:`numerix.primitives.REGISTRY`. Every primitive method has the form::

    def add(self, out: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
        out.data = <native add of x1.data and x2.data>
        return out

``out`` arrives with its ``shape``, ``dtype`` and ``backend`` already inferred by the
core; the inputs have been validated and promoted (element-wise inputs share one
dtype and broadcast to ``out.shape``). A backend only fills ``out.data``; it may
assume nothing it receives is malformed.

A backend instance carries its options (device, client ...): ``binary`` has one
instance, ``xla:cuda:1`` and ``xla:cuda:0`` are two. Instances are created and
cached by :func:`numerix.get_backend`, so two tensors are on the same backend and
device exactly when ``a.backend is b.backend``.
"""

from __future__ import annotations

import contextvars
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from numerix._frozen import Frozen
from numerix._payload import default_kernel, derive_payloads, elementwise, payload, payload_of
from numerix.dtypes import ALL_DTYPES
from numerix.errors import BackendOptionError, NumerixError, UnsupportedDTypeError, close_name
from numerix.primitives._registry import REGISTRY, REQUIRED, REQUIRED_FOR_COMPLEX, Primitive

if TYPE_CHECKING:
    from numerix._tensor import Tensor
    from numerix.dtypes import DType

__all__ = [
    "Backend", "Option", "SliceByIndexing", "check_options", "clamp_starts", "lowers",
    "option_table", "pad_plan", "forget_fast_kernels", "ShortcutDeclined", "is_fallback", "fallback_kernel",
    "native_primitives", "required_missing", "elementwise", "payload", "payload_of",
]  # fmt: skip


class ShortcutDeclined(Exception):
    """Raised by a :meth:`Backend.fast_kernel` shortcut that cannot serve this one call
    (xla's, asked to trace a 64-bit dtype after the program turned JAX's 64-bit mode off):
    the compiled fast path calls the kernel instead. Any other error a shortcut raises is
    the call's own, raised as it is."""


def forget_fast_kernels() -> None:
    """Make the compiled fast path ask every backend's :meth:`Backend.fast_kernel` again:
    for a backend that stops honouring a shortcut it gave (xla retires its shortcuts past
    its cache's bound). Each op's memo is dropped on its next call; nothing where the
    compiled module is not loaded."""
    compiled = sys.modules.get("numerix._speedups")  # loaded with numerix, or never
    if compiled is not None:
        compiled.clear()


#: What :func:`lowers` takes: ``(params, inputs, out) -> a function of payloads or None``.
Lowering = Callable[[Mapping[str, Any], tuple[Any, ...], tuple[Any, ...]], Any]


_F = TypeVar("_F", bound=Callable[..., Any])


def lowers(build: Lowering) -> Callable[[_F], _F]:
    """Attach a lowering (see :meth:`Backend.lower`) to the primitive or block method it
    decorates (a block of one output, ``block_softmax``, as a primitive's).

    ``build(params, inputs, out)`` returns the function of payloads for one node of a
    graph (or None where the method has to run, e.g. for a dtype it handles apart)::

        @lowers(lambda params, inputs, out: np.add)
        def add(self, out, x1, x2):
            out.data = np.add(x1.data, x2.data)
            return out
    """

    def attach(method: _F) -> _F:
        method.lowering = build  # type: ignore[attr-defined]
        return method

    return attach


# ------------------------------------------------------------------ fallbacks


def fallback_kernel(prim: Primitive) -> Callable[..., Any]:
    """The kernel a backend class without a method for optional primitive ``prim`` gets:
    the core's fallback (:attr:`Primitive.fallback`, looked up per call: the ops layer
    attaches it), its result's data put in ``out``."""
    name = prim.name
    outs = prim.out_params

    def kernel(self: Backend, out: Tensor, *inputs: Any, **params: Any) -> Tensor:
        fallback = prim.fallback
        if fallback is None:
            load_fallbacks()  # the ops layer attaches them on first need
            fallback = prim.fallback
        if fallback is None:
            raise NotImplementedError(
                f"backend {self.name!r} does not implement primitive {name!r}, and the core has "
                f"no fallback for it; move the tensor to a backend that does with "
                f"numerix.backend_transfer(t, 'binary')"
            )
        if outs:  # what the kernel reads of out, the fallback reads as a keyword
            params = {**params, **{k: getattr(out, k) for k in outs}}
        r = fallback(out, *inputs, **params)
        out.data = r.data
        return out

    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = f"``{name}`` by the core's fallback (the backend has no method for it)."
    kernel.numerix_fallback = prim  # type: ignore[attr-defined]
    return kernel


def _no_fallbacks() -> None:
    pass


#: ``() -> None``: attach the core's fallbacks (:mod:`numerix.ops.fallbacks`) if they
#: are not attached yet. The ops layer (above this module) installs it as it loads, and
#: the fallbacks load on the first call of one.
load_fallbacks: Callable[[], None] = _no_fallbacks


def _install_fallbacks(cls: type) -> None:
    for prim in REGISTRY:
        if not prim.required and getattr(cls, prim.name, None) is None:
            setattr(cls, prim.name, fallback_kernel(prim))


def is_fallback(method: Any) -> bool:
    """Whether a backend class's ``method`` for a primitive is the core's fallback."""
    inner = getattr(method, "_numerix_unchecked", method)  # under the rule check
    return getattr(inner, "numerix_fallback", None) is not None


def native_primitives(cls: type) -> list[str]:
    """The primitives backend class ``cls`` implements itself (not by a core fallback)."""
    return [
        p.name
        for p in REGISTRY
        if callable(m := getattr(cls, p.name, None))
        and not is_fallback(m)
        and m is not getattr(Backend, p.name, None)
    ]


def required_missing(cls: type) -> list[str]:
    """The required primitives backend class ``cls`` has no method of its own for (the
    complex ones where it holds complex dtypes), in registry order; the host exchange
    :class:`Backend` declares for it to override counts as missing."""
    claimed = getattr(cls, "supported_dtypes", None)
    complex_ = claimed is None or any(d.kind == "c" for d in claimed)
    need = [*REQUIRED, *(REQUIRED_FOR_COMPLEX if complex_ else ())]
    return [
        n for n in need
        if not callable(getattr(cls, n, None)) or getattr(cls, n) is getattr(Backend, n, None)
    ]  # fmt: skip


# ------------------------------------------------------------------ options
_Type = type  # the builtin, where a field named ``type`` shadows it


class Option(Frozen):
    """One option a backend or a compiler takes, declared in its
    :attr:`Backend.accepted_options` (or :attr:`numerix.defn.Compiler.accepted_options`)
    table and checked by :func:`check_options`.

    :param name: the keyword (``device``).
    :param default: the value when the option is not given; a callable is called with
        the options resolved so far (those before it in the table) to compute it (a
        default read from the settings, or one that depends on another option), and
        ``None`` given for such an option means "the default".
    :param type: the type a value must have (``int``: not ``bool``); None: any.
        ``None`` is accepted where the default is ``None`` or computed.
    :param choices: the values allowed, or None for any of :attr:`type`.
    :param minimum: for ints, the smallest value allowed.
    :param fix: what the error of a refused value adds, after the allowed values.
    """

    __slots__ = ("choices", "default", "fix", "minimum", "name", "type")

    name: str
    default: Any
    type: _Type | None
    choices: tuple[Any, ...] | None
    minimum: int | None
    fix: str

    def __init__(
        self,
        name: str,
        default: Any = None,
        type: _Type | None = None,
        choices: tuple[Any, ...] | None = None,
        minimum: int | None = None,
        fix: str = "",
    ) -> None:
        self._set(name=name, default=default, type=type, choices=choices, minimum=minimum, fix=fix)

    def refuse(self, owner: str, value: Any) -> str | None:
        """Why ``value`` is refused (the message after ``owner``), or None."""
        if value is None and (self.default is None or callable(self.default)):
            return None
        if self.choices is not None:
            if any(value is c or (type(value) is type(c) and value == c) for c in self.choices):
                return None
            if len(self.choices) == 1:
                msg = f"{owner}: {self.name} must be {self.choices[0]!r}, got {value!r}"
            else:
                listed = ", ".join(str(c) for c in self.choices)
                msg = f"{owner}: unknown {self.name} {value!r}; {self.name}s are {listed}"
                msg += close_name(value, self.choices)
            return msg + (f"; {self.fix}" if self.fix else "")
        t = self.type
        if t is None:
            return None
        ok = isinstance(value, t) and not (t is int and isinstance(value, bool))
        if ok and self.minimum is not None and value < self.minimum:
            ok = False
        if ok:
            return None
        what = {bool: "True or False", str: "a str", float: "a number"}.get(t, f"a {t.__name__}")
        if t is int:
            what = {0: "a non-negative int", 1: "a positive int"}.get(
                self.minimum,  # type: ignore[arg-type]
                "an int" if self.minimum is None else f"an int >= {self.minimum}",
            )
        if self.default is None or callable(self.default):
            what += " or None"
        return f"{owner}: {self.name} must be {what}, got {value!r}" + (
            f"; {self.fix}" if self.fix else ""
        )


def option_table(cls: Any) -> tuple[Option, ...]:
    """The options ``cls`` (a backend or compiler class) takes: its ``accepted_options``,
    or, for a class that declares only ``default_options`` (a name → default mapping),
    one untyped :class:`Option` per entry."""
    declared = getattr(cls, "accepted_options", None)
    if declared is not None:
        return tuple(declared)
    return tuple(Option(k, v) for k, v in getattr(cls, "default_options", {}).items())


def _derive_defaults(cls: Any) -> None:
    """Keep a subclass's two declarations of its options in step: a table declared
    gives ``default_options``; a ``default_options`` mapping declared alone replaces the
    table it would inherit."""
    own = cls.__dict__
    if own.get("accepted_options") is not None and "default_options" not in own:
        cls.default_options = {
            o.name: None if callable(o.default) else o.default for o in cls.accepted_options
        }
    elif "default_options" in own and "accepted_options" not in own:
        cls.accepted_options = None


def check_options(
    owner: str,
    table: Sequence[Option],
    options: Mapping[str, Any],
    error: type[NumerixError] = BackendOptionError,
) -> dict[str, Any]:
    """The options of ``table`` resolved from ``options``: defaults filled in (in table
    order, so a computed default sees the options before it), each value checked.

    :param owner: how errors name the backend or compiler (``"backend 'xla'"``).
    :raises error: an option the table does not have (the message names the accepted
        ones, and the closest as "did you mean"), or a value :meth:`Option.refuse`s.
    """
    names = [o.name for o in table]
    unknown = [k for k in options if k not in names]
    if unknown:
        accepted = ", ".join(names) or "no options"
        raise error(
            f"{owner} does not take option(s) {', '.join(map(repr, unknown))}; it accepts: "
            f"{accepted}{close_name(unknown[0], names)}"
        )
    merged: dict[str, Any] = {}
    for o in table:
        value = options.get(o.name)
        if o.name not in options or (value is None and callable(o.default)):
            value = o.default(merged) if callable(o.default) else o.default
        why = o.refuse(owner, value)
        if why is not None:
            raise error(why)
        merged[o.name] = value
    return merged


class Backend:
    """Base class of every backend.

    Subclasses set :attr:`name`, :attr:`accepted_options` (the options they take: a
    table of :class:`Option`) and :attr:`spec_fields` (how ``"name:a:b"`` maps onto
    options), and implement the primitives.
    """

    #: The name users select the backend by (``"binary"``, ``"xla"``).
    name: ClassVar[str] = ""
    #: The options the backend takes: name, type, allowed values, default
    #: (:class:`Option`), checked by :meth:`validate_options`. Unknown options are refused.
    accepted_options: ClassVar[Sequence[Option] | None] = None
    #: The options' defaults by name (a computed default reads as None). Derived from
    #: :attr:`accepted_options`; a backend may declare this mapping alone instead (its
    #: options are then untyped).
    default_options: ClassVar[Mapping[str, Any]] = {}
    #: The positional fields of a ``"name:field1:field2"`` spec string.
    spec_fields: ClassVar[tuple[str, ...]] = ()
    #: The dtypes this backend holds. Others raise UnsupportedDTypeError.
    supported_dtypes: ClassVar[frozenset[DType] | None] = None
    #: True for a backend whose data is host memory that any other backend may adopt
    #: implicitly (as Nx moves BinaryBackend tensors). Only ``binary`` sets it.
    is_host: ClassVar[bool] = False
    #: Where this backend's numbers knowingly differ from numpy's, one sentence each
    #: (``docs/known-differences.md``); ``numerix info`` lists them.
    numeric_notes: ClassVar[tuple[str, ...]] = ()

    #: Whether the class gets the core's fallback kernel for each optional primitive it
    #: has no method for (docs/contract.md). False for the core's own backends that answer
    #: every primitive through ``__getattr__`` (the tracer, the deallocated).
    install_fallbacks: ClassVar[bool] = True

    __slots__ = ("_key", "device", "options")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _derive_defaults(cls)
        derive_payloads(cls)
        held = cls.__dict__.get("supported_dtypes")
        if held is not None and held >= frozenset(ALL_DTYPES):
            cls.supported_dtypes = None  # every dtype: nothing to check per call
        if cls.install_fallbacks:
            _install_fallbacks(cls)

    def __init__(self, **options: Any) -> None:
        self.options = self.validate_options(options)
        self.device = self.device_name()
        self._key = (self.name, tuple(sorted(self.options.items())))

    # ------------------------------------------------------------ identity
    @classmethod
    def validate_options(cls, options: Mapping[str, Any]) -> dict[str, Any]:
        """Check ``options`` against :attr:`accepted_options` and fill in the defaults
        (:func:`check_options`; errors are :class:`~numerix.errors.BackendOptionError`).
        A backend overrides it only for a check across options, calling this first."""
        return check_options(f"backend {cls.name!r}", option_table(cls), options)

    def device_name(self) -> str:
        """The device string shown in reprs and errors (``cpu``, ``cuda:1``)."""
        return str(self.options.get("device", "cpu"))

    @classmethod
    def is_available(cls, **options: Any) -> bool:
        """Whether this backend (and the device in ``options``) exists on this machine."""
        return True

    @classmethod
    def check_target(cls, target: str) -> tuple[str, str] | None:
        """Whether the installed build serves the accelerator ``target`` asks for
        (``XLA_TARGET`` / ``LIBTORCH_TARGET``): None when it does, else ``(problem, fix)``
        for ``numerix doctor``, the fix being the command that installs the right build."""
        return None

    @classmethod
    def devices(cls) -> list[str]:
        """The devices this backend sees on this machine."""
        return ["cpu"]

    def __repr__(self) -> str:
        return f"{self.name}({self.device})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_backend, (self.name, self.options))

    def __getattr__(self, attr: str) -> Any:
        # Only called for a missing attribute: a primitive the backend doesn't implement.
        if attr in REGISTRY:
            raise NotImplementedError(
                f"backend {self.name!r} does not implement primitive {attr!r}; "
                f"move the tensor to a backend that does with numerix.backend_transfer(t, 'binary')"
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")

    # ------------------------------------------------------------ host exchange
    def from_numpy(self, out: Tensor, array: np.ndarray) -> Tensor:
        """Fill ``out`` from a host array of exactly ``out.dtype`` and ``out.shape``."""
        raise NotImplementedError

    def to_numpy(self, x: Tensor) -> np.ndarray:
        """The data of ``x`` as a host numpy array (may share memory; do not write to it)."""
        raise NotImplementedError

    def from_dlpack(self, out: Tensor, capsule_owner: Any) -> Tensor | None:
        """Adopt an object with ``__dlpack__`` without a copy, or return None to go through host."""
        return None

    @property
    def device_count(self) -> int:
        """How many devices this backend's tensors are spread over (1; a backend over
        several devices, such as ``get_backend("xla", devices=4)``, says how many; see
        :func:`numerix.device_put`)."""
        return 1

    def process_group(self) -> tuple[int, int]:
        """``(index, count)`` of this process among the processes of a computation over
        several (see :mod:`numerix.distributed`); ``(0, 1)``: one process."""
        return 0, 1

    def all_reduce(self, out: Tensor, x: Tensor, op: str) -> Tensor | None:
        """Every process's ``x`` combined by ``op`` (``"sum"``, ``"max"``, ``"min"``) into
        ``out``, in every process; None where the backend cannot (the default: one
        process, which the core serves itself)."""
        return None

    def all_gather(self, out: Tensor, x: Tensor) -> Tensor | None:
        """Every process's ``x`` stacked along a new first axis (by process index) into
        ``out``, in every process; None where the backend cannot."""
        return None

    def put_sharded(self, out: Tensor, x: Tensor, axis: int | None) -> Tensor | None:
        """``x`` (a concrete tensor of any backend) split along ``axis`` over this
        backend's :attr:`device_count` devices, each holding an equal slice (the core
        checked that the axis divides evenly), or replicated on each (``axis=None``), as
        ``out``; None where the backend cannot (the default). See
        :func:`numerix.device_put`."""
        return None

    def to_dlpack(self, x: Tensor, *args: Any, **kwargs: Any) -> Any:
        """A DLPack capsule of ``x``'s data (``__dlpack__``'s arguments passed on). The
        default exports a host copy (``to_numpy``), on the CPU device
        (:meth:`dlpack_device`); a backend whose library speaks DLPack exports its own
        array without a copy."""
        return np.array(self.to_numpy(x), copy=True).__dlpack__(*args, **kwargs)

    def dlpack_device(self, x: Tensor) -> tuple[int, int]:
        """``__dlpack_device__`` of ``x``'s data; the default's host copy is on the CPU
        (device type 1, id 0)."""
        return (1, 0)

    def synchronize(self, x: Tensor) -> None:
        """Wait until ``x``'s value is computed (asynchronous backends; timing code calls it)."""

    def deallocate(self, x: Tensor) -> None:
        """Free ``x``'s memory now. The default drops the reference."""

    def device_memory(self) -> tuple[int, int] | None:
        """Optional: ``(bytes in use, peak bytes in use)`` on this backend's device(s),
        the peak since :meth:`reset_device_memory_peak` (since the process started where
        the library cannot reset it), for :func:`numerix.benchmark`'s
        ``device_memory_bytes``. None (the default): the backend cannot tell (a host
        backend's memory is the host's, which ``tracemalloc`` measures)."""
        return None

    def reset_device_memory_peak(self) -> None:
        """Optional: start :meth:`device_memory`'s peak afresh (the default: nothing)."""

    #: True for a backend whose kernels flush subnormal floats to zero (XLA on CPU and GPU
    #: does, for speed); the kit then checks that they are flushed instead of kept.
    flushes_denormals: ClassVar[bool] = False
    #: True for a backend that records a graph instead of computing (tracing, inside defn).
    is_tracing: ClassVar[bool] = False

    def lower(
        self,
        op: str,
        params: Mapping[str, Any],
        inputs: tuple[tuple[tuple[int, ...], DType], ...],
        out: tuple[tuple[int, ...], DType],
    ) -> Any:
        """Primitive ``op`` (or a one-output block's method, ``block_<name>``) as a plain
        function of payloads, for compilers that replay a graph (the ``evaluator``, the
        torch compiler), or None.

        A lowering is a callable taking the ``data`` of the inputs (whose shapes and
        dtypes are ``inputs``) and returning exactly what the primitive would have put
        in ``out.data`` for an output of type ``out``, with ``params`` already bound.
        With None the compiler calls the method on ``Tensor`` shells; a
        lowering skips the per-call cost of those shells (a few hundred nanoseconds a
        node). It must compute the same values as the method, bit for bit (the kit's
        ``compiled`` family checks).

        The default asks the method itself: a method decorated with :func:`lowers`
        carries its lowering, built here from ``(params, inputs, out)``. A subclass that
        overrides the method without the decorator drops the lowering with it.
        """
        build = getattr(getattr(type(self), op, None), "lowering", None)
        return None if build is None else build(params, inputs, out)

    #: Optional: what makes a payload of a 0-d result a shortcut (:meth:`fast_kernel`)
    #: returns in another type: numpy's ufuncs give numpy scalars for 0-d operands, which
    #: ``numpy.asarray`` makes the 0-d arrays the kernel would store (the binary backend).
    #: None (the default): a 0-d result of another type sends 0-d calls to the kernel.
    scalar_payload: ClassVar[Callable[[Any], Any] | None] = None

    def fast_kernel(
        self, op: str, form: str, dtype: DType
    ) -> tuple[Callable[..., Any], type] | tuple[Callable[..., Any], type, Any] | None:
        """Optional: a shortcut past the kernel ``op`` for the compiled fast path
        (:mod:`numerix._speedups`, docs/decisions.md 38), or None (the default: the fast
        path calls the kernel, which is fast already).

        Return ``(f, T)`` or ``(f, T, context)``: ``f`` takes payloads (``data``) and
        returns the payload the kernel would have put in ``out.data``, with the same
        values bit for bit, running whatever the kernel runs around its library call
        itself; ``T`` is the type that payload has (``numpy.ndarray``); ``context``, a
        :class:`contextvars.Context` ``f`` is called in (``binary``: its kernels' context,
        numpy's warnings off). A result of another type is dropped and the kernel called
        instead (a numpy ufunc's scalar for 0-d operands, unless :attr:`scalar_payload`
        makes it a payload), and so is a context in use (by
        another thread, or by a kernel of this one). An error ``f`` raises is the call's
        error, raised as it is: ``f`` is the kernel's own computation, and the kernel is
        not run again; only :class:`ShortcutDeclined` says "not this call", and the
        kernel is called. ``form`` says what ``f`` receives, always operands of ``dtype`` on
        this backend, with no cast:

        - ``"u"``: one payload (an element-wise unary kernel);
        - ``"tt"``: two payloads of one shape (an element-wise binary kernel);
        - ``"ts"`` / ``"st"``: a payload and a 0-d payload (a Python float's or int's
          operand), in the kernel's order;
        - ``"mm"``: two matrices (``dot`` contracting x's axis 1 with y's axis 0);
        - ``"rs"``: a payload and the output shape, a tuple of ints (``reshape``);
        - ``"sl"``: a payload and a Python ``slice`` over axis 0 of ints within the axis,
          ``0 <= start <= stop <= shape[0]`` and a step ``1 <= step <= shape[0]`` (the
          plan's, clamped as numpy clamps: ``x[::2**63]`` of a vector arrives as
          ``slice(0, 1, 1)``) (``slice``);
        - ``"ix"``: a payload of one axis or more and a Python int ``i``, ``0 <= i <
          shape[0]`` (``slice``, asked for ``x[i]``): what the ``slice`` kernel (row
          ``i``) and then the ``reshape`` kernel (to ``shape[1:]``) would store. This
          form has no kernel of its own: with no shortcut, ``x[i]`` takes the Python
          path;
        - ``"t0"`` / ``"0t"`` are not asked: a tensor meeting a 0-d tensor of its dtype is
          served by the ``"ts"`` / ``"st"`` shortcut (a payload and a 0-d payload), and
          without one by the Python op (the kernel wants operands of one shape);
        - ``"rd_sum"``, ``"rd_prod"``, ``"rd_max"``, ``"rd_min"``, ``"rd_all"``,
          ``"rd_any"``: a non-empty payload and the axes (every axis, a tuple of ints):
          what the ``reduce`` kernel stores for that kind over those axes without kept
          dimensions, of the kind's output dtype (``sum`` of int32 accumulates in
          int64); a 0-d result, which :attr:`scalar_payload` may make a payload.

        Asked once per (op, form, dtype, backend) and kept; not asked while the rule check
        (``[debug] check_rules``) is on. A backend that stops honouring a shortcut it gave
        calls :func:`forget_fast_kernels`. ``tests/test_speedups.py`` in each backend's
        package compares the two ways.

        The default serves the element-wise forms of a primitive the class declares with
        :func:`elementwise`: its payload function for ``dtype``, which is all the derived
        kernel runs, with :attr:`payload_type` (and the :meth:`program_context` where that
        is a :class:`contextvars.Context`)."""
        if form not in ("u", "tt", "ts", "st") or self.payload_type is None:
            return None
        spec = payload_of(type(self), op)
        if not isinstance(spec, elementwise):
            return None
        ctx = self.program_context()
        if isinstance(ctx, contextvars.Context):
            return spec(dtype), self.payload_type, ctx
        return spec(dtype), self.payload_type

    #: The type of this backend's payloads (``numpy.ndarray``, ``torch.Tensor``): what the
    #: fast path's shortcuts of :func:`elementwise` declarations return. None: no shortcut.
    payload_type: ClassVar[type | None] = None

    @classmethod
    def elementwise_kernel(cls, spec: elementwise, prim: Primitive) -> Callable[..., Any]:
        """The kernel method of the element-wise primitive ``prim`` declared as ``spec``
        (:func:`elementwise`), carrying its lowering: by default ``out.data =
        spec(x.dtype)(x.data, ...)``. A backend whose payload functions need a step
        around them (``xla``: one jitted kernel per shape) overrides it, and marks what
        it returns with the declaration (:func:`numerix._payload.default_kernel`'s
        ``numerix_payload``) so that :func:`payload_of` finds it."""
        return default_kernel(spec, prim)

    @classmethod
    def payload_kernel(cls, spec: payload, prim: Primitive) -> Callable[..., Any]:
        """The kernel method of ``prim`` declared as ``spec`` (:func:`payload`), carrying
        its lowering: by default ``out.data = spec.fn(*datas, **params)`` (see
        :meth:`elementwise_kernel`)."""
        return default_kernel(spec, prim)

    @classmethod
    def clear_caches(cls) -> None:
        """Optional: drop the compiled kernels this backend keeps (the next call of a
        kernel compiles it again). :func:`numerix.clear_caches` calls it on every backend
        loaded in the process; the default keeps nothing, so does nothing."""

    def program_context(self) -> Any:
        """Optional: what each replayed program runs inside (``binary``: numpy's
        floating-point warnings off, as XLA and LibTorch never warn). Either a context
        manager, made and entered on every program run, or a :class:`contextvars.Context`
        holding the state, in which every run is called (``Context.run``: tens of ns,
        where entering ``np.errstate`` costs about 1 µs; a context in use by another
        thread runs a copy). None (the default): nothing."""
        return None

    # ------------------------------------------------------------ tools
    #: How ``numerix bench`` names the library :meth:`bench_raw_matmul` runs
    #: (``"numpy"``); None: ``"<name> library"``.
    bench_raw_name: ClassVar[str | None] = None

    def bench_raw_matmul(self, x_np: np.ndarray, w_np: np.ndarray) -> Callable[[], Any] | None:
        """Optional: the wrapped library's own matrix product of ``x_np`` and ``w_np``
        (float32 host arrays), for ``numerix bench matmul``'s "raw" row.

        Return a function of no arguments that computes ``x_np @ w_np`` with the library
        alone on this backend's device, putting the operands there first, and returns
        the result once it is computed (an asynchronous library synchronises); the
        command checks it against numpy and times its calls. None (the default): no raw
        row for this backend."""
        return None

    def concrete_error(self, x: Tensor, op: str) -> NumerixError:
        """The error raised when ``op`` needs the values of ``x`` but it has none yet."""
        return NumerixError(f"{op}: {x.describe()} has no concrete values on backend {self!r}")

    def check_holds(self, op: str, dtype: DType) -> None:
        """Raise :meth:`unsupported` unless this backend holds ``dtype``
        (:attr:`supported_dtypes`): the one rule for every way a dtype reaches a backend
        (``Primitive.bind``'s outputs, casts, compiled programs' nodes, transfers)."""
        held = self.supported_dtypes
        if held is not None and dtype not in held:
            raise self.unsupported(op, dtype)

    def unsupported(self, op: str, dtype: DType) -> NumerixError:
        return UnsupportedDTypeError(
            f"{op}: backend {self!r} cannot hold {dtype} tensors; use another dtype "
            f"(x.astype(...)) or another backend"
        )


def clamp_starts(starts: Sequence[int], shape: Sequence[int], sizes: Sequence[int]) -> list[int]:
    """XLA's rule for the starts of ``dynamic_slice`` and ``put_slice``: each start moves
    into ``[0, dim - size]``, so the window stays inside ``shape``."""
    return [min(max(int(s), 0), d - n) for s, d, n in zip(starts, shape, sizes)]


def pad_plan(
    shape: Sequence[int], config: Sequence[tuple[int, int, int]]
) -> tuple[list[int], tuple[slice, ...], tuple[slice, ...]]:
    """How to ``pad`` an array of ``shape`` with Python slices: ``(full, place, crop)``,
    the shape of an array filled with the pad value, where the input goes in it (with
    its interior gaps, past the non-negative edges), and the slice of it that is the
    result (negative edges cropped)."""
    full, place, crop = [], [], []
    for d, (lo, hi, interior) in zip(shape, config):
        n = d + max(d - 1, 0) * interior
        full.append(max(lo, 0) + n + max(hi, 0))
        place.append(slice(max(lo, 0), max(lo, 0) + n, interior + 1))
        crop.append(slice(max(-lo, 0), full[-1] - max(-hi, 0)))
    return full, tuple(place), tuple(crop)


class SliceByIndexing:
    """A mixin for a backend whose arrays take Python slices, for reading and for
    assignment (numpy, torch): it defines ``dynamic_slice`` and ``put_slice`` (the
    starts clamped by :func:`clamp_starts`) from two methods of the backend's own:
    ``_read_starts(starts)``, the values of the 0-d start tensors as Python ints (one
    read from the device for all of them), and ``_copy(data)``, a new array holding
    ``data``."""

    __slots__ = ()

    def dynamic_slice(
        self, out: Tensor, x: Tensor, *starts: Tensor, sizes: tuple[int, ...]
    ) -> Tensor:
        at = clamp_starts(self._read_starts(starts), x.shape, sizes)  # type: ignore[attr-defined]
        out.data = self._copy(x.data[tuple(slice(a, a + n) for a, n in zip(at, sizes))])  # type: ignore[attr-defined]
        return out

    def put_slice(self, out: Tensor, x: Tensor, update: Tensor, *starts: Tensor) -> Tensor:
        at = clamp_starts(self._read_starts(starts), x.shape, update.shape)  # type: ignore[attr-defined]
        r = self._copy(x.data)  # type: ignore[attr-defined]
        r[tuple(slice(a, a + n) for a, n in zip(at, update.shape))] = update.data
        out.data = r
        return out


def _not_loaded(name: str, **options: Any) -> Backend:
    raise NumerixError(f"backend {name!r}: the plugin registry is not loaded; import numerix")


#: ``(name, **options) -> Backend``: :func:`numerix.plugins.get_backend`, which the
#: plugin layer (above this module) installs when it loads.
backend_lookup: Callable[..., Backend] = _not_loaded


def _rebuild_backend(name: str, options: dict[str, Any]) -> Backend:
    # an unpickled backend is the registry's instance of that name
    return backend_lookup(name, **options)
