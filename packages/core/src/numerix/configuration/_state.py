"""Where numerix's configuration lives, found and read without importing pydantic.

This module is light on purpose (stdlib only, ``tomllib`` imported when a file is
read): :func:`numerix.get_default_backend` asks it whether anything is configured at
all, and only when something is does the settings model
(:mod:`numerix.configuration._settings`, pydantic) load.
It also holds the state shared by both: the context of ``with numerix.config(...)``
and the cache of the settings read from the environment and the files.

Reading configuration never writes a file and never imports a backend's library.
"""

from __future__ import annotations

import os
import re
import sys
from _thread import RLock  # threading's RLock class, without importing threading
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from numerix._frozen import Frozen
from numerix.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "ENV_PREFIX",
    "CONFIG_ENV",
    "SPEEDUPS_ENV",
    "speedups_turned_off",
    "PROCESS_ENV",
    "BARE_ENV",
    "ConfigFile",
    "user_config_path",
    "project_config_file",
    "config_files",
    "read_toml",
    "too_deep",
    "MAX_DEPTH",
    "toml_key_line",
    "nothing_configured",
    "forget",
]

#: Prefix of numerix's environment variables (``NUMERIX_DEFAULT_BACKEND``).
ENV_PREFIX = "NUMERIX_"
#: The variable naming a configuration file explicitly.
CONFIG_ENV = "NUMERIX_CONFIG"
#: The variable turning the compiled fast path off (``0``), read once as numerix is
#: imported (numerix._tensor), not a setting: no file or context can change it later.
SPEEDUPS_ENV = "NUMERIX_SPEEDUPS"
#: The variables read outside the settings.
PROCESS_ENV = (CONFIG_ENV, SPEEDUPS_ENV)
_ON = ("", "1", "true", "yes", "on")
_OFF = ("0", "false", "no", "off")
#: The ecosystem's own variables, read bare (as EXLA and Torchx read them).
BARE_ENV = ("XLA_TARGET", "LIBTORCH_TARGET")

PROJECT_FILE = "numerix.toml"
PYPROJECT = "pyproject.toml"
PYPROJECT_TABLE = ("tool", "numerix")

# ---------------------------------------------------------------- shared state
#: The effective configuration inside ``with numerix.config(...)`` (None outside).
context: ContextVar[Any] = ContextVar("numerix_config", default=None)
#: The configuration read from the environment and the files (read once, lazily).
base: Any = None
#: The backend the base configuration selects (cached by :mod:`numerix.configuration`).
base_backend: Any = None
lock = RLock()


class ConfigFile(Frozen):
    """A configuration file: where it is, which layer it is, and the table numerix reads.

    :param kind: ``"explicit"`` (named by ``NUMERIX_CONFIG``), ``"project"`` or ``"user"``.
    :param table: the keys of numerix's table inside the file: ``()`` for
        ``numerix.toml`` and the user file, ``("tool", "numerix")`` for ``pyproject.toml``.
    """

    __slots__ = ("kind", "path", "table")

    path: Path
    kind: str
    table: tuple[str, ...]

    def __init__(self, path: Path, kind: str, table: tuple[str, ...] = ()) -> None:
        self._set(path=path, kind=kind, table=table)


def _user_config_file() -> str | None:
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg:
        return os.path.join(xdg, "numerix", "config.toml")
    home = os.path.expanduser("~")
    if home == "~":  # no home directory
        return None
    return os.path.join(home, ".config", "numerix", "config.toml")


def _path(name: str) -> Path:
    # pathlib is imported when a file is found, not by the first tensor of a process
    # that has no configuration
    from pathlib import Path

    return Path(name)


def user_config_path() -> Path | None:
    """``$XDG_CONFIG_HOME/numerix/config.toml`` (default ``~/.config/numerix/config.toml``)."""
    name = _user_config_file()
    return None if name is None else _path(name)


