"""numerix's settings: one pydantic-settings model, its sources and where each value came from.

The sources and their precedence are listed in :mod:`numerix.configuration`. Each
installed plugin contributes the model of its ``backends.<name>`` table through the
``numerix_settings_models`` hook. Every model forbids unknown keys; every error is a
:class:`numerix.ConfigError` naming the source (file and line, or variable) and the key.
This module imports pydantic; ``import numerix`` does not import it.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import sys
import typing
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from numerix import _dispatch, plugins
from numerix.backend import Backend
from numerix.configuration import _state
from numerix.errors import ConfigError, NumerixError, PluginError

__all__ = [
    "NumerixSettings",
    "DefnSettings",
    "CompileSettings",
    "DebugSettings",
    "BackendsSettings",
    "Source",
    "Effective",
    "settings_class",
    "settings",
    "load_settings",
    "current",
    "config",
    "reload_config",
    "effective_values",
    "reference_markdown",
    "KNOWN_PLUGINS",
    "XLA_TARGET_EXTRAS",
    "LIBTORCH_TARGET_EXTRAS",
]

#: Backends numerix knows the distribution of, for ``pip install`` hints.
KNOWN_PLUGINS: dict[str, str] = {"xla": "numerix-xla", "torch": "numerix-torch"}
#: ``XLA_TARGET`` values and the extra of numerix-xla that provides each ("" = none).
XLA_TARGET_EXTRAS: dict[str, str] = {
    "cpu": "",
    "cuda": "cuda12",
    "cuda12": "cuda12",
    "cuda13": "cuda13",
    "rocm": "rocm",
    "tpu": "tpu",
}
#: ``LIBTORCH_TARGET`` values. PyTorch's accelerator builds come from PyTorch's own package
#: index, not from extras: numerix-torch installs plainly ("") and ``numerix doctor`` asks
#: the installed build (``Backend.check_target``) for the command that fixes a mismatch.
LIBTORCH_TARGET_EXTRAS: dict[str, str] = {
    "cpu": "",
    "cu118": "",
    "cu121": "",
    "cu124": "",
    "cu126": "",
    "cu128": "",
    "cu130": "",
    "rocm": "",
}

_SPEC = re.compile(r"^[A-Za-z_][\w\-]*(:[\w.\-]*)*$")
_BARE = {"xla_target": "XLA_TARGET", "libtorch_target": "LIBTORCH_TARGET"}


# ====================================================================== models
class BackendsSettings(BaseModel):
    """One table per installed backend plugin (``[backends.<name>]``)."""

    model_config = ConfigDict(extra="forbid")


class DefnSettings(BaseModel):
    """``numerix.jit`` and ``numerix.defn`` (``[defn]``)."""

    model_config = ConfigDict(extra="forbid")

    cache_size: int = Field(
        default=64,
        ge=1,
        description="The most signatures (shapes, dtypes, backends, static values) each "
        "jitted function keeps compiled; past it, the least recently used program is "
        "dropped and its memory freed (`f.cache_info()` counts the evictions). Read when "
        "a call compiles.",
    )
    auto_budget: float = Field(
        default=0.2,
        gt=0,
        le=600,
        description='The most seconds `jit(compiler="auto")` spends timing its candidate '
        "compilers on a new signature's first call (their compilations and first calls "
        "come on top); the search stops sooner when one is clearly the fastest.",
    )


class CompileSettings(BaseModel):
    """What compilers keep between processes (``[compile]``)."""

    model_config = ConfigDict(extra="forbid")

    cache_dir: str | None = Field(
        default=None,
        description="A directory where compilers keep their compiled programs between "
        "processes, so that a new process's first call of a jitted function loads its "
        "program instead of tracing and compiling it again: the xla compiler keeps its "
        "executables in `numerix-xla/` there, filed under the traced graph's fingerprint, "
        "and points JAX's persistent compilation cache at it (`jax_compilation_cache_dir`) "
        'for the rest; the torch compiler\'s `mode="inductor"` keeps its AOTInductor '
        "packages in `numerix-torch/` (and inductor's own caches in `torch-inductor/`). "
        "Unset: nothing is kept. Read at each compilation; numerix never replaces a cache "
        "directory JAX or torch was given otherwise (it warns, and keeps theirs).",
    )

    @field_validator("cache_dir", mode="before")
    @classmethod
    def _check_cache_dir(cls, v: Any) -> Any:
        if isinstance(v, str) and not v.strip():
            raise ValueError("cache_dir is empty; give a directory, or leave it unset")
        return v


class DebugSettings(BaseModel):
    """Checks for backend authors and the conformance kit (``[debug]``)."""

    model_config = ConfigDict(extra="forbid")

    check_rules: bool = Field(
        default=False,
        description="Check every kernel's result against its primitive's shape and dtype "
        "rules (the tensor's and its native array's); a mismatch raises "
        "`numerix.errors.RuleCheckError` naming the primitive and the backend. For backend "
        "authors; the conformance kit turns it on. Read with the environment and the files "
        "(`numerix.reload_config()` reads it again); nothing is checked, and nothing costs, "
        "when off.",
    )


class NumerixSettings(BaseSettings):
    """Every setting of numerix. Read it with :func:`settings`; change it with a file, an
    environment variable, ``with numerix.config(...)`` or :func:`load_settings` keywords."""

    model_config = SettingsConfigDict(
        env_prefix=_state.ENV_PREFIX,
        env_nested_delimiter="__",
        case_sensitive=False,
        extra="forbid",
        validate_default=True,
    )

    default_backend: str | list[str] = Field(
        default="binary",
        description="The backend tensors are created on when no call or context names one: "
        "a name (`binary`), a `name:client:device` string (`xla:cuda:0`), or a priority list "
        '(`["xla:cuda", "torch:cuda", "binary"]`, or comma-separated in the environment) '
        "of which the first backend installed and available on this machine wins.",
    )
    default_compiler: str = Field(
        default="evaluator",
        description="The compiler `numerix.jit` uses when no `compiler=` is given. "
        "`evaluator` interprets the graph with the default backend; `auto` times every "
        "installed compiler serving a call's backend on its first call and keeps the "
        "fastest (see `[defn] auto_budget`).",
    )
    compiler_options: dict[str, Any] = Field(
        default_factory=dict,
        description="Options passed to the default compiler (a table; JSON in the environment).",
    )
    xla_target: str | None = Field(
        default=None,
        validation_alias=AliasChoices("xla_target", "XLA_TARGET"),
        description="The accelerator the XLA backend is built for (`cpu`, `cuda12`, `rocm`, "
        "`tpu`), as EXLA reads it. Read from the bare `XLA_TARGET` variable; `numerix doctor` "
        "checks that the installed numerix-xla can reach it.",
    )
    libtorch_target: str | None = Field(
        default=None,
        validation_alias=AliasChoices("libtorch_target", "LIBTORCH_TARGET"),
        description="The accelerator the Torch backend is built for (`cpu`, `cu121`, `rocm`), "
        "as Torchx reads it. Read from the bare `LIBTORCH_TARGET` variable.",
    )
    defn: DefnSettings = Field(
        default_factory=DefnSettings,
        description="Settings of numerix.jit and numerix.defn.",
    )
    compile: CompileSettings = Field(
        default_factory=CompileSettings,
        description="What compilers keep between processes.",
    )
    backends: BackendsSettings = Field(
        default_factory=BackendsSettings,
        description="One table per installed backend plugin, each with its own keys.",
    )
    debug: DebugSettings = Field(
        default_factory=DebugSettings,
        description="Checks for backend authors and the conformance kit.",
    )

    @field_validator("default_backend", mode="before")
    @classmethod
    def _check_default_backend(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = v.strip()
            if "," in v:
                v = [s.strip() for s in v.split(",") if s.strip()]
        if isinstance(v, str):
            if not _SPEC.match(v):
                raise ValueError(
                    f"{v!r} is not a backend spec; use a name ('binary') or a "
                    f"'name:client:device' string ('xla:cuda:0')"
                )
            return v
        if isinstance(v, (list, tuple)):
            if not v:
                raise ValueError("the priority list is empty; name at least one backend")
            for s in v:
                if not isinstance(s, str) or not _SPEC.match(s):
                    raise ValueError(
                        f"priority list entry {s!r} is not a backend spec; use names or "
                        f"'name:client:device' strings"
                    )
            return list(v)
        raise ValueError(
            f"expected a backend name, a 'name:client:device' string or a list of them, "
            f"got {type(v).__name__} {v!r}"
        )

    @field_validator("default_compiler")
    @classmethod
    def _check_compiler(cls, v: str) -> str:
        if not re.match(r"^[A-Za-z_][\w\-]*$", v):
            raise ValueError(f"{v!r} is not a compiler name")
        return v

    @field_validator("xla_target", "libtorch_target")
    @classmethod
    def _check_target(cls, v: str | None) -> str | None:
        if v is not None and not re.match(r"^[a-z0-9_]+$", v.strip().lower()):
            raise ValueError(f"{v!r} is not a build target (cpu, cuda12, cu121, rocm, tpu, ...)")
        return None if v is None else v.strip().lower()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        layers = _building.get()
        if layers is None:  # constructed directly: init arguments, then the usual layers
            layers = _read_layers(settings_cls)
            return (init_settings, *(_LayerSource(settings_cls, lay) for lay in layers))
        return tuple(_LayerSource(settings_cls, lay) for lay in layers)


# ====================================================================== sources
@dataclass
class Layer:
    """The data one source provides, before validation."""

    kind: str  # "argument", "context", "env", "explicit", "project", "user"
    data: dict[str, Any]
    file: _state.ConfigFile | None = None


class _LayerSource(PydanticBaseSettingsSource):
    """A pydantic-settings source serving one already-read :class:`Layer`."""

    def __init__(self, settings_cls: type[BaseSettings], layer: Layer) -> None:
        super().__init__(settings_cls)
        self.layer = layer

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self.layer.data.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return self.layer.data


_building: ContextVar[list[Layer] | None] = ContextVar("numerix_settings_layers", default=None)


@dataclass(frozen=True)
class Source:
    """Where a value came from.

    :param kind: ``"argument"``, ``"context"``, ``"env"``, ``"explicit"`` (the file named
        by ``NUMERIX_CONFIG``), ``"project"``, ``"user"`` or ``"default"``.
    """

    kind: str
    env: str | None = None
    file: str | None = None
    line: int | None = None
    key: str | None = None

    def __str__(self) -> str:
        if self.kind == "env":
            return f"environment variable {self.env}"
        if self.file is not None:
            where = f"{self.file}:{self.line}" if self.line else self.file
            what = {
                "explicit": "file named by NUMERIX_CONFIG",
                "project": "project file",
                "user": "user file",
            }[self.kind]
            return f"{where} ({what}, key {self.key})"
        return {
            "argument": "call argument",
            "context": "numerix.config() context",
            "default": "default",
        }[self.kind]

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "env": self.env,
            "file": self.file,
            "line": self.line,
            "key": self.key,
            "text": str(self),
        }


def _normalise(data: Mapping[str, Any]) -> dict[str, Any]:
    """Top-level keys: the bare aliases (``XLA_TARGET``) become field names."""
    out: dict[str, Any] = {}
    for k, v in data.items():
        low = k.lower() if isinstance(k, str) else k
        out[low if low in _BARE else k] = v
    return out


def _env_names() -> dict[str, str]:
    return {k.upper(): k for k in os.environ}


def _env_var_for(path: tuple[str, ...]) -> str:
    if path and path[0] in _BARE:
        return _BARE[path[0]]
    names = _env_names()
    for n in range(len(path), 0, -1):
        cand = (_state.ENV_PREFIX + "__".join(path[:n])).upper()
        if cand in names:
            return names[cand]
    full = (_state.ENV_PREFIX + "__".join(path)).upper()
    under = sorted(names[u] for u in names if u.startswith(full + "__"))
    return ", ".join(under) if under else full


def _check_env_names(cls: type[BaseSettings]) -> None:
    fields = set(cls.model_fields)
    for upper, name in _env_names().items():
        if not upper.startswith(_state.ENV_PREFIX) or upper in _state.PROCESS_ENV:
            continue
        first = upper[len(_state.ENV_PREFIX) :].split("__")[0].lower()
        if first in _BARE:
            raise ConfigError(
                f"environment variable {name}: numerix reads {_BARE[first]} bare, without the "
                f"NUMERIX_ prefix; set {_BARE[first]} instead"
            )
        if first not in fields:
            valid = sorted(f for f in fields if f not in _BARE)
            close = difflib.get_close_matches(first, valid, n=1, cutoff=0.6)
            hint = f"; did you mean {_state.ENV_PREFIX}{close[0].upper()}?" if close else ""
            raise ConfigError(
                f"environment variable {name}: unknown key {first!r}{hint} Valid variables: "
                + ", ".join(
                    _state.ENV_PREFIX
                    + f.upper()
                    + {"backends": "__<NAME>__<KEY>", "defn": "__<KEY>"}.get(f, "")
                    for f in valid
                )
                + "".join(f", {v}" for v in _state.PROCESS_ENV)
                + ", XLA_TARGET, LIBTORCH_TARGET"
            )


def _read_env(cls: type[BaseSettings]) -> dict[str, Any]:
    if not _state.env_is_set():
        return {}
    _check_env_names(cls)
    from pydantic_settings import SettingsError

    try:
        data = EnvSettingsSource(cls)()
    except RecursionError:
        names = [n for u, n in sorted(_env_names().items()) if u.startswith(_state.ENV_PREFIX)]
        deep = [n for n in names if _json_depth(os.environ[n]) > _state.MAX_DEPTH] or names
        raise ConfigError(
            f"environment variable {', '.join(deep)}: JSON nested too deeply to read (no "
            f"numerix setting nests more than {_state.MAX_DEPTH} levels)"
        ) from None
    except SettingsError as e:
        m = re.search(r'field "(\w+)"', str(e))
        key = m.group(1) if m else "?"
        cause = e.__cause__ or e
        raise ConfigError(
            f"environment variable {_env_var_for((key,))}: {key}: cannot read the value: "
            f"{cause} (tables and lists are written as JSON in the environment)"
        ) from None
    data = _normalise(data)
    path = _state.too_deep(data)
    if path is not None:
        raise ConfigError(
            f"environment variable {_env_var_for(path)}: {'.'.join(path[:6])}: nested more "
            f"than {_state.MAX_DEPTH} levels deep; no numerix setting nests so deep"
        )
    return data


def _json_depth(text: str) -> int:
    """How deep ``text``'s JSON arrays and objects nest (strings skipped)."""
    depth = most = 0
    quoted = escaped = False
    for c in text:
        if quoted:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c in "[{":
            depth += 1
            most = max(most, depth)
        elif c in "]}":
            depth -= 1
    return most


