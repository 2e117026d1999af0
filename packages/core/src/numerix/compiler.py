"""The compiler contract: :class:`Compiler` and :class:`ArgSpec` (the low layer, beside
:mod:`numerix.backend`'s Backend).

A compiler turns a traced :class:`~numerix.defn.expr.Graph` into a callable. It is a
plugin, found like a backend (hook ``numerix_compilers``, entry-point group
``numerix.plugins``); the core registers ``evaluator``. Which compiler a call uses
(argument › settings) is decided above, in :mod:`numerix.defn.compilers`. See
``docs/defn.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from numerix._frozen import Frozen
from numerix.backend import Backend, Option, _derive_defaults, check_options, option_table
from numerix.dtypes import DType
from numerix.errors import ArgumentError

__all__ = ["Compiler", "ArgSpec", "Executable"]

_setattr = object.__setattr__

#: What ``Compiler.compile`` returns: flat argument tensors in, flat output tensors out.
Executable = Callable[[Sequence[Any]], list[Any]]


class ArgSpec(Frozen):
    """One flattened argument of a compiled program: its shape, dtype and the backend
    its tensor arrives on (Python numbers arrive as 0-d tensors of their default dtype
    on the backend of the other arguments, else the default backend)."""

    __slots__ = ("backend", "dtype", "shape")

    shape: tuple[int, ...]
    dtype: DType
    backend: Backend

    def __init__(self, shape: tuple[int, ...], dtype: DType, backend: Backend) -> None:
        # made per call of a jitted function given Python numbers: the fields set one by
        # one, without _set's keyword dict (280 ns, where _set took 550)
        _setattr(self, "shape", shape)
        _setattr(self, "dtype", dtype)
        _setattr(self, "backend", backend)


class Compiler:
    """Base class of every compiler.

    Subclasses set :attr:`name` and :attr:`accepted_options` (a table of
    :class:`~numerix.backend.Option`, as a backend's) and implement :meth:`compile`.
    One instance per name is created (by :func:`numerix.plugins.get_compiler`)
    and used from every thread: keep per-program state in what :meth:`compile` returns.
    """

    #: The name users select the compiler by (``jit(fn, compiler="evaluator")``).
    name: ClassVar[str] = ""
    #: The options the compiler takes (:class:`~numerix.backend.Option`: name, type,
    #: allowed values, default), checked by :meth:`validate_options`.
    accepted_options: ClassVar[Sequence[Option] | None] = None
    #: The options' defaults by name, derived from :attr:`accepted_options`; a compiler
    #: may declare this mapping alone instead (its options are then untyped).
    default_options: ClassVar[Mapping[str, Any]] = {}
    #: The backend (by name) whose tensors its programs return, whatever backend the
    #: arguments come from (``"xla"`` for the xla compiler); None for a compiler that
    #: runs on the arguments' own backend (the evaluator). The conformance kit compiles
    #: its cases with every compiler that serves the backend under test.
    backend: ClassVar[str | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _derive_defaults(cls)

    def validate_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """Check ``options`` against :attr:`accepted_options` and fill in the defaults
        (:func:`numerix.backend.check_options`; errors are
        :class:`~numerix.errors.ArgumentError`)."""
        try:
            return check_options(
                f"jit: compiler {self.name!r}", option_table(type(self)), options, ArgumentError
            )
        except ArgumentError as e:
            if "does not take option" not in str(e):
                raise
            raise ArgumentError(
                f"{e} (jit's own keywords, for every compiler: static_argnames, "
                f"static_argnums, donate_argnums, donate_argnames, in_shardings, out_shardings)"
            ) from None

    def compile(
        self, graph: Any, args_spec: Sequence[ArgSpec], options: Mapping[str, Any]
    ) -> Executable:
        """Compile ``graph`` for arguments of ``args_spec``.

        :param graph: the traced :class:`~numerix.defn.expr.Graph`; its parameters match
            ``args_spec`` one to one.
        :param args_spec: the flattened arguments' shape, dtype and backend.
        :param options: the validated options (:meth:`validate_options`).
        :returns: a callable taking the list of argument tensors (as ``args_spec``
            describes them) and returning the list of output tensors, one per
            ``graph.outputs``, each of exactly the node's shape and dtype.
        """
        raise NotImplementedError

    #: Whether the compiler implements :meth:`export` and :meth:`load_exported`, what
    #: :func:`numerix.export` and :func:`numerix.load_exported` call.
    exports: ClassVar[bool] = False

    def export(self, graph: Any, args_spec: Sequence[ArgSpec], options: Mapping[str, Any]) -> bytes:
        """The program of ``graph`` for arguments of ``args_spec``, as bytes that
        :meth:`load_exported` turns back into a program in another process, without the
        Python source (for compilers whose :attr:`exports` is true). Only the program:
        numerix writes the signature (the arguments' and results' trees, shapes and
        dtypes) around it."""
        raise NotImplementedError

    def load_exported(
        self,
        payload: bytes,
        args_spec: Sequence[ArgSpec],
        outputs: Sequence[tuple[tuple[int, ...], DType]],
        backend: Backend,
    ) -> Executable:
        """The program :meth:`export` wrote as ``payload``, running on ``backend`` (a
        backend of :attr:`backend`'s name) for arguments of ``args_spec``: a callable as
        :meth:`compile` returns, whose results are typed as ``outputs``.

        :raises numerix.errors.FileFormatError: ``payload`` is not a program this
            compiler wrote, or this machine cannot run it (naming why)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<compiler {self.name}>"