def project_config_file(start: Path | None = None) -> ConfigFile | None:
    """The nearest ``numerix.toml`` or ``pyproject.toml`` in ``start`` (default: the working
    directory) or its parents; ``numerix.toml`` wins in a folder that has both.

    The first folder holding either is the project: the search stops there, so a
    ``pyproject.toml`` without ``[tool.numerix]`` ends it with no project settings. The
    search never climbs past the project's root, the first folder with a
    ``pyproject.toml`` or a ``.git`` (as ruff and pytest find it); outside any project
    only the working directory itself is read, so a ``numerix.toml`` in a shared parent
    (a temporary directory, a home) configures nothing below it.
    """
    try:
        here = os.path.realpath(os.getcwd() if start is None else os.fspath(start))
    except OSError:  # the working directory was removed
        return None
    folders = [here]
    while os.path.dirname(folders[-1]) != folders[-1]:
        folders.append(os.path.dirname(folders[-1]))
    # whether a parent is a project's root (the search may climb to it)
    inside = any(
        os.path.isfile(os.path.join(p, PYPROJECT)) or os.path.exists(os.path.join(p, ".git"))
        for p in folders[1:]
    )
    for folder in folders:
        if _is_file(os.path.join(folder, PROJECT_FILE), "project file"):
            return ConfigFile(_path(os.path.join(folder, PROJECT_FILE)), "project")
        if _is_file(os.path.join(folder, PYPROJECT), "project file"):
            return ConfigFile(_path(os.path.join(folder, PYPROJECT)), "project", PYPROJECT_TABLE)
        if not inside or os.path.exists(os.path.join(folder, ".git")):
            return None
    return None


def config_files() -> list[ConfigFile]:
    """The files read, highest precedence first: ``NUMERIX_CONFIG`` (or the project
    file), then the user file. Files that do not exist are left out, except a file
    named by ``NUMERIX_CONFIG``, which must exist."""
    files: list[ConfigFile] = []
    explicit = os.environ.get(CONFIG_ENV)
    if explicit:
        p = _path(explicit).expanduser()
        try:
            is_dir, is_file = p.is_dir(), p.is_file()
        except OSError as e:  # a name too long for the file system, a loop of links
            raise ConfigError(
                f"{CONFIG_ENV}={explicit}: cannot be used as a file name ({e.strerror}); point "
                f"{CONFIG_ENV} at a TOML file or unset it"
            ) from None
        if is_dir:
            raise ConfigError(
                f"{CONFIG_ENV}={explicit}: is a directory; point {CONFIG_ENV} at a TOML file "
                f"(such as {p / PROJECT_FILE}) or unset it"
            )
        if not is_file:
            raise ConfigError(
                f"{CONFIG_ENV}={explicit}: no such file; point {CONFIG_ENV} at a TOML file "
                f"or unset it"
            )
        files.append(ConfigFile(p, "explicit", PYPROJECT_TABLE if p.name == PYPROJECT else ()))
    else:
        proj = project_config_file()
        if proj is not None:
            files.append(proj)
    user = _user_config_file()
    if user is not None and _is_file(user, "user file"):
        files.append(ConfigFile(_path(user), "user"))
    return files


def _is_file(name: str, what: str) -> bool:
    """Whether the configuration file ``name`` exists; a folder (or anything else that is
    not a file) of that name is an error, not a file to skip."""
    if os.path.isfile(name):
        return True
    if not os.path.lexists(name):
        return False
    kind = (
        "a directory"
        if os.path.isdir(name)
        else "a link to nothing"
        if not os.path.exists(name)
        else "not a regular file"
    )
    raise ConfigError(
        f"{name}: is {kind}, where numerix reads its {what}; remove or rename it, or make it "
        f"a TOML file"
    )


def speedups_turned_off() -> bool:
    """Whether ``NUMERIX_SPEEDUPS`` turns the compiled fast path off (read once, by
    :mod:`numerix._tensor` as numerix is imported).

    :raises ConfigError: a value that is not one of the switches, naming the variable and
        the accepted values (an error at ``import numerix``: numerix does not guess which
        path was meant).
    """
    text = os.environ.get(SPEEDUPS_ENV, "")
    value = text.strip().lower()
    if value in _ON:
        return False
    if value in _OFF:
        return True
    raise ConfigError(
        f"environment variable {SPEEDUPS_ENV}={text!r}: not a switch; use 0 (or false, no, "
        f"off) to turn the compiled fast path off, 1 (or true, yes, on) or unset it to keep "
        f"it on"
    )


def _toml() -> Any:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
    return tomllib


# patterns of error paths: compiled on first use (re keeps them), not at import
_LINE_COL = r"\(at line (\d+), column (\d+)\)"


