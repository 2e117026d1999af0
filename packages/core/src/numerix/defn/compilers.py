"""The compiler contract: :class:`Compiler`, :class:`ArgSpec`, and the default compiler.

A compiler turns a traced :class:`~numerix.defn.expr.Graph` into a callable. It is a
plugin, found like a backend (hook ``numerix_compilers``, entry-point group
``numerix.plugins``); the core registers ``evaluator``. See ``docs/defn.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

# the rule a compiler's arguments follow, as eager operands do (see docs/defn.md)
from numerix._meeting import meeting_backend
from numerix.backend import Backend, Option, _derive_defaults, check_options, option_table
from numerix.dtypes import DType
from numerix.errors import ArgumentError

__all__ = [
    "Compiler", "ArgSpec", "Executable", "default_compiler", "resolve_compiler",
    "compilers_serving", "meeting_backend",
]  # fmt: skip

#: What ``Compiler.compile`` returns: flat argument tensors in, flat output tensors out.
Executable = Callable[[Sequence[Any]], list[Any]]


@dataclass(frozen=True)
class ArgSpec:
    """One flattened argument of a compiled program: its shape, dtype and the backend
    its tensor arrives on (Python numbers arrive as 0-d tensors of their default dtype
    on the backend of the other arguments, else the default backend)."""

    shape: tuple[int, ...]
    dtype: DType
    backend: Backend


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
        return check_options(
            f"jit: compiler {self.name!r}", option_table(type(self)), options, ArgumentError
        )

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

    def __repr__(self) -> str:
        return f"<compiler {self.name}>"


def effective_settings() -> Any:
    """The settings in effect here (``with numerix.config(...)`` › the environment and
    files), or None when nothing is configured (and pydantic stays unimported)."""
    from numerix import _config_state

    eff = _config_state.context.get()
    if eff is None:
        eff = _config_state.base
        if eff is None and _config_state.base_backend is None:
            # reads the environment and files once, as the default backend does
            from numerix.defaults import _configured_default

            _configured_default()
            eff = _config_state.base
    return None if eff is None else eff.settings


def default_compiler() -> tuple[str, dict[str, Any]]:
    """The default compiler's name and options: ``with numerix.config(default_compiler=...)``
    › the environment and files › ``"evaluator"``."""
    s = effective_settings()
    if s is None:
        return "evaluator", {}
    return s.default_compiler, dict(s.compiler_options)


def resolve_compiler(
    compiler: str | Compiler | None, options: Mapping[str, Any]
) -> tuple[Compiler, dict[str, Any]]:
    """The compiler instance and validated options a call selects (argument › settings)."""
    from numerix.plugins import get_compiler

    if compiler is None:
        name, base = default_compiler()
        comp = get_compiler(name, "jit")
        return comp, comp.validate_options({**base, **options})
    if isinstance(compiler, Compiler):
        return compiler, compiler.validate_options(options)
    if not isinstance(compiler, str):
        raise ArgumentError(
            f"jit: compiler must be a name ('evaluator') or a Compiler, got "
            f"{type(compiler).__name__} {compiler!r}"
        )
    comp = get_compiler(compiler, "jit")
    return comp, comp.validate_options(options)


def compilers_serving(backend: Backend) -> list[str]:
    """The names of the installed compilers whose programs return tensors of
    ``backend`` (:attr:`Compiler.backend` is None or its name), sorted; loads them."""
    from numerix import plugins

    out = []
    for name in sorted(plugins.compiler_entries()):
        if plugins.get_compiler(name).backend in (None, backend.name):
            out.append(name)
    return out
