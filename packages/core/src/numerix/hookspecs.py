"""Hook specifications of numerix plugins.

A plugin is a module (or object) with functions marked ``@numerix.hookspecs.hookimpl``,
exposed through the entry-point group ``numerix.plugins``::

    [project.entry-points."numerix.plugins"]
    mybackend = "numerix_mybackend.plugin"

Hooks only *name* what a plugin provides; nothing heavy is imported until a backend
is first used, so ``import numerix`` stays fast whatever is installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from numerix.plugins import BackendEntry

hookspec = pluggy.HookspecMarker("numerix")
hookimpl = pluggy.HookimplMarker("numerix")

# --------------------------------------------------------------------------
# Discovery
# --------------------------------------------------------------------------


@hookspec
def numerix_backends() -> list[BackendEntry]:  # type: ignore[empty-body]
    """Name the backends this plugin provides.

    :returns: a list of :class:`numerix.plugins.BackendEntry`, each naming the backend,
        the ``"module:Class"`` that implements it (imported on first use) and the
        backend-contract version it was built for. Results of every plugin are
        collected; two entries with one name are reported by ``numerix info``.
    """
