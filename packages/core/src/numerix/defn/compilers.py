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
    "resolve_compiler", "compilers_serving", "meeting_backend",
]  # fmt: skip


#: the default compiler where nothing configures numerix
DEFAULT_COMPILER = "evaluator"


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
    compiler: str | Compiler | None, options: Mapping[str, Any]
) -> tuple[Compiler, dict[str, Any]]:
    """The compiler instance and validated options a call selects (argument › settings)."""
    if compiler is None:
        name, base = default_compiler()
        comp = configured_compiler(name, "jit")
        return comp, comp.validate_options({**base, **options})
    if isinstance(compiler, Compiler):
        return compiler, compiler.validate_options(options)
    if not isinstance(compiler, str):
        raise ArgumentError(
            f"jit: compiler must be a name ('evaluator') or a Compiler, got "
            f"{type(compiler).__name__} {compiler!r}"
        )
    comp = plugins.get_compiler(compiler, "jit")
    return comp, comp.validate_options(options)


def compilers_serving(backend: Backend) -> list[str]:
    """The names of the installed compilers whose programs return tensors of
    ``backend`` (:attr:`Compiler.backend` is None or its name), sorted; loads them."""
    out = []
    for name in sorted(plugins.compiler_entries()):
        if plugins.get_compiler(name).backend in (None, backend.name):
            out.append(name)
    return out
