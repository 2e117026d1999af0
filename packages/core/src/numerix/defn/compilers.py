"""Which compiler a call uses: the default compiler (argument › settings), and the
compilers serving a backend. The contract itself (:class:`Compiler`, :class:`ArgSpec`)
is :mod:`numerix.compiler`, in the low layer; it is re-exported here for compilers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numerix import plugins

# the rule a compiler's arguments follow, as eager operands do (see docs/defn.md)
from numerix._meeting import meeting_backend
from numerix.backend import Backend
from numerix.compiler import ArgSpec, Compiler, Executable
from numerix.configuration import configured_compiler, effective_settings
from numerix.errors import ArgumentError

__all__ = [
    "Compiler", "ArgSpec", "Executable", "DEFAULT_COMPILER", "default_compiler", "compiler_of",
    "resolve_compiler", "compilers_serving", "meeting_backend", "AUTO", "untimed",
    "check_auto_options",
]  # fmt: skip


#: the default compiler where nothing configures numerix
DEFAULT_COMPILER = "evaluator"

#: the name that asks ``jit`` to time the compilers serving a call and keep the fastest
#: (numerix.defn.auto); not a plugin
AUTO = "auto"


def default_compiler() -> tuple[str, dict[str, Any]]:
    """The default compiler's name and options: ``with numerix.config(default_compiler=...)``
    › the environment and files › ``"evaluator"``."""
    return compiler_of(effective_settings())


def compiler_of(settings: Any) -> tuple[str, dict[str, Any]]:
    """The default compiler's name and options in ``settings`` (None: nothing configures
    numerix)."""
    if settings is None:
        return DEFAULT_COMPILER, {}
    return settings.default_compiler, dict(settings.compiler_options)


def resolve_compiler(
    compiler: str | Compiler | None,
    options: Mapping[str, Any],
    backend: Backend | None = None,
    op: str = "jit",
) -> tuple[Compiler, dict[str, Any]]:
    """The compiler instance and validated options a call selects (argument › settings).

    ``"auto"`` (named, or the default compiler) is served here only for a program made
    without values to time (``numerix.compile``, ``export``, ``stream``): the compiler
    :func:`untimed` takes for ``backend``; ``jit`` times the candidates itself.
    """
    if compiler is None:
        name, base = default_compiler()
        if name == AUTO:
            return _untimed_auto(backend, {**base, **options}, op, "the default_compiler setting")
        comp = configured_compiler(name, "jit")
        return comp, comp.validate_options({**base, **options})
    if compiler == AUTO:
        return _untimed_auto(backend, options, op, f"{op}(compiler='auto')")
    if isinstance(compiler, Compiler):
        return compiler, compiler.validate_options(options)
    if not isinstance(compiler, str):
        raise ArgumentError(
            f"jit: compiler must be a name ('evaluator') or a Compiler, got "
            f"{type(compiler).__name__} {compiler!r}"
        )
    comp = plugins.get_compiler(compiler, "jit")
    return comp, comp.validate_options(options)


def check_auto_options(options: Mapping[str, Any], op: str, where: str) -> None:
    """``"auto"`` takes no compiler options: each candidate runs with its defaults."""
    if options:
        raise ArgumentError(
            f"{op}: {where} is 'auto', which takes no compiler options (each compiler it "
            f"tries runs with its defaults), got {sorted(options)}; name a compiler to give "
            f"it options"
        )


def _untimed_auto(
    backend: Backend | None, options: Mapping[str, Any], op: str, where: str
) -> tuple[Compiler, dict[str, Any]]:
    check_auto_options(options, op, where)
    if backend is None:
        raise ArgumentError(
            f"{op}: {where} is 'auto', which needs the arguments' backend to choose a "
            f"compiler; name a compiler"
        )
    comp = plugins.get_compiler(untimed(backend), op)
    return comp, comp.validate_options({})


def untimed(backend: Backend) -> str:
    """The compiler ``"auto"`` takes where it cannot time candidates (a function with
    hooks; a program compiled from templates): the backend's own compiler, else the
    evaluator."""
    names = compilers_serving(backend)
    own = [n for n in names if plugins.get_compiler(n).backend == backend.name]
    return own[0] if own else (DEFAULT_COMPILER if DEFAULT_COMPILER in names else names[0])


def compilers_serving(backend: Backend) -> list[str]:
    """The names of the installed compilers whose programs return tensors of
    ``backend`` (:attr:`Compiler.backend` is None or its name), sorted; a compiler whose
    entry does not declare what it serves (``CompilerEntry(serves=...)``) is loaded to
    ask it."""
    out = []
    for name, entry in sorted(plugins.compiler_entries().items()):
        serves = entry.serves
        if serves is None:  # not declared: loaded to ask
            serves = plugins.get_compiler(name).backend or "*"
        if serves in ("*", backend.name):
            out.append(name)
    return out