def _read_layers(cls: type[BaseSettings]) -> list[Layer]:
    """The environment and the files, highest precedence first."""
    layers = [Layer("env", _read_env(cls))]
    for f in _state.config_files():
        layers.append(Layer(f.kind, _normalise(_state.read_toml(f)), f))
    return layers


def _leaves(data: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for k, v in data.items():
        path = (*prefix, str(k))
        if isinstance(v, Mapping) and v:
            yield from _leaves(v, path)
        else:
            yield path


def _source_of(layer: Layer, path: tuple[str, ...]) -> Source:
    if layer.kind == "env":
        return Source("env", env=_env_var_for(path))
    if layer.file is not None:
        full = (*layer.file.table, *path)
        return Source(
            layer.kind,
            file=str(layer.file.path),
            line=_state.toml_key_line(layer.file.path, full),
            key=".".join(full),
        )
    return Source(layer.kind)


def _drop_uninstalled(layers: list[Layer], installed: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Remove ``backends.<name>`` tables of known plugins that are not installed (xla,
    torch): a shared config may carry them. Warn, naming the source; returns
    ``(backend name, note)`` pairs."""
    notes = []
    for lay in layers:
        bk = lay.data.get("backends")
        if not isinstance(bk, dict):
            continue
        for name in [n for n in bk if n in KNOWN_PLUGINS and n not in installed]:
            src = _source_of(lay, ("backends", name))
            note = (
                f"{src}: backends.{name}: the {name!r} backend is not installed, so these "
                f"settings are not used; install it with: {plugins.install_command(KNOWN_PLUGINS[name])}"
            )
            notes.append((name, note))
            warn_at_caller(note, ConfigWarning)
            lay.data = {**lay.data, "backends": {k: v for k, v in bk.items() if k != name}}
            bk = lay.data["backends"]
    return notes


class ConfigWarning(UserWarning):
    """Configuration that numerix reads but cannot use here (a plugin not installed)."""


_NUMERIX_DIR = os.path.dirname(os.path.dirname(os.path.abspath(_state.__file__)))
#: Frames a warning never points at: numerix's own, and contextlib's (``with numerix.config``).
_SKIP_PREFIXES = (os.path.join(_NUMERIX_DIR, ""), contextlib.__file__)


def warn_at_caller(message: str, category: type[Warning]) -> None:
    """Warn pointing at the user's line: the first frame outside numerix (and contextlib),
    whichever of numerix's functions read the configuration on the way."""
    if sys.version_info >= (3, 12):
        warnings.warn(message, category, skip_file_prefixes=_SKIP_PREFIXES)
        return
    level, frame = 2, typing.cast(Any, sys._getframe(1))
    while frame is not None and frame.f_code.co_filename.startswith(_SKIP_PREFIXES):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


# ====================================================================== the model class
_class_cache: dict[tuple[tuple[str, int], ...], type[NumerixSettings]] = {}


def settings_class(names: Any = None) -> type[NumerixSettings]:
    """:class:`NumerixSettings` with ``backends`` holding one model per installed plugin.

    :param names: the backends whose tables the configuration sets: only their plugins
        need loading (and those already loaded are included); default: every plugin's.
    """
    from pydantic import create_model

    models = plugins.settings_models(names)
    key = tuple(sorted((n, id(m)) for n, (m, _) in models.items()))
    cls = _class_cache.get(key)
    if cls is not None:
        return cls
    fields: dict[str, Any] = {}
    for name, (model, dist) in sorted(models.items()):
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise ConfigError(
                f"the settings model of backend {name!r} (from {dist or 'a runtime registration'}) "
                f"is not a pydantic BaseModel subclass: {model!r}"
            )
        doc = (model.__doc__ or "").strip().splitlines()
        fields[name] = (
            model,
            Field(default_factory=model, description=doc[0] if doc else f"The {name} backend."),
        )
    backends = create_model("BackendsSettings", __base__=BackendsSettings, **fields)
    cls = create_model(
        "NumerixSettings",
        __base__=NumerixSettings,
        __doc__=NumerixSettings.__doc__,
        backends=(
            backends,
            Field(
                default_factory=backends,
                description=NumerixSettings.model_fields["backends"].description,
            ),
        ),
    )
    assert isinstance(cls, type) and issubclass(cls, NumerixSettings)
    _class_cache[key] = cls
    return cls


# ====================================================================== validation
def _model_at(cls: type[BaseModel], path: tuple[str, ...]) -> type[BaseModel] | None:
    model: type[BaseModel] = cls
    for part in path:
        f = model.model_fields.get(part)
        ann = f.annotation if f is not None else None
        if not (isinstance(ann, type) and issubclass(ann, BaseModel)):
            return None
        model = ann
    return model


def _origin(loc: tuple[str, ...], origins: Mapping[tuple[str, ...], Source]) -> Source:
    for n in range(len(loc), 0, -1):
        if loc[:n] in origins:
            return origins[loc[:n]]
    # a table given as a whole: the first source of anything under it
    for path, src in origins.items():
        if path[: len(loc)] == loc:
            return src
    return Source("default")


def _error_from(
    e: ValidationError, cls: type[BaseModel], origins: Mapping[tuple[str, ...], Source]
) -> ConfigError:
    lines = []
    for err in e.errors(include_url=False):
        loc = tuple(str(x) for x in err["loc"])
        loc = tuple(x for x in loc if x not in ("str", "list[str]"))
        src = _origin(loc, origins)
        key = ".".join(loc)
        if err["type"] == "extra_forbidden":
            parent = _model_at(cls, loc[:-1])
            valid = sorted(parent.model_fields) if parent is not None else []
            close = difflib.get_close_matches(loc[-1].lower(), valid, n=1, cutoff=0.6)
            if close and src.kind == "env":
                hint = f"; did you mean {_env_var_for((*loc[:-1], close[0]))}?"
            elif close:
                hint = f"; did you mean {close[0]!r}?"
            else:
                hint = ""
            msg = f"unknown key {loc[-1]!r}{hint} Valid keys here: {', '.join(valid) or 'none'}"
            if loc[:-1] == ("backends",):
                msg += (
                    f". Installed backends with settings: {', '.join(valid) or 'none'}; "
                    f"all installed backends: {', '.join(sorted(plugins.backend_entries())) or 'none'}"
                )
        else:
            msg = err["msg"].removeprefix("Value error, ")
            if "input" in err and err["type"] != "missing":
                msg += f" (got {err['input']!r})"
        lines.append(f"{src}: {key}: {msg}")
    head = "invalid numerix configuration" if len(lines) > 1 else ""
    return ConfigError(f"{head}:\n  " + "\n  ".join(lines) if head else lines[0])


# ====================================================================== effective settings
@dataclass
class Effective:
    """Validated settings, where each value came from, and the layers they were read from."""

    settings: NumerixSettings
    origins: dict[tuple[str, ...], Source]
    layers: list[Layer]
    files: list[_state.ConfigFile]
    #: ``(backend name, note)`` for each ``backends.<name>`` table of a plugin not installed
    notes: list[tuple[str, str]] = field(default_factory=list)
    _backend: Backend | None = field(default=None, repr=False)

    def source(self, path: tuple[str, ...]) -> Source:
        """Where the value at ``path`` (``("backends", "binary", "device")``) came from."""
        return _origin(path, self.origins)

    def default_backend(self) -> Backend:
        """The backend :attr:`NumerixSettings.default_backend` selects (cached)."""
        b = self._backend
        if b is None:
            b = self._backend = resolve_default_backend(self)
        return b


def _env_backend_names() -> set[str] | None:
    """The backends whose settings the environment sets (``NUMERIX_BACKENDS__XLA__CLIENT``
    names ``xla``); None when ``NUMERIX_BACKENDS`` sets the whole table (JSON)."""
    names: set[str] = set()
    head = f"{_state.ENV_PREFIX}BACKENDS"
    for k in os.environ:
        u = k.upper()
        if u == head:
            return None
        if u.startswith(head + "__"):
            names.add(u[len(head) + 2 :].split("__")[0].lower())
    return names


def _named_backends(layers: list[Layer]) -> set[str] | None:
    """The backends whose ``backends.<name>`` tables the layers set: the settings models
    that validating them needs (None: a table that is not one, checked against all)."""
    names: set[str] = set()
    for lay in layers:
        bk = lay.data.get("backends")
        if bk is None:
            continue
        if not isinstance(bk, Mapping):
            return None
        names.update(str(k) for k in bk)
    return names


def _build(layers: list[Layer], files: list[_state.ConfigFile], every: bool = False) -> Effective:
    # only the plugins whose tables are set are loaded: a plugin not named keeps its
    # defaults, which its backend reads as such (settings().backends.<name> is None)
    names = None if every else _named_backends(layers)
    cls = settings_class(names)
    notes = _drop_uninstalled(layers, plugins.settings_models(names))
    origins: dict[tuple[str, ...], Source] = {}
    for lay in layers:  # highest first: the first source of a path wins
        for path in _leaves(lay.data):
            if path not in origins:
                origins[path] = _source_of(lay, path)
    token = _building.set(layers)
    try:
        s = cls()
    except ValidationError as e:
        raise _error_from(e, cls, origins) from None
    finally:
        _building.reset(token)
    return Effective(s, origins, layers, files, notes)


def current() -> Effective:
    """The effective settings here: the innermost ``numerix.config(...)`` context, else
    the environment and files (read once; :func:`reload_config` reads them again)."""
    eff = _state.context.get()
    if eff is not None:
        return eff
    eff = _state.base
    if eff is None:
        with _state.lock:
            eff = _state.base
            if eff is None:
                cls = settings_class(_env_backend_names())
                files = _state.config_files()
                eff = _build(_read_layers(cls), files)
                _state.base = eff
                _dispatch.check_rules_setting(eff.settings.debug.check_rules)
    return eff


def settings() -> NumerixSettings:
    """The effective :class:`NumerixSettings` here (context, environment, files, defaults)."""
    return current().settings


def load_settings(**arguments: Any) -> NumerixSettings:
    """The effective settings with ``arguments`` on top (the highest-precedence source).

    >>> load_settings(default_backend="binary").default_backend
    'binary'
    """
    return _with_layer("argument", arguments).settings


def _with_layer(kind: str, data: Mapping[str, Any]) -> Effective:
    deep = _state.too_deep(data)
    if deep is not None:
        raise ConfigError(
            f"{Source(kind)}: {'.'.join(deep[:6])}: nested more than {_state.MAX_DEPTH} levels "
            f"deep; no numerix setting nests so deep"
        )
    base = current()
    layers = [
        Layer(kind, _normalise(data)),
        *(Layer(lay.kind, lay.data, lay.file) for lay in base.layers),
    ]
    return _build(layers, base.files)


@contextmanager
def config(**overrides: Any) -> Iterator[NumerixSettings]:
    """``with numerix.config(default_backend="binary", backends={"binary": {"device": "cpu"}}):``

    Scopes settings to the current context (thread / asyncio task), above the
    environment and the files; nested contexts stack. The overrides are validated on
    entry (:class:`numerix.ConfigError`). ``numerix.set_default_backend`` and
    ``numerix.default_backend`` still take precedence over the settings' default backend.
    """
    eff = _with_layer("context", overrides)
    token = _state.context.set(eff)
    try:
        yield eff.settings
    finally:
        _state.context.reset(token)


def reload_config() -> NumerixSettings:
    """Read the environment and the files again; returns the new settings."""
    _state.forget()
    return current().settings


# ====================================================================== the default backend
def resolve_default_backend(eff: Effective) -> Backend:
    """The backend instance the settings select, with its ``backends.<name>`` options.

    :raises ConfigError: naming the source of ``default_backend``: an unknown backend (the
        installed ones listed), a device that does not exist, or a priority list of which
        nothing is available.
    """
    spec = eff.settings.default_backend
    src = eff.source(("default_backend",))
    specs = spec if isinstance(spec, list) else [spec]
    tried = []
    for s in specs:
        try:
            name, opts = plugins.parse_spec(s, "default_backend")
            cls = plugins.backend_class(name, "default_backend")
        except NumerixError as e:
            if not isinstance(spec, list):
                raise ConfigError(f"{src}: default_backend: {_one_line(e)}") from None
            why = _one_line(e) if isinstance(e, PluginError) else _not_installed(s)
            tried.append(f"{s!r}: {why}")
            continue
        sub = getattr(eff.settings.backends, name, None)
        if isinstance(sub, BaseModel):
            for k, v in sub.model_dump().items():
                if k in cls.default_options and k not in opts:
                    opts[k] = v
        try:
            available = cls.is_available(**opts)
        except Exception as e:  # an availability probe that fails means "no"
            available = False
            tried.append(f"{s!r}: {type(e).__name__}: {e}")
        if available:
            try:
                return plugins.get_backend(name, **opts)
            except NumerixError as e:
                raise ConfigError(f"{src}: default_backend: {s!r}: {_one_line(e)}") from None
        if not isinstance(spec, list):
            raise ConfigError(
                f"{src}: default_backend: {s!r} is installed but not available on this machine "
                f"(devices: {', '.join(map(str, cls.devices())) or 'none'})"
            )
        tried.append(f"{s!r}: not available on this machine")
    raise ConfigError(
        f"{src}: default_backend: none of the backends in the priority list is available: "
        + "; ".join(tried)
        + f". Installed backends: {', '.join(sorted(plugins.backend_entries())) or 'none'}"
    )


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()).removeprefix("default_backend: ")


def _not_installed(spec: str) -> str:
    name = spec.split(":")[0]
    hint = KNOWN_PLUGINS.get(name)
    close = plugins.close_name(name, sorted(plugins.backend_entries()))
    return "not installed" + (close or (f" ({plugins.install_command(hint)})" if hint else ""))


# ====================================================================== numerix config
def effective_values(eff: Effective | None = None) -> list[dict[str, Any]]:
    """Every effective value with its source: what ``numerix config --json`` prints."""
    eff = eff or current()
    if set(plugins.settings_models()) - set(type(eff.settings.backends).model_fields):
        # the plugins the configuration does not name were not loaded to read it
        eff = _build(eff.layers, eff.files, every=True)
    rows = []

    def walk(model: BaseModel, prefix: tuple[str, ...]) -> None:
        for name in type(model).model_fields:
            v = getattr(model, name)
            path = (*prefix, name)
            if isinstance(v, BaseModel):
                walk(v, path)
            elif isinstance(v, dict) and v:
                for k, sub in v.items():
                    rows.append(_row((*path, str(k)), sub))
            else:
                rows.append(_row(path, v))

    def _row(path: tuple[str, ...], v: Any) -> dict[str, Any]:
        return {
            "key": ".".join(path),
            "value": v,
            "source": eff.source(path).as_dict(),
            "env": _env_var_for(path),
        }

    walk(eff.settings, ())
    return rows


# ====================================================================== reference
def _type_name(ann: Any) -> str:
    # get_origin: on 3.10, dict[str, Any] also passes isinstance(ann, type)
    plain = isinstance(ann, type) and typing.get_origin(ann) is None
    s = getattr(ann, "__name__", None) if plain else None
    s = s or str(ann)
    return s.replace("typing.", "").replace("NoneType", "None")


def reference_markdown(backends: list[str] | None = None) -> str:
    """The configuration reference (every key, type, default, environment variable), as
    a Markdown table generated from the models.

    :param backends: the plugins whose ``backends.<name>`` tables are included
        (default: every installed plugin's).
    """
    cls = settings_class()
    out = ["| key | type | default | environment variable | description |", "|---|---|---|---|---|"]

    def walk(model: type[BaseModel], prefix: tuple[str, ...]) -> None:
        for name, f in model.model_fields.items():
            path = (*prefix, name)
            ann = f.annotation
            if prefix == ("backends",) and backends is not None and name not in backends:
                continue
            if isinstance(ann, type) and issubclass(ann, BaseModel):
                walk(ann, path)
                continue
            default = f.get_default(call_default_factory=True)
            env = (
                _BARE.get(name)
                if not prefix and name in _BARE
                else (_state.ENV_PREFIX + "__".join(path).upper())
            )
            desc = " ".join((f.description or "").split()).replace("|", "\\|")
            typ = _type_name(ann).replace(" | ", " or ")
            out.append(
                f"| `{'.'.join(path)}` | `{typ}` | `{json.dumps(default)}` | `{env}` | {desc} |"
            )

    walk(cls, ())
    return "\n".join(out) + "\n"
