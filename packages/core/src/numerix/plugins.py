"""Plugin discovery, backend entries and backend instances.

Plugins are found through the entry-point group ``numerix.plugins`` and can also be
registered at run time with :func:`register_backend`. Each entry point is loaded on
its own, so one broken plugin is listed (``numerix info``) instead of breaking
``import numerix`` or the other plugins.

Discovery is lazy. Using one of the project's own backends or compilers (``binary``,
``xla``, ``torch``; the core's ``evaluator``) imports that plugin's module alone
(:data:`OWN_PLUGIN_MODULES`), without reading every distribution's entry points
(``importlib.metadata``) or importing the other plugins; any other name, and every
listing (:func:`backend_entries`, ``numerix info``), runs the full discovery.
"""

from __future__ import annotations

import importlib
import warnings
from _thread import RLock  # threading's RLock class, without importing threading
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numerix.backend
from numerix._frozen import Frozen
from numerix.backend import Backend, required_missing
from numerix.compiler import Compiler
from numerix.errors import BackendNotFoundError, ConfigError, NumerixError, PluginError, close_name
from numerix.primitives._registry import CONTRACT_CHANGES, CONTRACT_VERSION

__all__ = [
    "PluginEntry",
    "BackendEntry",
    "BrokenPlugin",
    "register_backend",
    "unregister_backend",
    "get_backend",
    "backend_entries",
    "broken_plugins",
    "settings_models",
    "register_settings_model",
    "unregister_settings_model",
    "ENTRY_POINT_GROUP",
    "CompilerEntry",
    "COMPILER_CONTRACT_VERSION",
    "register_compiler",
    "unregister_compiler",
    "get_compiler",
    "compiler_entries",
    "install_command",
]

ENTRY_POINT_GROUP = "numerix.plugins"

#: The version of the compiler contract (``numerix.defn.Compiler`` and the graph it
#: receives) this core implements; a compiler plugin built for another is refused.
COMPILER_CONTRACT_VERSION = 1
#: The contract version this core implements, by kind of plugin entry.
CONTRACTS = {"backend": CONTRACT_VERSION, "compiler": COMPILER_CONTRACT_VERSION}


class PluginEntry(Frozen):
    """What a plugin declares about one backend or compiler, without importing it.

    A plugin returns :class:`BackendEntry` and :class:`CompilerEntry` objects, this
    type with its :attr:`kind` set; the two differ only in that.

    :param name: the name users select it by (``"xla"``: ``backend="xla"``,
        ``jit(fn, compiler="xla")``).
    :param target: ``"module:Class"`` of the :class:`~numerix.backend.Backend` or
        :class:`numerix.defn.Compiler` subclass (imported on first use), or the class
        itself (runtime registration).
    :param contract: the contract version the plugin was built for; by default the
        one this core implements for its kind (:data:`CONTRACTS`).
    :param description: one line for ``numerix info``.
    :param distribution: the distribution that provides it (filled in by discovery).
    :param version: that distribution's version (filled in by discovery).
    """

    __slots__ = ("contract", "description", "distribution", "name", "target", "version")
    # where it comes from is not part of what it is
    _compare: ClassVar[tuple[str, ...]] = ("name", "target", "contract", "description")

    #: ``"backend"`` or ``"compiler"``.
    kind: ClassVar[str] = ""

    name: str
    target: Any
    contract: int
    description: str
    distribution: str | None
    version: str | None

    def __init__(
        self,
        name: str,
        target: Any,
        contract: int | None = None,
        description: str = "",
        distribution: str | None = None,
        version: str | None = None,
    ) -> None:
        if self.kind not in CONTRACTS:
            raise TypeError(
                "numerix.plugins.PluginEntry is abstract: declare a BackendEntry or a CompilerEntry"
            )
        self._set(
            name=name,
            target=target,
            contract=CONTRACTS[self.kind] if contract is None else contract,
            description=description,
            distribution=distribution,
            version=version,
        )

    def from_distribution(self, distribution: str | None, version: str | None = None) -> Any:
        """This entry, marked as provided by ``distribution`` at ``version``."""
        return self.replace(distribution=distribution, version=version)


class BackendEntry(PluginEntry):
    """A backend a plugin provides (:class:`PluginEntry`); its ``target`` is a
    :class:`~numerix.backend.Backend` subclass."""

    __slots__ = ()
    kind: ClassVar[str] = "backend"