def read_toml(f: ConfigFile) -> dict[str, Any]:
    """numerix's table of the file ``f`` (``{}`` when a ``pyproject.toml`` has none).

    :raises ConfigError: the file cannot be read or is not valid TOML (naming the file
        and the line), or numerix's table is not a table.
    """
    tomllib = _toml()
    try:
        with open(f.path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as e:
        raise ConfigError(f"{f.path}: cannot read the configuration file: {e}") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{f.path}: not UTF-8 text: {e}") from None
    except RecursionError:
        raise ConfigError(
            f"{f.path}: malformed TOML: arrays or inline tables nested too deeply to read (no "
            f"numerix setting nests more than {MAX_DEPTH} levels); flatten the file"
        ) from None
    except tomllib.TOMLDecodeError as e:
        msg = str(e)
        m = re.search(_LINE_COL, msg)
        line = m.group(1) if m else None
        detail = f" (line {line}, column {m.group(2)})" if m else ""
        if line is None and "end of document" in msg:
            try:
                line = str(max(1, len(f.path.read_bytes().splitlines())))
            except OSError:
                line = None
            detail = f" (line {line}, at the end of the file)" if line else ""
        msg = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", msg).strip()
        where = f"{f.path}:{line}" if line else str(f.path)
        raise ConfigError(f"{where}: malformed TOML{detail}: {msg}") from None
    for k in f.table:
        data = data.get(k, {})
        if not isinstance(data, dict):
            raise ConfigError(
                f"{f.path}: [{'.'.join(f.table)}] must be a table, got {type(data).__name__}"
            )
    deep = too_deep(data)
    if deep is not None:
        key = f.table + deep
        line = toml_key_line(f.path, key)
        where = f"{f.path}:{line}" if line else str(f.path)
        name = ".".join(key[:6]) + (".…" if len(key) > 6 else "")
        raise ConfigError(
            f"{where} (key {name}): nested more than {MAX_DEPTH} levels deep; no numerix "
            f"setting nests so deep"
        )
    if f.kind == "project" and not f.table and data:
        sibling = f.path.with_name(PYPROJECT)
        if sibling.is_file():
            try:
                with open(sibling, "rb") as fh:
                    has = bool(tomllib.load(fh).get("tool", {}).get("numerix"))
            except Exception:  # only numerix.toml is read in this folder
                has = False
            if has:
                raise ConfigError(
                    f"{f.path} and {sibling} [tool.numerix] both hold numerix settings; "
                    f"keep one of them (numerix.toml would win, and the other would be ignored)"
                )
    return data


#: Deeper arrays and tables than this are refused as they are read: the settings' readers
#: and validators recurse through the values.
MAX_DEPTH = 32


def too_deep(data: Any) -> tuple[str, ...] | None:
    """The keys down to a value nested deeper than :data:`MAX_DEPTH`, or None."""
    todo: list[tuple[Any, tuple[str, ...], int]] = [(data, (), 0)]
    while todo:
        v, keys, depth = todo.pop()
        if depth > MAX_DEPTH:
            return keys
        if isinstance(v, dict):
            todo.extend((x, (*keys, str(k)), depth + 1) for k, x in v.items())
        elif isinstance(v, list):
            todo.extend((x, keys, depth + 1) for x in v)
    return None


def _split_key(key: str) -> tuple[str, ...]:
    return tuple(p.strip().strip("\"'") for p in key.split("."))


_HEADER = r"^\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$"
_ASSIGN = r"^([A-Za-z0-9_\-.\"' ]+?)\s*="


def toml_key_line(path: Path, key: tuple[str, ...]) -> int | None:
    """The line of ``path`` that sets ``key`` (a tuple of keys from the file's top), or
    the line of the nearest enclosing key or table; None if it cannot be found."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    table: tuple[str, ...] = ()
    best: tuple[int, int] | None = None  # (matched depth, line)
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = re.match(_HEADER, line)
        if m:
            table = _split_key(m.group(1))
            full = table
        else:
            m = re.match(_ASSIGN, line)
            if not m:
                continue
            full = table + _split_key(m.group(1))
        if full == key:
            return n
        if key[: len(full)] == full and (best is None or len(full) > best[0]):
            best = (len(full), n)
    return best[1] if best else None


def env_is_set() -> bool:
    """Whether any ``NUMERIX_…`` variable or ``XLA_TARGET``/``LIBTORCH_TARGET`` is set."""
    for k in os.environ:
        u = k.upper()
        if (u.startswith(ENV_PREFIX) and u != SPEEDUPS_ENV) or u in BARE_ENV:
            return True
    return False


def nothing_configured() -> bool:
    """True when no variable and no file configures numerix: the settings are the defaults
    and pydantic need not be imported. A file that exists but says nothing counts as
    nothing (a ``pyproject.toml`` without ``[tool.numerix]``)."""
    if env_is_set():
        return False
    for f in config_files():
        if read_toml(f):
            return False
    return True


def forget() -> None:
    """Drop what was read from the environment and the files, so that the next read
    reads them again (:func:`numerix.reload_config`). Contexts opened with
    ``numerix.config(...)`` keep the values they were opened with."""
    global base, base_backend
    with lock:
        base = None
        base_backend = None
