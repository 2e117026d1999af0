"""Hook specifications of numerix plugins.

A plugin is a module (or object) with functions marked ``@numerix.hookspecs.hookimpl``,
exposed through the entry-point group ``numerix.plugins``::

    [project.entry-points."numerix.plugins"]
    mybackend = "numerix_mybackend.plugin"

Hooks only *name* what a plugin provides; nothing heavy is imported until a backend
is first used, so ``import numerix`` stays fast whatever is installed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from numerix.plugins import BackendEntry, CompilerEntry

#: The project name pluggy knows numerix's hooks by: a hook implementation carries its
#: options in the attribute ``numerix_impl``, a specification in ``numerix_spec``.
PROJECT = "numerix"


def hookimpl(
    function: Callable[..., Any] | None = None,
    *,
    hookwrapper: bool = False,
    optionalhook: bool = False,
    tryfirst: bool = False,
    trylast: bool = False,
    specname: str | None = None,
    wrapper: bool = False,
) -> Any:
    """Mark ``function`` as the implementation of a numerix hook: what
    ``pluggy.HookimplMarker("numerix")`` marks, with the same options, without importing
    pluggy. A plugin module imports it at the first use of its backend, and pluggy is
    imported only when every installed plugin is discovered (``numerix info``, a backend
    the project does not ship). A plugin may use pluggy's own marker instead: they set the
    same attribute (a test compares them)."""
    opts = {
        "wrapper": wrapper,
        "hookwrapper": hookwrapper,
        "optionalhook": optionalhook,
        "tryfirst": tryfirst,
        "trylast": trylast,
        "specname": specname,
    }

    def mark(f: Callable[..., Any]) -> Callable[..., Any]:
        setattr(f, PROJECT + "_impl", opts)
        return f

    return mark if function is None else mark(function)


def hookspec(function: Callable[..., Any]) -> Callable[..., Any]:
    """Mark ``function`` as a hook specification, as ``pluggy.HookspecMarker("numerix")``
    marks it with its default options."""
    opts = {"firstresult": False, "historic": False, "warn_on_impl": None,
            "warn_on_impl_args": None}  # fmt: skip
    setattr(function, PROJECT + "_spec", opts)
    return function


# --------------------------------------------------------------------------
# Discovery
# --------------------------------------------------------------------------


@hookspec
def numerix_backends() -> list[BackendEntry]:  # type: ignore[empty-body]
    """Name the backends this plugin provides.

    :returns: a list of :class:`numerix.plugins.BackendEntry` (the
        :class:`~numerix.plugins.PluginEntry` of a backend), each naming the backend,
        the ``"module:Class"`` that implements it (imported on first use) and the
        backend-contract version it was built for. Results of every plugin are
        collected; two entries with one name are reported by ``numerix info``.
    """


@hookspec
def numerix_compilers() -> list[CompilerEntry]:  # type: ignore[empty-body]
    """Name the compilers this plugin provides (``numerix.jit(fn, compiler=name)``).

    :returns: a list of :class:`numerix.plugins.CompilerEntry` (the
        :class:`~numerix.plugins.PluginEntry` of a compiler), each naming the compiler,
        the ``"module:Class"`` of its :class:`numerix.defn.Compiler` subclass (imported on
        first use) and the compiler-contract version it was built for. Results of every
        plugin are collected; the core's ``evaluator`` is registered first, and a second
        entry with a name already taken is a warning naming both.
    """


# --------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------


@hookspec
def numerix_settings_models() -> list[tuple[str, Any]]:  # type: ignore[empty-body]
    """Name the settings model of each backend this plugin provides.

    :returns: a list of ``(backend name, model)`` pairs, where ``model`` is a pydantic
        ``BaseModel`` subclass (or its ``"module:Class"``) that should forbid unknown
        keys (``model_config = ConfigDict(extra="forbid")``). It becomes
        ``backends.<name>`` of :class:`numerix.configuration.NumerixSettings`: the
        ``[backends.<name>]`` table of a config file and the
        ``NUMERIX_BACKENDS__<NAME>__<FIELD>`` environment variables. Fields named like
        the backend's options (``device``, ``client``) are passed to the backend when
        the settings select it.

    Called when the configuration is first read, never at ``import numerix``. Import
    pydantic inside the hook, and never the backend's heavy library (JAX, PyTorch).
    """