class CompilerEntry(PluginEntry):
    """A compiler a plugin provides (:class:`PluginEntry`); its ``target`` is a
    :class:`numerix.defn.Compiler` subclass.

    :param serves: the backend (by name) whose tensors its programs return, as the
        class's :attr:`~numerix.defn.Compiler.backend` says, or ``"*"`` for a compiler
        that runs on the arguments' own backend: declared here, the compilers serving a
        backend are known without importing the others (``jit(compiler="auto")`` on xla
        does not import torch). None (not declared): the compiler is loaded to ask it.
        A declaration the class contradicts is a :class:`PluginError` when it loads.
    :param outruns: compilers (by name) whose programs are slower than this one's on
        the backend it serves, measured and declared by its plugin: where both serve,
        ``jit(compiler="auto")`` does not time them (``f.explain`` says so). The xla
        compiler outruns the evaluator: one fused XLA program against one separately
        compiled kernel per op, whose first call compiles each.
    """

    __slots__ = ("outruns", "serves")
    kind: ClassVar[str] = "compiler"
    _compare = ("name", "target", "contract", "description", "serves", "outruns")

    serves: str | None
    outruns: tuple[str, ...]

    def __init__(
        self,
        name: str,
        target: Any,
        contract: int | None = None,
        description: str = "",
        distribution: str | None = None,
        version: str | None = None,
        serves: str | None = None,
        outruns: tuple[str, ...] = (),
    ) -> None:
        super().__init__(name, target, contract, description, distribution, version)
        if serves is not None and (not isinstance(serves, str) or not serves):
            raise TypeError(
                f"CompilerEntry {name!r}: serves must be a backend name, '*' or None, got "
                f"{serves!r}"
            )
        if type(outruns) is not tuple or not all(
            isinstance(o, str) and o and o != name for o in outruns
        ):
            raise TypeError(
                f"CompilerEntry {name!r}: outruns must be a tuple of other compilers' "
                f"names, got {outruns!r}"
            )
        self._set(serves=serves, outruns=outruns)


_EVALUATOR = CompilerEntry(
    "evaluator",
    "numerix.defn.evaluator:Evaluator",
    description="interprets the graph with the arguments' backend (the core's)",
    distribution="numerix",
    serves="*",
)


class BrokenPlugin(Frozen):
    """A plugin that failed to load, and why."""

    __slots__ = ("distribution", "name", "reason")

    name: str
    distribution: str | None
    reason: str

    def __init__(self, name: str, distribution: str | None, reason: str) -> None:
        self._set(name=name, distribution=distribution, reason=reason)


