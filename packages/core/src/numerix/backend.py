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

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from numerix.errors import BackendOptionError, NumerixError

if TYPE_CHECKING:
    import numpy as np

    from numerix._tensor import Tensor
    from numerix.dtypes import DType

__all__ = ["Backend", "WindowByKind", "lowers"]

#: What :func:`lowers` takes: ``(params, inputs, out) -> a function of payloads or None``.
Lowering = Callable[[Mapping[str, Any], tuple[Any, ...], tuple[Any, ...]], Any]


def lowers(build: Lowering) -> Callable[[Any], Any]:
    """Attach a lowering (see :meth:`Backend.lower`) to the primitive method it decorates.

    ``build(params, inputs, out)`` returns the function of payloads for one node of a
    graph (or None where the method has to run, e.g. for a dtype it handles apart)::

        @lowers(lambda params, inputs, out: np.add)
        def add(self, out, x1, x2):
            out.data = np.add(x1.data, x2.data)
            return out
    """

    def attach(method: Any) -> Any:
        method.lowering = build
        return method

    return attach


class Backend:
    """Base class of every backend.

    Subclasses set :attr:`name`, :attr:`options` (the options they take, with their
    defaults) and :attr:`spec_fields` (how ``"name:a:b"`` maps onto options), and
    implement the primitives.
    """

    #: The name users select the backend by (``"binary"``, ``"xla"``).
    name: ClassVar[str] = ""
    #: Options the backend takes, with defaults. Unknown options are refused.
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

    __slots__ = ("_key", "device", "options")

    def __init__(self, **options: Any) -> None:
        self.options = self.validate_options(options)
        self.device = self.device_name()
        self._key = (self.name, tuple(sorted(self.options.items())))

    # ------------------------------------------------------------ identity
    @classmethod
    def validate_options(cls, options: Mapping[str, Any]) -> dict[str, Any]:
        """Check ``options`` against :attr:`default_options` and fill in the defaults."""
        unknown = [k for k in options if k not in cls.default_options]
        if unknown:
            accepted = ", ".join(cls.default_options) or "no options"
            raise BackendOptionError(
                f"backend {cls.name!r} does not take option(s) {', '.join(map(repr, unknown))}; "
                f"it accepts: {accepted}"
            )
        merged = dict(cls.default_options)
        merged.update(options)
        return merged

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
        from numerix.primitives import REGISTRY

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

    def to_dlpack(self, x: Tensor, stream: Any = None) -> Any:
        """A DLPack capsule of ``x``'s data."""
        raise NotImplementedError

    def dlpack_device(self, x: Tensor) -> tuple[int, int]:
        """``__dlpack_device__`` of ``x``'s data."""
        raise NotImplementedError

    def synchronize(self, x: Tensor) -> None:
        """Wait until ``x``'s value is computed (asynchronous backends; timing code calls it)."""

    def deallocate(self, x: Tensor) -> None:
        """Free ``x``'s memory now. The default drops the reference."""

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
        """Primitive ``op`` as a plain function of payloads, for compilers that replay a
        graph (the ``evaluator``), or None.

        A lowering is a callable taking the ``data`` of the inputs (whose shapes and
        dtypes are ``inputs``) and returning exactly what the primitive would have put
        in ``out.data`` for an output of type ``out``, with ``params`` already bound.
        With None the compiler calls the primitive method on ``Tensor`` shells; a
        lowering skips the per-call cost of those shells (a few hundred nanoseconds a
        node). It must compute the same values as the method, bit for bit (the kit's
        ``compiled`` family checks).

        The default asks the method itself: a method decorated with :func:`lowers`
        carries its lowering, built here from ``(params, inputs, out)``. A subclass that
        overrides the method without the decorator drops the lowering with it.
        """
        build = getattr(getattr(type(self), op, None), "lowering", None)
        return None if build is None else build(params, inputs, out)

    @classmethod
    def clear_caches(cls) -> None:
        """Optional: drop the compiled kernels this backend keeps (the next call of a
        kernel compiles it again). :func:`numerix.clear_caches` calls it on every backend
        loaded in the process; the default keeps nothing, so does nothing."""

    def program_context(self) -> Any:
        """Optional: a context manager each replayed program runs inside (``binary``:
        numpy's floating-point warnings off, as XLA and LibTorch never warn); None (the
        default) for none. Called once per program run."""
        return None

    def concrete_error(self, x: Tensor, op: str) -> NumerixError:
        """The error raised when ``op`` needs the values of ``x`` but it has none yet."""
        return NumerixError(f"{op}: {x.describe()} has no concrete values on backend {self!r}")

    def unsupported(self, op: str, dtype: DType) -> NumerixError:
        from numerix.errors import UnsupportedDTypeError

        return UnsupportedDTypeError(
            f"{op}: backend {self!r} cannot hold {dtype} tensors; use another dtype "
            f"(x.astype(...)) or another backend"
        )


class WindowByKind:
    """A mixin for a backend whose window primitives share two kernels of its own:
    ``_window_reduce(out, x, how, **params)`` (``how``: ``"sum"``, ``"prod"``, ``"max"``
    or ``"min"``) and ``_window_scatter(out, x, source, init_value, pick_min, **params)``
    (``pick_min``: False for ``window_scatter_max``, True for ``window_scatter_min``).
    It defines the six primitives as calls of those two."""

    __slots__ = ()

    def window_sum(self, out: Tensor, x: Tensor, **params: Any) -> Tensor:
        return self._window_reduce(out, x, "sum", **params)  # type: ignore[attr-defined]

    def window_prod(self, out: Tensor, x: Tensor, **params: Any) -> Tensor:
        return self._window_reduce(out, x, "prod", **params)  # type: ignore[attr-defined]

    def window_max(self, out: Tensor, x: Tensor, **params: Any) -> Tensor:
        return self._window_reduce(out, x, "max", **params)  # type: ignore[attr-defined]

    def window_min(self, out: Tensor, x: Tensor, **params: Any) -> Tensor:
        return self._window_reduce(out, x, "min", **params)  # type: ignore[attr-defined]

    def window_scatter_max(
        self, out: Tensor, x: Tensor, source: Tensor, init_value: Tensor, **params: Any
    ) -> Tensor:
        return self._window_scatter(out, x, source, init_value, False, **params)  # type: ignore[attr-defined]

    def window_scatter_min(
        self, out: Tensor, x: Tensor, source: Tensor, init_value: Tensor, **params: Any
    ) -> Tensor:
        return self._window_scatter(out, x, source, init_value, True, **params)  # type: ignore[attr-defined]


def _rebuild_backend(name: str, options: dict[str, Any]) -> Backend:
    from numerix.plugins import get_backend

    return get_backend(name, **options)