class _Registry:
    def __init__(self) -> None:
        self.entries: dict[str, BackendEntry] = {}
        self.shadowed: list[tuple[BackendEntry, BackendEntry]] = []
        self.broken: list[BrokenPlugin] = []
        self.classes: dict[str, type[Backend]] = {}
        self.instances: dict[tuple[str, tuple[tuple[str, Any], ...]], Backend] = {}
        self.plugins: list[tuple[str, str | None, str | None]] = []
        # (entry point, distribution, plugin object): their settings hooks are called
        # only when the configuration is read, so discovery never imports pydantic
        self.plugin_objects: list[tuple[str, str | None, Any]] = []
        self.runtime_settings: dict[str, Any] = {}
        self.pm: Any = None
        self.compilers: dict[str, CompilerEntry] = {"evaluator": _EVALUATOR}
        self.compiler_instances: dict[str, Any] = {}
        self.discovered = False
        # the project's own plugins loaded alone, by name (None: tried and failed)
        self.own: dict[str, Any] = {}
        # settings models found so far, and the plugins whose hook was already asked
        self.settings: dict[str, tuple[Any, str | None]] = {}
        self.settings_asked: set[str] = set()
        self.lock = RLock()

    def load_own(self, name: str) -> bool:
        """Load the plugin of one of the project's own names (:data:`OWN_PLUGIN_MODULES`)
        alone, without the entry points of every distribution; True when it loaded. A
        plugin missing or failing here returns False: the full discovery then finds out
        why, and lists it as broken."""
        module = OWN_PLUGIN_MODULES.get(name)
        if module is None or self.discovered:
            return False
        with self.lock:
            if name in self.own:
                return self.own[name] is not None
            self.own[name] = None
            dist = RESERVED_BACKENDS[name]
            try:
                obj = importlib.import_module(module)
                found = _hook_results(None, "numerix_backends", obj, BackendEntry)
                comps = _hook_results(None, "numerix_compilers", obj, CompilerEntry)
            except (Exception, SystemExit):
                return False
            self.own[name] = obj
            self.plugin_objects.append((name, dist, obj))
            for e in found:
                if e.name in RESERVED_BACKENDS and RESERVED_BACKENDS[e.name] != dist:
                    continue  # the full discovery reports it
                self._add(e.from_distribution(dist))
            for c in comps:
                self._add_compiler(c.from_distribution(dist))
            return True

    def discover(self) -> None:
        with self.lock:
            if self.discovered:
                return
            self.discovered = True
            from importlib.metadata import entry_points

            import pluggy

            from numerix import hookspecs

            pm = pluggy.PluginManager("numerix")
            pm.add_hookspecs(hookspecs)
            self.pm = pm
            for ep in entry_points(group=ENTRY_POINT_GROUP):
                dist = getattr(ep, "dist", None)
                dname = dist.name if dist is not None else None
                dver = dist.version if dist is not None else None
                try:
                    obj = ep.load()
                    check_hook_names(obj)
                    pm.register(obj, name=ep.name)
                    found = _hook_results(pm, "numerix_backends", obj, BackendEntry)
                    comps = _hook_results(pm, "numerix_compilers", obj, CompilerEntry)
                except (Exception, SystemExit) as e:
                    # one plugin's failure, sys.exit() at import included, never ends
                    # discovery: the plugin is listed as broken and the others load
                    if pm.get_plugin(ep.name) is not None:
                        pm.unregister(name=ep.name)
                    self.broken.append(BrokenPlugin(ep.name, dname, f"{type(e).__name__}: {e}"))
                    continue
                self.plugins.append((ep.name, dname, dver))
                if not any(o is obj for _, _, o in self.plugin_objects):  # not loaded alone
                    self.plugin_objects.append((ep.name, dname, obj))
                for entry in found:
                    entry = entry.from_distribution(dname, dver)
                    owner = RESERVED_BACKENDS.get(entry.name)
                    if owner is not None and dname is not None and dname != owner:
                        self.broken.append(
                            BrokenPlugin(
                                entry.name,
                                dname,
                                f"backend name {entry.name!r} belongs to {owner}; the plugin "
                                f"must choose another name (a backend can still be replaced "
                                f"at run time with numerix.register_backend(..., replace=True))",
                            )
                        )
                        continue
                    self._add(entry)
                for c in comps:
                    self._add_compiler(c.from_distribution(dname, dver))

    def _add_compiler(self, entry: CompilerEntry) -> None:
        self._admit(entry, self.compilers)

    def _add(self, entry: BackendEntry) -> None:
        self._admit(entry, self.entries, self.shadowed)

    def _admit(
        self,
        entry: PluginEntry,
        table: dict[str, Any],
        shadowed: list[tuple[Any, Any]] | None = None,
    ) -> None:
        """Add a backend or compiler entry to ``table``: refused (listed as broken) when
        built for another contract; the first one kept when two plugins take a name."""
        kind, contract = entry.kind, CONTRACTS[entry.kind]
        if entry.contract != contract:
            # what changed since the plugin's contract, for a backend built for an older one
            changed = [
                f"in contract {v}, {CONTRACT_CHANGES[v]}"
                for v in sorted(CONTRACT_CHANGES)
                if kind == "backend" and isinstance(entry.contract, int) and entry.contract < v
            ]
            self.broken.append(
                BrokenPlugin(
                    entry.name,
                    entry.distribution,
                    f"built for {kind} contract {entry.contract}, this numerix implements "
                    f"contract {contract}"
                    + (f" ({'; '.join(changed)})" if changed else "")
                    + f"; install a release of {entry.distribution or 'the plugin'} made for "
                    f"this numerix",
                )
            )
            return
        old = table.get(entry.name)
        if old is not None and old.target != entry.target:
            if shadowed is not None:
                shadowed.append((old, entry))
            warnings.warn(
                f"two plugins provide {kind} {entry.name!r}: {old.distribution or old.target} "
                f"and {entry.distribution or entry.target}; using the first. Uninstall one of them.",
                RuntimeWarning,
                stacklevel=4,
            )
            return
        table[entry.name] = entry


#: The prefix of every hook's name: a plugin's function named so must be a hook.
HOOK_PREFIX = "numerix_"


def check_hook_names(plugin: Any) -> None:
    """Refuse a plugin with a function that looks like a hook and is none: one named
    ``numerix_…`` (the prefix is the hooks' own, as ``pytest_`` is pytest's) or marked
    with ``hookimpl`` under a name that no hook has. pluggy would ignore the first and
    hold the second as pending, so a misspelt hook would never run, without a word.

    :raises PluginError: naming the function, the closest hook and every hook.
    """
    from numerix import hookspecs

    hooks = sorted(n for n, v in vars(hookspecs).items() if hasattr(v, hookspecs.PROJECT + "_spec"))
    for attr in sorted(dir(plugin)):
        try:
            v = getattr(plugin, attr)
        except Exception:  # a property that fails is no hook
            continue
        opts = getattr(v, hookspecs.PROJECT + "_impl", None)
        if not isinstance(opts, dict):
            opts = None
        if opts is None and not (attr.startswith(HOOK_PREFIX) and callable(v)):
            continue
        hook = (opts or {}).get("specname") or attr
        if hook in hooks:
            continue
        hint = close_name(hook, hooks, cutoff=0.5)
        raise PluginError(
            f"{attr!r} is not a numerix hook{hint} The hooks are {', '.join(hooks)}; rename "
            f"it, or take the {HOOK_PREFIX} prefix off a function that is not a hook"
        )


def _hook_results(pm: Any, hook: str, plugin: Any, kind: type | None = None) -> list[Any]:
    """What ``plugin``'s implementations of ``hook`` return, concatenated; with ``kind``,
    each result must be a list or tuple of ``kind`` (a PluginError says what came).
    Without a plugin manager (or for a plugin it does not hold), the plugin's function
    named ``hook`` is called: a plugin loaded alone, before any discovery."""
    if pm is None or not pm.is_registered(plugin):
        impl = getattr(plugin, hook, None)
        functions = [impl] if callable(impl) else []
    else:
        functions = [
            h.function for h in getattr(pm.hook, hook).get_hookimpls() if h.plugin is plugin
        ]
    out: list[Any] = []
    for function in functions:
        got = function()
        if got is None:
            continue
        if kind is not None:
            if not isinstance(got, (list, tuple)) or not all(isinstance(e, kind) for e in got):
                raise PluginError(
                    f"hook {hook} must return a list of numerix.plugins.{kind.__name__}, "
                    f"got {type(got).__name__} {got!r:.80}"
                )
        out.extend(got)
    return out


_REG = _Registry()

#: The project's own backend names and the distributions that provide them: no other
#: plugin may take them (first-on-sys.path would otherwise decide what "binary" is).
RESERVED_BACKENDS = {"binary": "numerix-binary", "xla": "numerix-xla", "torch": "numerix-torch"}
#: The entry point (``numerix.plugins``) of each of those distributions, by the name of the
#: backend and compiler it provides: the first use of one of these names imports that
#: module alone. Reading the entry points of every installed distribution costs more
#: than the first op itself (``importlib.metadata``, tens of milliseconds), and the names
#: are reserved, so no other plugin can provide them.
OWN_PLUGIN_MODULES = {
    "binary": "numerix_binary.plugin",
    "xla": "numerix_xla.plugin",
    "torch": "numerix_torch.plugin",
}


def register_backend(
    name: str,
    cls: type[Backend] | str,
    *,
    description: str = "",
    contract: int = CONTRACT_VERSION,
    replace: bool = False,
) -> None:
    """Register a backend at run time (tests, notebooks).

    :param cls: the :class:`~numerix.backend.Backend` subclass or its ``"module:Class"``.
    :param replace: replace an existing backend of that name instead of raising.
    """
    _register(BackendEntry(name, cls, contract, description), replace)


def _register(entry: PluginEntry, replace: bool) -> None:
    """Register ``entry`` at run time (``register_backend``, ``register_compiler``):
    refused when its name is taken (unless ``replace``) or it is built for another
    contract; a replaced one's cached classes and instances are dropped."""
    _REG.discover()
    kind, name = entry.kind, entry.name
    table = _REG.entries if kind == "backend" else _REG.compilers
    op = f"register_{kind}"
    with _REG.lock:
        if name in table and not replace:
            raise PluginError(
                f"{op}: {kind} {name!r} is already registered by "
                f"{table[name].distribution or 'a runtime registration'}; pass replace=True"
            )
        target = entry.target
        if (
            kind == "backend"
            and entry.contract == CONTRACTS[kind]
            and isinstance(target, type)
            and issubclass(target, Backend)
        ):
            _check_name(name, target, op)
            _check_required(name, target, op)
        table.pop(name, None)
        if kind == "backend":
            _drop(name)
        else:
            _REG.compiler_instances.pop(name, None)
        before = len(_REG.broken)
        _REG._admit(entry, table, _REG.shadowed if kind == "backend" else None)
        if len(_REG.broken) > before:
            raise PluginError(f"{op}: {kind} {name!r}: {_REG.broken.pop().reason}")


def unregister_backend(name: str) -> None:
    """Remove a backend registered at run time (and its cached instances)."""
    with _REG.lock:
        _REG.entries.pop(name, None)
        _drop(name)


def _drop(name: str) -> None:
    _REG.classes.pop(name, None)
    for key in [k for k in _REG.instances if k[0] == name]:
        del _REG.instances[key]


def backend_entries() -> dict[str, BackendEntry]:
    """Every backend the installed plugins provide, by name."""
    _REG.discover()
    return dict(_REG.entries)


def broken_plugins() -> list[BrokenPlugin]:
    """Plugins that failed to load, with the reason."""
    _REG.discover()
    return list(_REG.broken)


def loaded_plugins() -> list[tuple[str, str | None, str | None]]:
    """``(entry point, distribution, version)`` of each plugin that loaded."""
    _REG.discover()
    return list(_REG.plugins)


def settings_models(names: Any = None) -> dict[str, tuple[Any, str | None]]:
    """The settings model each plugin contributes (hook ``numerix_settings_models``), by
    backend name: ``{name: (model class, distribution)}``. Called when the configuration
    is read, not at discovery; a plugin whose hook fails is listed as broken.

    :param names: the backend names whose models are needed (the ``backends.<name>``
        tables the configuration sets): the project's own plugins among them are loaded
        alone, and the full discovery runs only for another name. Default: every
        installed plugin's. The result holds every model found so far.
    """
    with _REG.lock:
        if names is None:
            _REG.discover()
        else:
            _collect_settings()
            for name in names:
                if name in _REG.settings or name in _REG.runtime_settings:
                    continue
                if _REG.load_own(name):
                    _collect_settings()
                    if name in _REG.settings:
                        continue
                _REG.discover()
                break
        _collect_settings()
        merged = dict(_REG.settings)
        merged.update({k: (v, None) for k, v in _REG.runtime_settings.items()})
        return merged


def _collect_settings() -> None:
    """Ask each loaded plugin not asked yet for its settings models."""
    found = _REG.settings
    for ep_name, dist, obj in _REG.plugin_objects:
        if ep_name in _REG.settings_asked:
            continue
        _REG.settings_asked.add(ep_name)
        try:
            for pair in _hook_results(_REG.pm, "numerix_settings_models", obj):
                name, model = pair
                if isinstance(model, str):
                    mod, _, attr = model.partition(":")
                    model = getattr(importlib.import_module(mod), attr)
                if not isinstance(name, str) or not isinstance(model, type):
                    raise TypeError(f"expected (name, model class) pairs, got {pair!r}")
                if name in found:
                    warnings.warn(
                        f"two plugins provide settings for {name!r}: "
                        f"{found[name][1] or '?'} and {dist or ep_name}; using the first",
                        RuntimeWarning,
                        stacklevel=3,
                    )
                    continue
                found[name] = (model, dist)
        except Exception as e:  # a broken plugin must not break numerix
            _REG.broken.append(
                BrokenPlugin(ep_name, dist, f"numerix_settings_models: {type(e).__name__}: {e}")
            )


def register_settings_model(name: str, model: Any, *, replace: bool = False) -> None:
    """Register the settings model of backend ``name`` at run time (tests, notebooks).

    ``model`` is a pydantic ``BaseModel`` subclass; it becomes ``backends.<name>`` of
    the settings the next time they are read (call :func:`numerix.reload_config`).
    """
    with _REG.lock:
        if name in settings_models() and not replace:
            raise PluginError(
                f"register_settings_model: settings for {name!r} are already registered; "
                f"pass replace=True"
            )
        _REG.runtime_settings[name] = model


def unregister_settings_model(name: str) -> None:
    """Remove a settings model registered at run time."""
    with _REG.lock:
        _REG.runtime_settings.pop(name, None)


def backend_class(name: str, op: str = "get_backend") -> type[Backend]:
    """The Backend subclass registered as ``name``, importing it on first use."""
    cls = _REG.classes.get(name)
    if cls is not None:
        return cls
    entry = _find(_REG.entries, name)
    if entry is None:
        raise _not_found(name, op)
    target = entry.target
    if isinstance(target, str):
        mod, _, attr = target.partition(":")
        try:
            cls = getattr(importlib.import_module(mod), attr)
        except ConfigError:  # a plugin reading the settings at import: the user's mistake
            raise
        except Exception as e:
            raise PluginError(
                f"{op}: backend {name!r} (from {entry.distribution or mod}) failed to load: "
                f"{type(e).__name__}: {e}. Reinstall it, or pick another backend."
            ) from e
    else:
        cls = target
    if not (isinstance(cls, type) and issubclass(cls, Backend)):
        raise PluginError(
            f"{op}: backend {name!r} target {target!r} is not a numerix Backend class"
        )
    _check_name(name, cls, op)
    _check_required(name, cls, op)
    _REG.classes[name] = cls
    return cls


def _check_required(name: str, cls: type, op: str) -> None:
    """Refuse a backend class without a method for every required primitive (the
    registry's ``REQUIRED``; ``REQUIRED_FOR_COMPLEX`` where it holds complex dtypes),
    naming each one missing."""
    missing = required_missing(cls)
    if missing:
        raise PluginError(
            f"{op}: backend {name!r}: class {cls.__qualname__} does not implement the "
            f"required primitive(s) {', '.join(missing)}; every backend implements the "
            f"required core (docs/contract.md, 'The required core'), and the core composes "
            f"the other primitives from it"
        )


def _check_name(name: str, cls: type, op: str) -> None:
    """Refuse a backend class registered as ``name`` whose own ``name`` differs: instances
    are keyed by the class's name, so a subclass that inherits its parent's would serve
    the parent's tensors, or hand back the parent's instance for its own name."""
    have = getattr(cls, "name", None)
    if have == name:
        return
    owner = next((b for b in cls.__mro__ if "name" in vars(b)), None)
    inherited = (
        f" (inherited from {owner.__qualname__})" if owner is not None and owner is not cls else ""
    )
    raise PluginError(
        f"{op}: backend {name!r}: class {cls.__qualname__} has name {have!r}{inherited}, "
        f"and a backend's name is its identity (its instances, its tensors' backend); set "
        f"name = {name!r} in {cls.__qualname__}"
    )


def _find(table: dict[str, Any], name: str) -> Any:
    """The entry ``name`` of ``table`` (backends or compilers): one of the project's own
    names loads its plugin alone; any other name not registered yet runs the discovery."""
    entry = table.get(name)
    if entry is None and not _REG.discovered:
        if _REG.load_own(name):
            entry = table.get(name)
        if entry is None:
            _REG.discover()
            entry = table.get(name)
    return entry


def _not_found(name: str, op: str) -> NumerixError:
    """The error for a backend name no loaded plugin provides: a :class:`PluginError` when
    the plugin that would provide it is installed but broken (the reason, and how to
    reinstall it), else a :class:`BackendNotFoundError` with a 'did you mean' or the
    command that installs it."""
    installed = sorted(_REG.entries)
    broken = [b for b in _REG.broken if b.name == name]
    msg = f"{op}: no backend named {name!r}; installed backends: {', '.join(installed) or 'none'}"
    if broken:
        dist = broken[0].distribution
        fix = f"; reinstall it with: {install_command(dist, reinstall=True)}" if dist else ""
        return PluginError(
            f"{op}: backend {name!r}: the plugin providing it ({dist or 'a plugin'}) is broken: "
            f"{broken[0].reason}{fix}. Installed backends: {', '.join(installed) or 'none'}"
        )
    hint = close_name(name, installed)
    if hint:
        msg += hint
    elif name in RESERVED_BACKENDS and name != "binary":
        msg += f". Install it with: {install_command(RESERVED_BACKENDS[name])}"
    return BackendNotFoundError(msg)


#: The folder of each of the project's distributions inside a checkout of numerix.
CHECKOUT_FOLDERS = {
    "numerix": "packages/core",
    "numerix-binary": "packages/backend-binary",
    "numerix-xla": "packages/backend-xla",
    "numerix-torch": "packages/backend-torch",
}


def _direct_url(dist: str) -> dict[str, Any] | None:
    """The PEP 610 record (``direct_url.json``) of an installed distribution: present
    when it was installed from a folder, a file or a VCS URL rather than an index."""
    import json
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        text = distribution(dist).read_text("direct_url.json")
    except PackageNotFoundError:
        return None
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) and isinstance(data.get("url"), str) else None


def _file_path(url: str) -> Any:
    from pathlib import Path
    from urllib.parse import unquote, urlparse

    parsed = urlparse(url)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


def install_command(dist: str, extra: str | None = None, *, reinstall: bool = False) -> str:
    """The command that installs distribution ``dist`` (with ``extra``) the way numerix
    itself was installed, so that it works here (PEP 610 ``direct_url.json``):

    - from a checkout (``pip install -e packages/core``, or a plain folder install): the
      package's folder in that checkout, editable if numerix is;
    - from a VCS URL: the same URL and commit, with the package's subdirectory;
    - from an index (no ``direct_url.json``): ``pip install numerix-xla``.

    ``dist`` itself is looked at first (a reinstall), then numerix. With ``reinstall``,
    an install from an index or a file forces the reinstall (a folder install always does).
    """
    quoted = f'"{dist}[{extra}]"' if extra else dist
    force = "--force-reinstall " if reinstall else ""
    folder = CHECKOUT_FOLDERS.get(dist)
    for source in (dist, "numerix"):
        info = _direct_url(source)
        if info is None:
            continue
        url = info["url"]
        sub = CHECKOUT_FOLDERS.get(source)
        vcs = info.get("vcs_info")
        if isinstance(vcs, dict) and folder is not None:
            rev = vcs.get("commit_id") or vcs.get("requested_revision")
            at = f"@{rev}" if rev else ""
            scheme = vcs.get("vcs", "git")
            base = url if url.startswith(f"{scheme}+") else f"{scheme}+{url}"
            name = f"{dist}[{extra}]" if extra else dist
            return f'pip install "{name} @ {base}{at}#subdirectory={folder}"'
        path = _file_path(url)
        if path is None:
            continue
        if isinstance(info.get("dir_info"), dict):
            # a folder: the distribution's own (a reinstall), or its sibling in numerix's checkout
            if source == dist:
                target = path
            elif folder is not None and sub is not None and path.as_posix().endswith(sub):
                root = path
                for _ in sub.split("/"):
                    root = root.parent
                target = root / folder
                if not (target / "pyproject.toml").is_file():
                    continue
            else:
                continue
            editable = "-e " if info["dir_info"].get("editable") else ""
            spec = f"{target}[{extra}]" if extra else str(target)
            return (
                f'pip install {editable}"{spec}"'
                if extra or " " in spec
                else (f"pip install {editable}{spec}")
            )
        if isinstance(info.get("archive_info"), dict) and path.parent.is_dir():
            # a wheel or sdist file: its folder may hold the other distributions' files
            return f"pip install {force}{quoted} --find-links {path.parent}"
    return f"pip install {force}{quoted}"


def get_backend(name: str, **options: Any) -> Backend:
    """The backend instance ``name`` with ``options`` (instances are cached singletons)."""
    key = (name, tuple(sorted(options.items())))
    try:
        return _REG.instances[key]
    except KeyError:
        pass
    except TypeError:  # unhashable option value
        raise PluginError(
            f"get_backend: options of {name!r} must be hashable, got {options!r}"
        ) from None
    cls = backend_class(name)
    be = cls(**options)
    with _REG.lock:
        # canonical instance: options with defaults filled in
        canon = _REG.instances.setdefault(be._key, be)
        _REG.instances[key] = canon
    return canon


# an unpickled Backend asks this registry for its instance (numerix.backend sits below
# this module and cannot import it)
numerix.backend.backend_lookup = get_backend


def devices(backend: str | None = None) -> list[str]:
    """The devices numerix can place tensors on, as backend specs
    (``["binary:cpu", "torch:cpu", "xla:host:0"]``, as ``jax.devices()`` lists JAX's); with
    ``backend``, that backend's only. Each entry works as a ``backend=`` argument. A
    backend that fails to load is left out of the full list (``numerix info`` lists it
    as broken); named, its error is raised."""
    if backend is not None and not isinstance(backend, str):
        raise BackendNotFoundError(
            f"devices: backend must be a backend name such as 'xla', got {backend!r}"
        )
    names = [backend] if backend is not None else sorted(backend_entries())
    out: list[str] = []
    for name in names:
        try:
            cls = backend_class(name, "devices")
        except PluginError:
            if backend is not None:
                raise
            continue
        out += [f"{name}:{d}" for d in cls.devices()]
    return out


#: what the core keeps per backend beside the backends' own caches (the 0-d operands of
#: Python scalars): each is emptied by :func:`clear_caches`
_CORE_CACHES: list[Callable[[], None]] = []


def clears_with_caches(clear: Callable[[], None]) -> Callable[[], None]:
    """Register ``clear`` (a function emptying a cache of the core that holds tensors of
    some backend) to run on :func:`clear_caches`; returns it."""
    _CORE_CACHES.append(clear)
    return clear


def clear_caches() -> None:
    """Drop the compiled kernels every backend loaded in this process keeps
    (:meth:`Backend.clear_caches`), as ``jax.clear_caches()`` does for JAX: their memory
    is freed, and the next call of each kernel compiles it again; and the tensors the
    core keeps for reuse (the operands of Python scalars). Programs that
    ``jit``-compiled functions hold stay with those functions."""
    with _REG.lock:
        classes = list(dict.fromkeys(_REG.classes.values()))
    for cls in classes:
        cls.clear_caches()
    for clear in _CORE_CACHES:
        clear()


def parse_spec(spec: Any, op: str = "backend") -> tuple[str, dict[str, Any]]:
    """``"xla:cuda:1"``, ``("xla", {"client": "cuda"})`` or ``"binary"`` → (name, options)."""
    if isinstance(spec, str):
        name, *fields = spec.split(":")
        if not fields:
            return name, {}
        cls = backend_class(name, op)
        if len(fields) > len(cls.spec_fields):
            raise BackendNotFoundError(
                f"{op}: {spec!r} has {len(fields)} fields after the name, backend {name!r} takes "
                f"at most {len(cls.spec_fields)} ({':'.join(cls.spec_fields) or 'none'})"
            )
        opts: dict[str, Any] = {}
        for f, v in zip(cls.spec_fields, fields):
            opts[f] = int(v) if v.isdigit() else v
        return name, opts
    if (
        isinstance(spec, tuple)
        and len(spec) == 2
        and isinstance(spec[0], str)
        and isinstance(spec[1], Mapping)
    ):
        return spec[0], dict(spec[1])
    raise BackendNotFoundError(
        f"{op}: cannot read {spec!r} as a backend; use a name ('binary'), a 'name:device' string "
        f"('xla:cuda:1'), a (name, options) tuple or a Backend instance"
    )


# ---------------------------------------------------------------- compilers


def register_compiler(
    name: str,
    cls: Any,
    *,
    description: str = "",
    contract: int = COMPILER_CONTRACT_VERSION,
    replace: bool = False,
    outruns: tuple[str, ...] = (),
) -> None:
    """Register a compiler at run time (tests, notebooks).

    :param cls: the :class:`numerix.defn.Compiler` subclass or its ``"module:Class"``.
    :param replace: replace an existing compiler of that name instead of raising.
    :param outruns: see :class:`CompilerEntry`.
    """
    _register(CompilerEntry(name, cls, contract, description, outruns=outruns), replace)


def unregister_compiler(name: str) -> None:
    """Remove a compiler registered at run time."""
    with _REG.lock:
        _REG.compilers.pop(name, None)
        _REG.compiler_instances.pop(name, None)


def compiler_entries() -> dict[str, CompilerEntry]:
    """Every compiler installed (the core's ``evaluator`` and the plugins'), by name."""
    _REG.discover()
    return dict(_REG.compilers)


def get_compiler(name: str, op: str = "get_compiler") -> Any:
    """The compiler instance registered as ``name`` (imported on first use, then cached).

    :raises ArgumentError: no compiler has that name (a backend name is called out as
        one); the message lists the installed compilers.
    :raises PluginError: the plugin providing it failed to load.
    """
    comp = _REG.compiler_instances.get(name)
    if comp is not None:
        return comp
    entry = _find(_REG.compilers, name)
    if entry is None:
        from numerix.errors import ArgumentError

        installed = ", ".join(sorted(_REG.compilers)) or "none"
        broken = [b for b in _REG.broken if b.name == name]
        if broken:
            raise PluginError(
                f"{op}: compiler {name!r} is broken: {broken[0].reason}; compilers: {installed}"
            )
        if name in _REG.entries:
            raise ArgumentError(
                f"{op}: {name!r} is a backend, not a compiler; compilers: {installed}. To run on "
                f"the {name} backend, pass tensors that live there (numerix.backend_transfer(t, "
                f"{name!r})) to a compiler such as 'evaluator'"
            )
        raise ArgumentError(
            f"{op}: no compiler named {name!r}; compilers: {installed}"
            + close_name(name, _REG.compilers)
        )
    target = entry.target
    if isinstance(target, str):
        mod, _, attr = target.partition(":")
        try:
            target = getattr(importlib.import_module(mod), attr)
        except Exception as e:
            raise PluginError(
                f"{op}: compiler {name!r} (from {entry.distribution or mod}) failed to load: "
                f"{type(e).__name__}: {e}. Reinstall it, or pick another compiler."
            ) from e
    if not (isinstance(target, type) and issubclass(target, Compiler)):
        raise PluginError(
            f"{op}: compiler {name!r} target {entry.target!r} is not a numerix.defn.Compiler class"
        )
    serves = getattr(entry, "serves", None)
    if serves is not None and serves != (target.backend or "*"):
        raise PluginError(
            f"{op}: compiler {name!r} (from {entry.distribution or 'a runtime registration'}) "
            f"declares serves={serves!r} in its CompilerEntry, but its class serves "
            f"{target.backend or '*'!r} (Compiler.backend); make the two agree"
        )
    with _REG.lock:
        comp = _REG.compiler_instances.setdefault(name, target())
    return comp
