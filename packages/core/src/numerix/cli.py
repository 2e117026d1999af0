"""The ``numerix`` command line: ``numerix info``, ``config``, ``doctor`` and ``bench matmul``.

``python -m numerix`` and the ``numerix`` console script both call :func:`main`.
This module is not imported by ``import numerix``; rich (tables, progress bars) is
imported inside the functions that draw, so even ``numerix --help`` stays light.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from numerix.benchmarking import interleave, summary
from numerix.errors import clip_long_words

__all__ = ["main"]

#: The seeds' benchmark: MNIST-sized images {10000,784} dot weights {784,10} (float32).
SEED_ROWS = 10_000
SEED_FEATURES = 784
SEED_CLASSES = 10
SEED = 0


# ====================================================================== entry point
def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``numerix`` command line with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(None if argv is None else list(argv))
    except SystemExit as e:  # --help, or a usage error (argparse prints it and exits 2)
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 0
    from numerix.errors import NumerixError

    try:
        return int(args.func(args))
    except NumerixError as e:
        # numerix's own messages already name the operation and the fix: one line, no traceback
        print(f"numerix: error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("numerix: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `numerix info | head`: stop quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="numerix",
        description="numerix: one tensor API, pluggable backends. Inspect the installation "
        "and benchmark the installed backends.",
    )
    p.add_argument("--version", action="version", version=f"numerix {_version()}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    info = sub.add_parser(
        "info",
        help="numerix version, plugins, backends, their devices and status, the default backend",
        description="Show the numerix version, each installed plugin and the backends it "
        "provides (with their status and devices), broken plugins and why, and the default backend.",
    )
    info.add_argument("--json", action="store_true", help="print the same as JSON")
    info.set_defaults(func=_cmd_info)

    cfg = sub.add_parser(
        "config",
        help="every effective setting and the source it came from",
        description="Show every effective setting of numerix and where it came from: a file "
        "(path, line and key), an environment variable, or the default. Sources, highest "
        "first: environment › project file (numerix.toml or [tool.numerix] in pyproject.toml, "
        "or the file named by NUMERIX_CONFIG) › user file › defaults.",
    )
    cfg.add_argument("--json", action="store_true", help="print the same as JSON")
    cfg.set_defaults(func=_cmd_config)

    doc = sub.add_parser(
        "doctor",
        help="check the installation against the settings; print a fix for each problem",
        description="Check the configuration and the installation: the configuration is "
        "valid, the configured backend is installed and available, no plugin is broken, "
        "XLA_TARGET / LIBTORCH_TARGET ask for something installed. Prints the command that "
        "fixes each problem; exits 1 when there is one, 0 when all is well.",
    )
    doc.add_argument("--json", action="store_true", help="print the checks as JSON")
    doc.set_defaults(func=_cmd_doctor)

    bench = sub.add_parser(
        "bench",
        help="benchmarks of the installed backends",
        description="Benchmarks of the installed backends.",
    )
    bsub = bench.add_subparsers(dest="bench", metavar="BENCHMARK")

    def _bench_help(args: argparse.Namespace) -> int:
        bench.print_help()
        return 0

    bench.set_defaults(func=_bench_help)
    mm = bsub.add_parser(
        "matmul",
        help="the seeds' matmul: {10000,784} f32 dot {784,10} f32, on every backend (eager and "
        "compiled) and its raw library",
        description="Time numerix.dot(x, w) for x a {ROWS,784} float32 tensor (uniform in [0,1), "
        "fixed seed) and w a {784,10} float32 tensor, on every installed backend (or those given "
        "with --backend), eagerly and through numerix.jit with each compiler serving the "
        "backend (rows 'jit[NAME]'), beside the raw library each backend wraps (numpy for "
        "binary). Every "
        "result is checked against numpy before it is timed. Reports the median and min of "
        "--repeat runs after --warmup runs (and the mean, with --json), the ratio to the "
        "fastest row, and the peak memory of one run where it can be measured.",
    )
    mm.add_argument(
        "--backend",
        action="append",
        metavar="SPEC",
        dest="backends",
        help="a backend spec ('binary', 'xla:cuda:0'); repeat for several "
        "(default: every installed backend on its default device)",
    )
    mm.add_argument(
        "--repeat",
        type=_positive_int,
        default=20,
        metavar="N",
        help="timed runs per row (default 20); the median is reported",
    )
    mm.add_argument(
        "--warmup",
        type=_non_negative_int,
        default=3,
        metavar="N",
        help="untimed runs first (default 3)",
    )
    mm.add_argument(
        "--rows",
        type=_positive_int,
        default=SEED_ROWS,
        metavar="N",
        help=f"rows of x (default {SEED_ROWS}, the seed's; smaller is quicker)",
    )
    mm.add_argument("--no-raw", action="store_true", help="leave out the raw-library rows")
    mm.add_argument(
        "--no-compiled",
        action="store_true",
        help="leave out the compiled rows (numerix.jit with each compiler serving the backend)",
    )
    mm.add_argument("--json", action="store_true", help="print the results as JSON")
    mm.set_defaults(func=_cmd_bench_matmul)

    mlp = bsub.add_parser(
        "mlp",
        help="the Axon acceleration post's model (dense(32), relu, dense(1), softmax): "
        "init and predict, eager and compiled, on every backend",
        description="Time the Axon acceleration post's model, dense(32) -> relu -> "
        "dense(1) -> softmax on f32[2][18] inputs (random.uniform of key 1701): its init "
        "(Glorot-uniform kernels from a key, zero biases) and its predict, eagerly and "
        "through numerix.jit with each compiler serving each backend, on every installed "
        "backend and device (or those given). Every row's result is checked against numpy "
        "before it is timed. The footer puts numerix's ratios beside the post's (EXLA init "
        "55x, predict 8.8x faster than the pure evaluator).",
    )
    _bench_options(mlp)
    mlp.set_defaults(func=_cmd_bench_mlp)

    sm = bsub.add_parser(
        "softmax",
        help="Nx Tip of the Week #6, compiler or backend: softmax of a 256x256 f32, eager "
        "on each backend vs jitted with each compiler",
        description="Time the tip's softmax, exp(x - max(x)) / sum(exp(x - max(x))) over a "
        "{SIZE,SIZE} float32 tensor (uniform in [0,1), fixed seed): eagerly on each "
        "installed backend (each op dispatched on its own) and jitted with each compiler "
        "serving the backend (one program). Every row's result is checked against numpy "
        "before it is timed.",
    )
    _bench_options(sm)
    sm.add_argument(
        "--size", type=_positive_int, default=256, metavar="N", help="N x N (default 256)"
    )
    sm.set_defaults(func=_cmd_bench_softmax)

    run = bsub.add_parser(
        "run",
        help="time your own function on every installed backend x compiler and say which wins",
        description="Import FILE.py and time its FUNCTION on every installed backend (or "
        "those given) eagerly and jitted with each compiler serving the backend, on the "
        "inputs --inputs names (a dict name -> value, or a function returning one; each "
        "value, its tensors and numpy arrays moved to the backend, is passed to FUNCTION "
        "as its one argument) or with no argument (on each backend as the default one). "
        "The rows' results are checked against the first row's before timing; the last "
        "line names the fastest backend + compiler and by how much it wins.",
    )
    run.add_argument("target", metavar="FILE.py:FUNCTION", help="the function to time")
    run.add_argument(
        "--inputs", metavar="FILE.py:INPUTS", help="the inputs: a dict, or a function returning one"
    )
    _bench_options(run)
    run.set_defaults(func=_cmd_bench_run)
    return p


def _bench_options(p: argparse.ArgumentParser) -> None:
    """The options ``numerix bench mlp``, ``softmax`` and ``run`` share."""
    p.add_argument(
        "--backend",
        action="append",
        metavar="SPEC",
        dest="backends",
        help="a backend spec ('binary', 'xla:cuda:0'); repeat for several (default: every "
        "installed backend on each of its devices)",
    )
    p.add_argument(
        "--backends",
        metavar="A,B",
        dest="backend_list",
        help="backend specs, comma-separated (with --backend: both)",
    )
    p.add_argument(
        "--compilers",
        metavar="A,B",
        help="the compilers to jit with, comma-separated, 'eager' for no compiler, 'auto' "
        "for numerix.jit's timed choice (default: eager and every compiler serving each "
        "backend)",
    )
    p.add_argument(
        "--time",
        type=_positive_float,
        default=0.5,
        metavar="SECONDS",
        help="seconds each row is measured (default 0.5)",
    )
    p.add_argument(
        "--warmup",
        type=_non_negative_float,
        default=0.1,
        metavar="SECONDS",
        help="seconds each row runs first, not measured (default 0.1; the first call, "
        "a compilation, is timed apart)",
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--html", metavar="PATH", help="also write the HTML report to PATH")


def _positive_float(s: str) -> float:
    v = _float(s)
    if not v > 0:
        raise argparse.ArgumentTypeError(f"expected seconds > 0, got {s!r}")
    return v


def _non_negative_float(s: str) -> float:
    v = _float(s)
    if not v >= 0:
        raise argparse.ArgumentTypeError(f"expected seconds >= 0, got {s!r}")
    return v


def _float(s: str) -> float:
    try:
        return float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {s!r}") from None


def _positive_int(s: str) -> int:
    v = _int(s)
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {s!r}")
    return v


def _non_negative_int(s: str) -> int:
    v = _int(s)
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {s!r}")
    return v


def _int(s: str) -> int:
    try:
        return int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {s!r}") from None


def _version() -> str:
    from numerix._version import __version__

    return __version__


def _console(stderr: bool = False) -> Any:
    import os

    from rich.console import Console

    con = Console(stderr=stderr)
    if not con.is_terminal and "COLUMNS" not in os.environ:
        # piped or captured: rich would assume 80 columns and cut cells short
        con = Console(stderr=stderr, width=max(con.width, 132))
    return con


# ====================================================================== numerix info
def collect_info() -> dict[str, Any]:
    """Everything ``numerix info`` shows, as plain data (the ``--json`` form)."""
    import platform

    from numerix.backend import native_primitives
    from numerix.errors import ConfigError, NumerixError
    from numerix.plugins import backend_class, backend_entries, broken_plugins, loaded_plugins
    from numerix.primitives import REGISTRY

    entries = backend_entries()
    # a configuration mistake is reported once, as such: the backends whose probes read
    # the settings are "not checked", not broken
    config_error = _config_error()
    backends: list[dict[str, Any]] = []
    for name, entry in sorted(entries.items()):
        b: dict[str, Any] = {
            "name": name,
            "distribution": entry.distribution,
            "version": entry.version,
            "description": entry.description,
            "contract": entry.contract,
            "status": "ok",
            "error": None,
            "available": None,
            "devices": [],
            "numeric_notes": [],
            "primitives": None,
        }
        try:
            cls = backend_class(name, "numerix info")
            own = len(native_primitives(cls))
            # what the class implements itself; the core's fallbacks serve the rest
            b["primitives"] = {"own": own, "by_fallback": len(REGISTRY) - own}
            b["numeric_notes"] = [str(n) for n in cls.numeric_notes]
            b["devices"] = [str(d) for d in cls.devices()]
            b["available"] = bool(cls.is_available())
        except ConfigError:
            b["status"] = "not checked"
        except Exception as e:  # a broken backend is reported, not raised
            b["status"] = "broken"
            b["error"] = (
                " ".join(str(e).split())
                if isinstance(e, NumerixError)
                else (f"{type(e).__name__}: {' '.join(str(e).split())}")
            )
        if config_error is not None and b["status"] == "not checked":
            b["error"] = "not checked: the configuration is invalid (see below)"
        backends.append(b)

    plugins = []
    for ep_name, dist, ver in loaded_plugins():
        plugins.append(
            {
                "entry_point": ep_name,
                "distribution": dist,
                "version": ver,
                "backends": [
                    b["name"] for b in backends if dist is not None and b["distribution"] == dist
                ],
            }
        )
    runtime = [b["name"] for b in backends if b["distribution"] is None]

    default: str | None = None
    default_error: str | None = None
    if config_error is None:
        try:
            from numerix.configuration import get_default_backend

            default = repr(get_default_backend())
        except Exception as e:
            default_error = f"{type(e).__name__}: {' '.join(str(e).split())}"

    return {
        "numerix_version": _version(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "executable": sys.executable,
        "plugins": plugins,
        "runtime_backends": runtime,
        "backends": backends,
        "broken_plugins": [
            {"name": bp.name, "distribution": bp.distribution, "reason": bp.reason}
            for bp in broken_plugins()
        ],
        "broken_backends": [
            {"name": b["name"], "distribution": b["distribution"], "reason": b["error"]}
            for b in backends
            if b["status"] == "broken"
        ],
        "config_error": config_error,
        "default_backend": default,
        "default_backend_error": default_error,
    }


def _primitives_cell(prims: dict[str, int] | None) -> str:
    """How many primitives a backend implements itself, and how many the core's
    fallbacks serve for it (docs/contract.md)."""
    if prims is None:
        return "-"
    if not prims["by_fallback"]:
        return f"all {prims['own']} its own"
    return f"{prims['own']} its own, {prims['by_fallback']} by the core's fallbacks"


def _config_error() -> str | None:
    """The configuration's error (one line per problem), or None when it is valid."""
    import warnings

    from numerix.configuration import current
    from numerix.errors import ConfigError

    try:
        with warnings.catch_warnings():  # notes are numerix config's and doctor's to show
            warnings.simplefilter("ignore")
            current()
    except ConfigError as e:
        return str(e)
    return None


def _cmd_info(args: argparse.Namespace) -> int:
    info = collect_info()
    # an invalid configuration leaves the default backend and the devices unknown
    code = 1 if info["config_error"] else 0
    if args.json:
        print(json.dumps(info, indent=2))
        return code
    from rich.table import Table
    from rich.text import Text

    con = _console()
    con.print(
        Text.assemble(
            ("numerix ", "bold"),
            (info["numerix_version"], "bold cyan"),
            f"  ({info['python']}, {info['executable']})",
        )
    )

    t = Table(title="Backends", title_justify="left", show_lines=False)
    t.add_column("backend", style="bold", no_wrap=True)
    t.add_column("plugin (entry point)", no_wrap=True)
    t.add_column("distribution", no_wrap=True)
    t.add_column("version", no_wrap=True)
    t.add_column("status", overflow="fold")
    t.add_column("devices", overflow="fold")
    t.add_column("primitives", overflow="fold")
    ep_of = {b: p["entry_point"] for p in info["plugins"] for b in p["backends"]}
    for b in info["backends"]:
        if b["status"] == "ok":
            status = Text("ok", style="green")
        elif b["status"] == "not checked":
            status = Text(b["error"], style="yellow")
        else:
            status = Text(f"broken: {b['error']}", style="red")
        if b["status"] == "ok" and not b["available"]:
            status = Text("not available on this machine", style="yellow")
        t.add_row(
            b["name"],
            ep_of.get(b["name"], "(runtime)" if b["distribution"] is None else "?"),
            b["distribution"] or "-",
            b["version"] or "-",
            status,
            ", ".join(b["devices"]) or "-",
            _primitives_cell(b["primitives"]),
        )
    for p in info["plugins"]:
        if not p["backends"]:
            t.add_row(
                "-",
                p["entry_point"],
                p["distribution"] or "-",
                p["version"] or "-",
                Text("loaded; provides no backend", style="yellow"),
                "-",
                "-",
            )
    if not info["backends"] and not info["plugins"]:
        t.add_row("-", "-", "-", "-", Text("no plugin installed", style="red"), "-", "-")
    con.print(t)

    broken = info["broken_plugins"] + info["broken_backends"]
    if broken:
        bt = Table(
            title="Broken plugins and backends", title_justify="left", title_style="bold red"
        )
        bt.add_column("plugin / backend", style="bold", no_wrap=True)
        bt.add_column("distribution", no_wrap=True)
        bt.add_column("reason", overflow="fold")
        for bp in broken:
            bt.add_row(bp["name"], bp["distribution"] or "-", bp["reason"])
        con.print(bt)
    else:
        con.print("Broken plugins: none")

    notes = [(b["name"], n) for b in info["backends"] for n in b["numeric_notes"]]
    if notes:
        con.print("Known differences from numpy (docs/known-differences.md):")
        for name, note in notes:
            con.print(Text.assemble("  ", (name, "bold"), f": {note}"))

    if info["config_error"]:
        con.print(
            Text("Configuration error (numerix doctor says how to fix it):", style="bold red")
        )
        con.print(Text(info["config_error"], style="red"))
        con.print(Text("Default backend: unknown until the configuration is fixed", style="red"))
    elif info["default_backend"] is not None:
        con.print(Text.assemble("Default backend: ", (info["default_backend"], "bold cyan")))
    else:
        con.print(
            Text.assemble(
                "Default backend: ", (f"unavailable: {info['default_backend_error']}", "bold red")
            )
        )
    return code


# ====================================================================== numerix config
def collect_config() -> dict[str, Any]:
    """Everything ``numerix config`` shows, as plain data (the ``--json`` form)."""
    import os

    from numerix.configuration import _state as config_state
    from numerix.configuration import current, effective_values

    eff = current()
    user = config_state.user_config_path()
    return {
        "values": effective_values(eff),
        "files": [
            {"path": str(f.path), "kind": f.kind, "table": ".".join(f.table) or None}
            for f in eff.files
        ],
        "user_file": str(user) if user is not None else None,
        "numerix_config": os.environ.get(config_state.CONFIG_ENV),
        "notes": [note for _, note in eff.notes],
    }


def _cmd_config(args: argparse.Namespace) -> int:
    import warnings

    with warnings.catch_warnings():  # notes are shown below, not as warnings
        warnings.simplefilter("ignore")
        data = collect_config()
    if args.json:
        print(json.dumps(data, indent=2, default=str))
        return 0
    from rich.table import Table
    from rich.text import Text

    con = _console()
    if data["files"]:
        for f in data["files"]:
            table = f" [{f['table']}]" if f["table"] else ""
            con.print(Text(f"Read {f['kind']} file: {f['path']}{table}"))
    else:
        con.print(
            Text(
                "No configuration file found (numerix.toml, pyproject.toml [tool.numerix], "
                f"{data['user_file'] or 'user file'})"
            )
        )
    t = Table(title="Effective settings (highest source wins)", title_justify="left")
    t.add_column("key", style="bold", no_wrap=True)
    t.add_column("value", overflow="fold")
    t.add_column("source", overflow="fold")
    t.add_column("environment variable", no_wrap=True)
    for r in data["values"]:
        src = r["source"]
        style = "dim" if src["kind"] == "default" else ("cyan" if src["kind"] == "env" else "green")
        t.add_row(
            r["key"],
            clip_long_words(json.dumps(r["value"], default=str)),
            Text(clip_long_words(src["text"]), style=style),
            r["env"],
        )
    con.print(t)
    for n in data["notes"]:
        con.print(Text(f"note: {clip_long_words(n)}", style="yellow"))
    return 0


# ====================================================================== numerix doctor
def collect_doctor() -> dict[str, Any]:
    """The checks of ``numerix doctor``: ``{"ok": [...], "problems": [{"problem", "fix"}]}``.

    Every fix is a command or an edit that works here: install commands take the form
    numerix itself was installed in (:func:`numerix.plugins.install_command`), edits name
    the file and line or the variable to change.
    """
    import warnings

    from numerix import configuration
    from numerix.errors import ConfigError, NumerixError, PluginError
    from numerix.plugins import (
        backend_class,
        backend_entries,
        broken_plugins,
        compiler_entries,
        install_command,
    )

    ok: list[str] = []
    problems: list[dict[str, str]] = []

    def problem(what: str, fix: str) -> None:
        problems.append({"problem": " ".join(what.split()), "fix": fix})

    entries = backend_entries()
    broken = broken_plugins()
    for bp in broken:
        dist = bp.distribution or bp.name
        problem(
            f"plugin {bp.name!r} ({dist}) failed to load: {bp.reason}",
            f"{install_command(dist, reinstall=True)}   # or: pip uninstall {dist}",
        )
    if not broken:
        ok.append("no broken plugin")

    eff = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            eff = configuration.current()
        ok.append("configuration is valid")
    except ConfigError as e:
        problem(f"invalid configuration: {e}", _config_fix(str(e)))

    # every installed backend: its class imports (its library is installed) and, with a
    # valid configuration (the probes read it), it lists its devices
    for name, entry in sorted(entries.items()):
        owner = entry.distribution
        fix = (
            f"{install_command(owner, reinstall=True)}   # installs what it needs"
            if owner
            else "correct the target given to numerix.register_backend"
        )
        try:
            cls = backend_class(name, "numerix doctor")
        except ConfigError:  # reported above
            continue
        except PluginError as e:
            cause = e.__cause__
            missing = getattr(cause, "name", None)
            need = f" (it needs the module {missing!r}, which is not installed)" if missing else ""
            why = f"{type(cause).__name__}: {cause}" if cause is not None else str(e)
            problem(
                f"backend {name!r} ({owner or 'registered at run time'}) cannot load{need}: {why}",
                fix,
            )
            continue
        if eff is None:
            continue
        try:
            devices = [str(d) for d in cls.devices()]
        except Exception as e:
            problem(
                f"backend {name!r} ({owner or 'registered at run time'}) fails to list its "
                f"devices: {type(e).__name__}: {e}",
                fix,
            )
            continue
        ok.append(f"backend {name!r} loads; devices: {', '.join(devices) or 'none'}")

    if eff is not None:
        for name, note in eff.notes:
            problem(note, install_command(configuration.KNOWN_PLUGINS[name]))
        s = eff.settings
        try:
            be = configuration.resolve_default_backend(eff)
            ok.append(f"default backend {s.default_backend!r} → {be!r}")
        except NumerixError as e:
            problem(str(e), _default_backend_fix(eff, entries))
        compilers = set(compiler_entries())
        if s.default_compiler == "auto":
            ok.append(
                "default compiler 'auto': each jitted signature timed on "
                f"{', '.join(sorted(compilers))} (those serving its backend)"
            )
        elif s.default_compiler in compilers:
            ok.append(f"default compiler {s.default_compiler!r}")
        else:
            hint = configuration.KNOWN_PLUGINS.get(s.default_compiler)
            src = eff.source(("default_compiler",))
            problem(
                f"{src}: default_compiler: no compiler named "
                f"{s.default_compiler!r}; available: {', '.join(sorted(compilers))}",
                install_command(hint)
                if hint
                else f"{_edit(src)}: set default_compiler to one of: {', '.join(sorted(compilers))}",
            )
        for var, value, backend, extras in (
            ("XLA_TARGET", s.xla_target, "xla", configuration.XLA_TARGET_EXTRAS),
            ("LIBTORCH_TARGET", s.libtorch_target, "torch", configuration.LIBTORCH_TARGET_EXTRAS),
        ):
            if value is None:
                continue
            dist = configuration.KNOWN_PLUGINS[backend]
            if value not in extras:
                problem(
                    f"{var}={value}: not a target {dist} is built for (known: {', '.join(extras)})",
                    f"export {var}=cpu   # or one of the known targets",
                )
                continue
            extra = extras[value] or None
            if backend not in entries:
                problem(
                    f"{var}={value} asks for the {backend!r} backend, which is not installed",
                    install_command(dist, extra),
                )
                continue
            try:
                cls = backend_class(backend, "numerix doctor")
                reachable = bool(cls.is_available())
            except NumerixError:
                reachable = False
            mismatch = cls.check_target(value) if reachable else None
            if mismatch is not None:
                problem(mismatch[0], _installable(mismatch[1]))
            elif reachable:
                ok.append(f"{var}={value}: {dist} installed")
            else:
                problem(
                    f"{var}={value}: {dist} is installed but reaches no device",
                    install_command(dist, extra, reinstall=True),
                )
    return {"ok": ok, "problems": problems}


def _edit(src: Any) -> str:
    """How to change a value that came from ``src`` (a configuration Source)."""
    if src.kind == "env":
        return f"change or unset {src.env}"
    if src.file is not None:
        return f"edit {src.file}:{src.line}" if src.line else f"edit {src.file}"
    return f"change the {src}"


#: A line of a ConfigError: where (a file and line with its key, a variable), then what.
_FILE_LINE = re.compile(
    r"^(?P<file>.+?)(?::(?P<line>\d+))? \((?:project file|user file|file named by "
    r"NUMERIX_CONFIG), key (?P<key>[^)]*)\): "
)
_BOTH = re.compile(r"^(?P<toml>.+?) and (?P<pyproject>.+?) \[tool\.numerix\] both hold")
_ENV_LINE = re.compile(r"^environment variable (?P<var>[A-Za-z_][A-Za-z0-9_]*)")
_VAR_LINE = re.compile(r"^(?P<var>NUMERIX_CONFIG)=")
_PATH_LINE = re.compile(r"^(?P<file>/\S+?|[A-Za-z]:\\\S+?)(?::(?P<line>\d+))?: ")


def _config_fix(message: str) -> str:
    """The fix of a ConfigError: each file (and line) to edit and each variable to change,
    read from the error's lines (one per problem), named once each."""
    edits: list[str] = []
    unset: list[str] = []
    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    both = _BOTH.match(message)
    if both:
        return f"remove [tool.numerix] from {both['pyproject']}, or remove {both['toml']}"
    for ln in lines:
        m = _FILE_LINE.match(ln) or _PATH_LINE.match(ln)
        if m:
            where = f"{m['file']}:{m['line']}" if m["line"] else m["file"]
            key = m.groupdict().get("key")
            edits.append(f"{where} (key {key})" if key else where)
            continue
        m = _ENV_LINE.match(ln) or _VAR_LINE.match(ln)
        if m:
            unset.append(m["var"])
    parts = []
    if edits:
        parts.append("edit " + "; ".join(dict.fromkeys(edits)))
    if unset:
        names = list(dict.fromkeys(unset))
        if names == ["NUMERIX_CONFIG"]:
            parts.append("unset NUMERIX_CONFIG   # or point it at an existing TOML file")
        else:
            parts.append(f"unset {' '.join(names)}   # or correct its value")
    return "; then ".join(parts) if parts else "correct the configuration as the message says"


_PIP_PROJECT = re.compile(
    r'^pip install (?P<force>--force-reinstall )?"?(?P<dist>numerix(?:-[a-z]+)?)'
    r'(?:\[(?P<extra>[\w,]+)\])?"?(?P<rest>(?:\s.*)?)$'
)


def _installable(fix: str) -> str:
    """A plugin's fix (``Backend.check_target``) with the project's own packages installed
    the way numerix was (a plugin writes the index form, ``pip install "numerix-xla[cuda12]"``)."""
    from numerix.plugins import CHECKOUT_FOLDERS, install_command

    m = _PIP_PROJECT.match(fix)
    if m is None or m["dist"] not in CHECKOUT_FOLDERS:
        return fix
    return install_command(m["dist"], m["extra"], reinstall=bool(m["force"])) + m["rest"]


def _default_backend_fix(eff: Any, entries: Any) -> str:
    """The fix when the configured default backend cannot be used."""
    from numerix import configuration
    from numerix.plugins import close_name, install_command

    spec = eff.settings.default_backend
    specs = spec if isinstance(spec, list) else [spec]
    names = [str(x).split(":")[0] for x in specs]
    missing = [
        configuration.KNOWN_PLUGINS[n]
        for n in names
        if n in configuration.KNOWN_PLUGINS and n not in entries
    ]
    if missing:
        return " && ".join(install_command(d) for d in dict.fromkeys(missing))
    where = _edit(eff.source(("default_backend",)))
    unknown = [n for n in names if n not in entries]
    if unknown:
        hint = close_name(unknown[0], sorted(entries)).removeprefix("; ")
        return (
            f"{where}: {hint} (installed backends: {', '.join(sorted(entries))})"
            if hint
            else (f"{where}: use an installed backend ({', '.join(sorted(entries))})")
        )
    if isinstance(spec, list):
        return f'{where}: end the priority list with a backend every machine has, such as "binary"'
    return f"{where}: choose a device this machine has (numerix info lists them)"


def _cmd_doctor(args: argparse.Namespace) -> int:
    res = collect_doctor()
    if args.json:
        print(json.dumps(res, indent=2))
        return 1 if res["problems"] else 0
    from rich.text import Text

    con = _console()
    for line in res["ok"]:
        con.print(Text.assemble(("✓ ", "green"), line))
    for p in res["problems"]:
        con.print(Text.assemble(("✗ ", "bold red"), p["problem"]))
        con.print(Text.assemble("    fix: ", (p["fix"], "bold")))
    if res["problems"]:
        con.print(Text(f"{len(res['problems'])} problem(s) found", style="bold red"))
        return 1
    con.print(Text("no problems found", style="bold green"))
    return 0


# ====================================================================== numerix bench matmul
@dataclass
class BenchRow:
    """One row of ``numerix bench matmul``: a backend eager, a backend through a
    compiler (``numerix.jit``), or the raw library a backend wraps."""

    name: str
    kind: str  # "numerix", "compiled" or "raw"
    backend: str
    run: Callable[[], Any] = field(repr=False)
    measure_memory: bool = False
    compiler: str | None = None
    times: list[float] = field(default_factory=list)
    peak_memory_bytes: int | None = None
    error: str | None = None

    def summary(self) -> dict[str, Any]:
        # not asdict(): it deep-copies every field, the callable included
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("run", "times")}
        d["times_s"] = list(self.times)
        d.update(summary(self.times))
        return d


def _sync(result: Any) -> Any:
    """Wait for an asynchronous backend (XLA, CUDA) to finish ``result``: a numerix
    tensor through its backend; a raw row's result is synchronised by its own hook."""
    backend = getattr(result, "backend", None)
    if backend is not None:
        backend.synchronize(result)
    return result


def _run_synced(row: BenchRow) -> Any:
    return _sync(row.run())


def _to_host(result: Any) -> Any:
    import numpy as np

    to_numpy = getattr(result, "to_numpy", None)
    if callable(to_numpy):
        return np.asarray(to_numpy())
    for name in ("detach", "cpu"):  # a raw torch tensor
        f = getattr(result, name, None)
        if callable(f):
            result = f()
    return np.asarray(result)


def _check(result: Any, expected: Any) -> str | None:
    """None if ``result`` matches ``expected``; else why not."""
    import numpy as np

    try:
        got = _to_host(result)
    except Exception as e:
        return f"cannot read the result back to check it: {type(e).__name__}: {e}"
    if got.shape != expected.shape:
        return f"wrong result: shape {got.shape}, expected {expected.shape}"
    if got.dtype != np.float32:
        return f"wrong result: dtype {got.dtype}, expected float32"
    # float32 sums of 784 products; TF32 matmul units (accelerators) are accepted
    scale = float(np.max(np.abs(expected))) or 1.0
    if not np.allclose(got, expected, rtol=1e-3, atol=1e-3 * scale):
        err = float(np.max(np.abs(got.astype(np.float64) - expected)))
        return f"wrong result: max abs error {err:.3g} against numpy (values up to {scale:.3g})"
    return None


def _raw_row(be: Any, x_np: Any, w_np: Any) -> BenchRow | None:
    """The row of the library backend ``be`` wraps (its declared hook
    :meth:`~numerix.backend.Backend.bench_raw_matmul`), or None where it names none."""
    fn = be.bench_raw_matmul(x_np, w_np)
    if fn is None:
        return None
    label = be.bench_raw_name or f"{be.name} library"
    # a host backend has one device: the row names the device of the others
    where = "" if be.is_host else f", {be.device}"
    return BenchRow(f"{label} (raw{where})", "raw", be.name, fn, measure_memory=bool(be.is_host))


def _compiled_rows(label: str, be: Any, x: Any, w: Any, host: bool) -> list[BenchRow]:
    """One row per compiler serving ``be``: ``numerix.jit(numerix.dot, compiler=...)``."""
    from numerix.defn.compilers import compilers_serving
    from numerix.defn.jit import jit
    from numerix.ops.linalg import dot

    rows = []
    try:
        names = compilers_serving(be)
    except Exception as e:  # a broken compiler plugin: one row says so
        err = f"cannot list the compilers: {type(e).__name__}: {e}"
        return [BenchRow(f"{label} jit", "compiled", be.name, lambda: None, error=err)]
    for cname in names:
        fn = functools.partial(jit(dot, compiler=cname), x, w)
        rows.append(
            BenchRow(f"{label} jit[{cname}]", "compiled", be.name, fn, host, compiler=cname)
        )
    return rows


def _rows(
    specs: list[str] | None, x_np: Any, w_np: Any, with_raw: bool, with_compiled: bool = True
) -> list[BenchRow]:
    from numerix.configuration import resolve_backend

    # numerix.from_numpy and numerix.dot, imported from where they are defined: type
    # checkers cannot follow numerix's computed star re-exports
    from numerix.ops.creation import from_numpy
    from numerix.ops.linalg import dot
    from numerix.plugins import backend_class, backend_entries, parse_spec

    op = "numerix bench matmul"
    if specs:
        resolved = []
        for s in specs:  # unknown specs raise BackendNotFoundError naming the installed ones
            name, opts = parse_spec(s, op)
            backend_class(name, op)
            resolved.append((s, name, opts))
    else:
        resolved = [(n, n, {}) for n in backend_entries()]

    rows: list[BenchRow] = []
    raw_seen: set[tuple[Any, ...]] = set()
    backends_seen: set[int] = set()
    for spec, name, opts in resolved:
        label = spec
        try:
            cls = backend_class(name, op)
            be = resolve_backend(name, op, **opts)
            if id(be) in backends_seen:  # 'binary' and 'binary:cpu' are one backend
                continue
            backends_seen.add(id(be))
            label = f"{be.name} ({be.device})"
            x = from_numpy(x_np, backend=be)
            w = from_numpy(w_np, backend=be)
        except Exception as e:  # one broken backend must not stop the others
            if specs:  # asked for by name: that is the user's error
                raise
            rows.append(
                BenchRow(
                    label,
                    "numerix",
                    name,
                    lambda: None,
                    error=f"cannot set up: {type(e).__name__}: {e}",
                )
            )
            continue
        rows.append(
            BenchRow(
                label,
                "numerix",
                be.name,
                functools.partial(dot, x, w),
                measure_memory=bool(cls.is_host),
            )
        )
        if with_compiled:
            rows += _compiled_rows(label, be, x, w, bool(cls.is_host))
        if with_raw:
            try:
                raw = _raw_row(be, x_np, w_np)
            except Exception as e:
                rows.append(
                    BenchRow(
                        f"{name} library (raw)",
                        "raw",
                        name,
                        lambda: None,
                        error=f"cannot set up: {type(e).__name__}: {e}",
                    )
                )
                continue
            if raw is not None and (raw.name, raw.backend) not in raw_seen:
                raw_seen.add((raw.name, raw.backend))
                rows.append(raw)
    return rows


def _peak_memory(fn: Callable[[], Any]) -> int:
    """Peak host memory (bytes) allocated during one call of ``fn``, by tracemalloc."""
    import gc
    import tracemalloc

    gc.collect()
    started = tracemalloc.is_tracing()
    if not started:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        r = fn()
        _sync(r)
        _, peak = tracemalloc.get_traced_memory()
        del r
    finally:
        if not started:
            tracemalloc.stop()
    return max(0, peak - base)


def bench_matmul(
    specs: list[str] | None = None,
    *,
    repeat: int = 20,
    warmup: int = 3,
    rows: int = SEED_ROWS,
    with_raw: bool = True,
    with_compiled: bool = True,
    progress: bool = True,
) -> dict[str, Any]:
    """Run the seeds' matmul benchmark; returns what ``--json`` prints.

    :raises ConfigError: the configuration is invalid (reported once, before any row is
        set up: every backend reads it, so no row could be trusted).
    """
    import numpy as np

    error = _config_error()
    if error is not None:
        from numerix.errors import ConfigError

        raise ConfigError(f"bench matmul: the configuration is invalid: {error}")

    rng = np.random.default_rng(SEED)
    x_np = rng.random((rows, SEED_FEATURES), dtype=np.float32)
    w_np = rng.standard_normal((SEED_FEATURES, SEED_CLASSES), dtype=np.float32)
    expected = x_np.astype(np.float64) @ w_np.astype(np.float64)

    bench_rows = _rows(specs, x_np, w_np, with_raw, with_compiled)

    # check every answer before timing anything
    for r in bench_rows:
        if r.error is None:
            try:
                r.error = _check(_sync(r.run()), expected)
            except Exception as e:
                r.error = f"failed: {type(e).__name__}: {' '.join(str(e).split())}"

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    live = [r for r in bench_rows if r.error is None]
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=_console(stderr=True),
        transient=True,
        disable=not progress,
    ) as bar:
        task = bar.add_task("matmul", total=len(live) * (warmup + repeat))

        def failed(r: BenchRow, e: Exception) -> None:
            r.error = f"failed while timing: {type(e).__name__}: {' '.join(str(e).split())}"
            r.times.clear()

        def tick(round_: int, i: int) -> None:
            bar.update(task, description=f"matmul round {round_ + 1}/{warmup + repeat}")
            bar.advance(task)

        # the shared harness (numerix.benchmarking): interleaved rounds, each round
        # times every row once, in turn, so a load that comes and goes on the machine
        # falls on every row alike instead of on one row's block
        times = interleave(
            [functools.partial(_run_synced, r) for r in live],
            repeat,
            warmup=warmup,
            on_error=lambda i, e: failed(live[i], e),
            on_call=tick,
        )
        for r, ts in zip(live, times):
            if r.error is None:
                r.times.extend(ts)
        for r in live:
            if r.error is None and r.measure_memory:
                try:
                    r.peak_memory_bytes = _peak_memory(r.run)
                except Exception as e:
                    failed(r, e)

    results = [r.summary() for r in bench_rows]
    medians = [d["median_s"] for d in results if d["median_s"]]
    fastest = min(medians) if medians else None
    for d in results:
        d["ratio_to_fastest"] = d["median_s"] / fastest if fastest and d["median_s"] else None
    return {
        "benchmark": "matmul",
        "x_shape": [rows, SEED_FEATURES],
        "w_shape": [SEED_FEATURES, SEED_CLASSES],
        "dtype": "float32",
        "seed": SEED,
        "repeat": repeat,
        "warmup": warmup,
        "interleaved": True,
        "numerix_version": _version(),
        "rows": results,
    }


def _fmt_time(s: float | None) -> str:
    if s is None:
        return "-"
    for unit, f in (("s", 1.0), ("ms", 1e3), ("µs", 1e6)):
        if s * f >= 1.0 or unit == "µs":
            return f"{s * f:.3g} {unit}" if s * f < 1000 else f"{s * f:.0f} {unit}"
    return f"{s:.3g} s"  # pragma: no cover


def _fmt_spread(lo: float | None, hi: float | None) -> str:
    """``"4.61–5.62 ms"``: the min–max of a row's times, in the unit of the max."""
    if lo is None or hi is None:
        return "-"
    for unit, f in (("s", 1.0), ("ms", 1e3), ("µs", 1e6)):
        if hi * f >= 1.0 or unit == "µs":
            low = f"{lo * f:.3g}" if lo * f >= 1.0 else f"{lo * f:.2f}"  # "0.06", not "0.0643"
            return f"{low}–{hi * f:.3g} {unit}"
    return "-"  # pragma: no cover


def _fmt_ratio(r: float | None) -> str:
    if r is None:
        return "-"
    return f"{r:.2f}× slower" if r < 10 else f"{r:.0f}× slower"


def _fmt_bytes(n: int | None) -> str:
    if n is None:
        return "n/a"
    v = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if v < 1024 or unit == "GiB":
            return f"{v:.0f} {unit}" if unit == "B" else f"{v:.1f} {unit}"
        v /= 1024
    return f"{n} B"  # pragma: no cover


def _cmd_bench_matmul(args: argparse.Namespace) -> int:
    res = bench_matmul(
        args.backends,
        repeat=args.repeat,
        warmup=args.warmup,
        rows=args.rows,
        with_raw=not args.no_raw,
        with_compiled=not args.no_compiled,
        progress=not args.json or sys.stderr.isatty(),
    )
    failed = [r for r in res["rows"] if r["error"]]
    for r in failed:
        print(f"numerix: bench matmul: {r['name']}: {r['error']}", file=sys.stderr)
    if args.json:
        print(json.dumps(res, indent=2))
        return 1 if failed else 0

    from rich import box
    from rich.table import Table
    from rich.text import Text

    con = _console()
    x, w = res["x_shape"], res["w_shape"]
    # fits 80 columns: the row names fold rather than being cut, the numbers are short
    # ("3.2×"), the mean is in --json; a failure's reason is printed in full above
    t = Table(
        title=f"matmul: f32[{x[0]}][{x[1]}] · f32[{w[0]}][{w[1]}], median and spread "
        f"(min–max) of {res['repeat']} interleaved runs after {res['warmup']} warm-up",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    t.add_column("row", style="bold", overflow="fold", min_width=12)
    for c in ("median", "spread", "vs fastest", "peak mem"):
        t.add_column(c, justify="right", no_wrap=True)
    for r in res["rows"]:
        if r["error"]:
            t.add_row(Text(r["name"]), Text("FAILED", style="bold red"), "", "", "")
            continue
        ratio = r["ratio_to_fastest"]
        t.add_row(
            Text(r["name"]),  # not markup: "jit[xla]" is a name
            _fmt_time(r["median_s"]),
            _fmt_spread(r["min_s"], r["max_s"]),
            "fastest" if ratio is not None and ratio <= 1.0 else _fmt_ratio(ratio),
            _fmt_bytes(r["peak_memory_bytes"]),
        )
    con.print(t)
    if failed:
        con.print(Text(f"{len(failed)} row(s) FAILED; see above", style="bold red"))
        return 1
    return 0


# ====================================================================== numerix bench mlp, softmax, run
#: The Axon acceleration post: inputs f32[2][18] from the key 1701, dense(32) -> relu ->
#: dense(1) -> softmax; its Benchee figures (EXLA against the pure evaluator).
MLP_KEY = 1701
MLP_INPUT = (2, 18)
MLP_HIDDEN = 32
SEEDS_MLP = {"init": 55.06, "predict": 8.79}


@dataclass
class _Pair:
    """A backend (on one device) and a compiler (None: eager) of ``numerix bench``."""

    label: str
    backend: Any
    compiler: str | None
    error: str | None = None


def _bench_pairs(args: argparse.Namespace, op: str) -> list[_Pair]:
    """Every backend × compiler the options select: eager, then each compiler serving
    the backend (``compilers_serving``), on every installed backend and device."""
    from numerix.configuration import resolve_backend
    from numerix.defn.compilers import compilers_serving
    from numerix.errors import ArgumentError, ConfigError
    from numerix.plugins import backend_class, backend_entries, compiler_entries, parse_spec

    error = _config_error()
    if error is not None:
        raise ConfigError(f"{op}: the configuration is invalid: {error}")
    installed = sorted(compiler_entries())
    wanted: list[str] | None = None
    if args.compilers:
        wanted = [c.strip() for c in args.compilers.split(",") if c.strip()]
        unknown = [c for c in wanted if c not in ("eager", "auto") and c not in installed]
        if unknown or not wanted:
            raise ArgumentError(
                f"{op}: unknown compiler {', '.join(map(repr, unknown)) or repr('')}; the "
                f"installed compilers are {', '.join(installed)} ('eager': none; 'auto': "
                f"numerix.jit's choice among them)"
            )
    specs = list(args.backends or []) + [
        s.strip() for s in (args.backend_list or "").split(",") if s.strip()
    ]
    broken: list[_Pair] = []
    resolved: list[tuple[str, str, dict[str, Any]]] = []
    if specs:
        for s in specs:  # an unknown name raises BackendNotFoundError naming the installed
            name, opts = parse_spec(s, op)
            backend_class(name, op)
            resolved.append((s, name, opts))
    else:
        for name in backend_entries():
            try:
                devices = backend_class(name, op).devices()
            except Exception as e:  # a broken backend: its row says why
                broken.append(_Pair(name, None, None, f"cannot set up: {type(e).__name__}: {e}"))
                continue
            resolved += [(f"{name}:{d}", *parse_spec(f"{name}:{d}", op)) for d in devices]
    backends: list[Any] = []
    for spec, name, opts in resolved:
        try:
            be = resolve_backend(name, op, **opts)
        except Exception as e:
            if specs:  # asked for by name: the user's error
                raise
            broken.append(_Pair(spec, None, None, f"cannot set up: {type(e).__name__}: {e}"))
            continue
        if all(be is not b for b in backends):  # 'binary' and 'binary:cpu' are one
            backends.append(be)
    names = [be.name for be in backends]
    pairs = []
    for be in backends:
        where = be.name if names.count(be.name) == 1 else f"{be.name}:{be.device}"
        # 'auto' (jit's timed choice) only when asked for: it is one of the others
        auto = ["auto"] if wanted is not None and "auto" in wanted else []
        for c in [None, *compilers_serving(be), *auto]:
            if wanted is None or (c or "eager") in wanted:
                pairs.append(_Pair(f"{where} + {c or 'eager'}", be, c))
    if not pairs and not broken:
        raise ArgumentError(
            f"{op}: no backend × compiler pair to time: {', '.join(wanted or [])} serves none "
            f"of {', '.join(map(repr, backends))}; add 'eager' or a compiler that serves them"
        )
    return pairs + broken


def _moved(value: Any, be: Any) -> Any:
    """``value`` with its tensors and numpy arrays put on backend ``be``."""
    import numpy as np

    from numerix._tensor import Tensor
    from numerix.ops.creation import from_numpy
    from numerix.ops.transfer import device_put

    if type(value) is Tensor:
        return device_put(value, be)
    if isinstance(value, np.ndarray):
        return from_numpy(value, backend=be)
    if isinstance(value, tuple):
        return tuple(_moved(v, be) for v in value)
    if isinstance(value, list):
        return [_moved(v, be) for v in value]
    if isinstance(value, dict):
        return {k: _moved(v, be) for k, v in value.items()}
    return value


def _host_tree(value: Any) -> Any:
    """``value`` with its tensors read back as numpy arrays."""
    from numerix._tensor import Tensor

    if type(value) is Tensor:
        return _to_host(value)
    if isinstance(value, (tuple, list)):
        return [_host_tree(v) for v in value]
    if isinstance(value, dict):
        return {k: _host_tree(value[k]) for k in sorted(value)}
    return value


def _differs(got: Any, expected: Any, where: str = "the result") -> str | None:
    """None when ``got`` (host values: arrays, numbers, lists, dicts) matches
    ``expected`` to float32 precision; else how it differs."""
    import numpy as np

    if isinstance(expected, dict):
        if not isinstance(got, dict) or sorted(got) != sorted(expected):
            return f"{where}: keys {sorted(got) if isinstance(got, dict) else type(got).__name__}, expected {sorted(expected)}"
        for k in expected:
            why = _differs(got[k], expected[k], f"{where}[{k!r}]")
            if why:
                return why
        return None
    if isinstance(expected, list):
        if not isinstance(got, list) or len(got) != len(expected):
            return f"{where}: not {len(expected)} values"
        for i, (g, e) in enumerate(zip(got, expected)):
            why = _differs(g, e, f"{where}[{i}]")
            if why:
                return why
        return None
    g, e = np.asarray(got), np.asarray(expected)
    if g.shape != e.shape:
        return f"{where}: shape {g.shape}, expected {e.shape}"
    if e.dtype.kind in "fc":
        scale = float(np.max(np.abs(e))) if e.size else 1.0
        if not np.allclose(g, e, rtol=1e-3, atol=1e-5 * (scale or 1.0)):
            err = float(np.max(np.abs(g.astype(np.float64) - e)))
            return f"{where}: max abs error {err:.3g} (values up to {scale:.3g})"
        return None
    if not np.array_equal(g, e):
        return f"{where}: values differ"
    return None


@dataclass
class _Case:
    """One thing ``numerix bench`` times on every pair: ``make(pair)`` returns the call
    (no arguments), ``check(value)`` None or why its result is wrong."""

    name: str | None
    make: Callable[[_Pair], Callable[[], Any]]
    check: Callable[[Any], str | None]


def _bench_cases(
    op: str, pairs: list[_Pair], cases: list[_Case], args: argparse.Namespace
) -> tuple[Any, list[dict[str, Any]]]:
    """Check every pair's result on every case, then time those that are right with
    ``numerix.benchmark``, one case after the other; the report (one group per case)
    and the failures."""
    import time as _time

    from numerix._benchmark import BenchmarkResult, benchmark
    from numerix.ops.transfer import finish

    failed: list[dict[str, Any]] = []
    scenarios: list[dict[str, Any]] = []
    for p in pairs:
        if p.error:
            failed.append({"name": p.label, "input": None, "error": p.error})
    live = [p for p in pairs if not p.error]
    for case in cases:
        jobs: dict[str, Callable[[], Any]] = {}
        first: dict[str, float] = {}
        for p in live:
            try:
                call = case.make(p)
                t0 = _time.perf_counter()
                value = call()
                finish(value)
                first[p.label] = _time.perf_counter() - t0
                why = case.check(value)
            except Exception as e:
                why = f"failed: {type(e).__name__}: {' '.join(str(e).split())}"
            if why:
                failed.append({"name": p.label, "input": case.name, "error": why})
            else:
                jobs[p.label] = call
        if not jobs:
            continue
        res = benchmark(jobs, time=args.time, warmup=args.warmup)
        by_label = {p.label: p for p in live}
        for sc in res.scenarios:
            p = by_label[sc["job"]]
            # the checked call was the first: a jitted function's compilation is in it
            sc.update(
                input=case.name,
                backend=f"{p.backend.name}:{p.backend.device}",
                compiler=p.compiler,
                first_call_s=first[sc["job"]],
                checked=True,
            )
        scenarios += res.scenarios
    return BenchmarkResult(scenarios, args.time, args.warmup), failed


def _winners(result: Any) -> dict[str | None, dict[str, Any]]:
    """Per case: the fastest pair (by median), the slowest, and how many times faster."""
    out: dict[str | None, dict[str, Any]] = {}
    for case, rows in result.groups():
        best, worst = rows[0], rows[-1]
        out[case] = {
            "fastest": best["job"],
            "slowest": worst["job"],
            "times_faster": worst["median_s"] / best["median_s"] if best["median_s"] else None,
        }
    return out


def _ratio(result: Any, case: str | None, fast: str, slow: str) -> float | None:
    """How many times faster ``fast`` ran ``case`` than ``slow`` (medians), or None."""
    med = {s["job"]: s["median_s"] for s in result.scenarios if s["input"] == case}
    if fast not in med or slow not in med or not med[fast]:
        return None
    return float(med[slow] / med[fast])


def _bench_report(
    op: str, args: argparse.Namespace, result: Any, failed: list[dict[str, Any]],
    extra: dict[str, Any], footer: list[str],
) -> int:  # fmt: skip
    """Print the report (or JSON), write the HTML page; 1 when a row failed."""
    for f in failed:
        where = f" ({f['input']})" if f["input"] else ""
        print(f"numerix: {op}: {f['name']}{where}: {f['error']}", file=sys.stderr)
    if args.html:
        result.to_html(args.html)
    winners = _winners(result) if result.scenarios else {}
    if args.json:
        data = json.loads(result.to_json())
        data.update(benchmark=op.split()[-1], failed=failed, **extra)
        data["fastest"] = [{"input": k, **v} for k, v in winners.items()]
        print(json.dumps(data, indent=2))
        return 1 if failed else 0
    print(result.table() if result.scenarios else f"{op}: no row could run")
    print()
    for case, w in winners.items():
        where = "" if case is None else f"{case}: "
        if w["fastest"] == w["slowest"]:
            print(f"{where}fastest: {w['fastest']} (the only row)")
        else:
            print(
                f"{where}fastest: {w['fastest']}, {w['times_faster']:.1f}× faster than "
                f"{w['slowest']}"
            )
    for line in footer:
        print(line)
    if args.html:
        print(f"report: {args.html}")
    if failed:
        print(f"{len(failed)} row(s) FAILED; see above", file=sys.stderr)
        return 1
    return 0


# ---------------------------------------------------------------------- mlp
def mlp_init(key: Any) -> dict[str, dict[str, Any]]:
    """The Axon post's model's parameters from ``key``: Glorot-uniform kernels (Axon's
    default), zero biases, for f32[*][18] inputs."""
    import math

    from numerix.ops.elementwise import multiply
    from numerix.random import split, uniform

    keys = split(key)
    params = {}
    for i, (k, fan_in, fan_out) in enumerate(
        ((keys[0], MLP_INPUT[1], MLP_HIDDEN), (keys[1], MLP_HIDDEN, 1))
    ):
        limit = math.sqrt(6.0 / (fan_in + fan_out))
        w = uniform(k, (fan_in, fan_out), minval=-limit, maxval=limit)
        # zeros on the key's backend (and traced with it inside jit)
        b = multiply(uniform(k, (fan_out,)), 0.0)
        params[f"dense_{i}"] = {"kernel": w, "bias": b}
    return params


def mlp_predict(params: dict[str, dict[str, Any]], x: Any) -> Any:
    """dense(32) → relu → dense(1) → softmax."""
    from numerix.ops.composites import relu, softmax
    from numerix.ops.elementwise import add
    from numerix.ops.linalg import dot

    d0, d1 = params["dense_0"], params["dense_1"]
    h = relu(add(dot(x, d0["kernel"]), d0["bias"]))
    return softmax(add(dot(h, d1["kernel"]), d1["bias"]), axis=-1)


def _jitted(fn: Callable[..., Any], compiler: str | None) -> Callable[..., Any]:
    from numerix.defn.jit import jit

    return fn if compiler is None else jit(fn, compiler=compiler)


def bench_mlp(args: argparse.Namespace) -> tuple[Any, list[dict[str, Any]], dict[str, Any]]:
    """``numerix bench mlp``: the report, the failures and the settings (for --json)."""
    import numpy as np

    from numerix.random import key as random_key
    from numerix.random import uniform

    op = "bench mlp"
    pairs = _bench_pairs(args, op)
    # the reference: numpy's (the binary backend's) init, and predict in numpy
    ref_params = _host_tree(mlp_init(random_key(MLP_KEY, backend="binary")))
    x_np = _to_host(uniform(random_key(MLP_KEY, backend="binary"), MLP_INPUT))

    def np_predict(p: dict[str, Any], x: Any) -> Any:
        d0, d1 = p["dense_0"], p["dense_1"]
        h = np.maximum(x @ d0["kernel"] + d0["bias"], 0)
        z = h @ d1["kernel"] + d1["bias"]
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    expected = np_predict(ref_params, x_np)
    lim = {k: float(np.sqrt(6.0 / sum(v["kernel"].shape))) for k, v in ref_params.items()}

    def init_case(p: _Pair) -> Callable[[], Any]:
        fn, k = _jitted(mlp_init, p.compiler), random_key(MLP_KEY, backend=p.backend)
        return lambda: fn(k)

    def check_init(value: Any) -> str | None:
        got = _host_tree(value)
        for name, layer in got.items() if isinstance(got, dict) else ():
            w = np.asarray(layer["kernel"])
            if w.size and float(np.max(np.abs(w))) > lim[name]:
                return f"{name} kernel outside ±{lim[name]:.3g} (Glorot uniform)"
        return _differs(got, ref_params, "params")

    def predict_case(p: _Pair) -> Callable[[], Any]:
        fn = _jitted(mlp_predict, p.compiler)
        params, x = _moved(ref_params, p.backend), _moved(x_np, p.backend)
        return lambda: fn(params, x)

    cases = [
        _Case("init", init_case, check_init),
        _Case("predict", predict_case, lambda v: _differs(_host_tree(v), expected)),
    ]
    result, failed = _bench_cases(op, pairs, cases, args)
    settings = {
        "model": "dense(32) -> relu -> dense(1) -> softmax",
        "input_shape": list(MLP_INPUT),
        "key": MLP_KEY,
        "seeds": {"exla_vs_evaluator": SEEDS_MLP},
    }
    return result, failed, settings


def _seed_footer(result: Any) -> list[str]:
    """numerix's ratios beside the seeds': each compiled pair against binary + evaluator
    (the post's EXLA against the pure evaluator)."""
    jobs = {s["job"] for s in result.scenarios}
    base = next((j for j in sorted(jobs) if j.startswith("binary") and "evaluator" in j), None)
    lines = [
        "",
        f"The seeds (Axon acceleration post, Benchee): EXLA init {SEEDS_MLP['init']:.0f}×, "
        f"predict {SEEDS_MLP['predict']:.1f}× faster than the pure evaluator.",
    ]
    if base is None:
        return lines + ["numerix: no 'binary + evaluator' row to compare with."]
    lines.append(f"numerix, against {base} (medians):")
    for job in sorted(jobs - {base}):
        ratios = [_ratio(result, case, job, base) for case in ("init", "predict")]
        cells = [f"{case} {_times(r)}" for case, r in zip(("init", "predict"), ratios)]
        lines.append(f"  {job}: {', '.join(cells)}")
    return lines


def _times(r: float | None) -> str:
    """``"3.2× faster"`` or ``"1.5× slower"`` for a ratio of speeds (more: faster)."""
    if r is None or r <= 0:
        return "-"
    return f"{r:.1f}× faster" if r >= 1 else f"{1 / r:.1f}× slower"


def _cmd_bench_mlp(args: argparse.Namespace) -> int:
    result, failed, settings = bench_mlp(args)
    footer = _seed_footer(result) if result.scenarios else []
    return _bench_report("bench mlp", args, result, failed, settings, footer)


# ---------------------------------------------------------------------- softmax
def tip_softmax(x: Any) -> Any:
    """The tip's softmax: ``exp(x - max(x)) / sum(exp(x - max(x)))`` over every element."""
    from numerix.ops.elementwise import divide, exp, subtract
    from numerix.ops.reduction import max as reduce_max
    from numerix.ops.reduction import sum as reduce_sum

    max_val = reduce_max(x)
    return divide(exp(subtract(x, max_val)), reduce_sum(exp(subtract(x, max_val))))


def _cmd_bench_softmax(args: argparse.Namespace) -> int:
    import numpy as np

    op = "bench softmax"
    pairs = _bench_pairs(args, op)
    x_np = np.random.default_rng(SEED).random((args.size, args.size), dtype=np.float32)
    x64 = x_np.astype(np.float64)
    expected = np.exp(x64 - x64.max()) / np.exp(x64 - x64.max()).sum()

    def make(p: _Pair) -> Callable[[], Any]:
        fn, x = _jitted(tip_softmax, p.compiler), _moved(x_np, p.backend)
        return lambda: fn(x)

    name = f"f32[{args.size}][{args.size}]"
    result, failed = _bench_cases(
        op, pairs, [_Case(name, make, lambda v: _differs(_host_tree(v), expected))], args
    )
    footer = [
        "",
        "The tip: eager (a backend) dispatches max, subtract, exp, sum and divide one by one; "
        "jit (a compiler) runs them as one program.",
    ]
    return _bench_report(op, args, result, failed, {"shape": [args.size, args.size]}, footer)


# ---------------------------------------------------------------------- run
def _load_attr(target: str, what: str, modules: dict[str, Any]) -> Any:
    """The attribute ``NAME`` of the Python file ``FILE.py`` that ``target`` names."""
    import importlib.util
    from pathlib import Path

    from numerix.errors import ArgumentError

    op = "bench run"
    path, sep, attr = target.rpartition(":")
    if not sep or not path or not attr.isidentifier():
        raise ArgumentError(
            f"{op}: {what} must be FILE.py:NAME (e.g. model.py:{what.lower()}), got {target!r}"
        )
    file = Path(path)
    if not file.is_file():
        raise ArgumentError(
            f"{op}: {what} {target!r}: no file {path!r}; give the path of a Python file"
        )
    key = str(file.resolve())
    module = modules.get(key)
    if module is None:
        spec = importlib.util.spec_from_file_location(f"numerix_bench_{file.stem}", file)
        if spec is None or spec.loader is None:
            raise ArgumentError(
                f"{op}: {path!r} is not a Python file Python can import; name a .py file"
            )
        module = importlib.util.module_from_spec(spec)
        sys.path.insert(0, str(file.parent.resolve()))  # its own sibling modules import
        try:
            spec.loader.exec_module(module)
        except Exception as e:
            raise ArgumentError(
                f"{op}: importing {path} raised {type(e).__name__}: {' '.join(str(e).split())}; "
                f"fix the file (python {path} shows the traceback)"
            ) from None
        finally:
            sys.path.remove(str(file.parent.resolve()))
        modules[key] = module
    if not hasattr(module, attr):
        names = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_"))
        raise ArgumentError(
            f"{op}: {path} has no {attr!r}; it defines {', '.join(names) or 'nothing callable'}: "
            f"name one of them after the ':'"
        )
    return getattr(module, attr)


def _cmd_bench_run(args: argparse.Namespace) -> int:
    from numerix.configuration import default_backend
    from numerix.errors import ArgumentError

    op = "bench run"
    modules: dict[str, Any] = {}
    fn = _load_attr(args.target, "FUNCTION", modules)
    if not callable(fn):
        raise ArgumentError(
            f"{op}: {args.target} is not callable (of type {type(fn).__name__}); name a function"
        )
    inputs: dict[str, Any] | None = None
    if args.inputs:
        value = _load_attr(args.inputs, "INPUTS", modules)
        if callable(value) and not isinstance(value, dict):
            value = value()
        if not isinstance(value, dict) or not value:
            raise ArgumentError(
                f"{op}: {args.inputs} must be a non-empty dict name -> argument (or a function "
                f"returning one), got {type(value).__name__}; e.g. INPUTS = {{'256x256': "
                f"numpy.ones((256, 256), 'float32')}}"
            )
        inputs = {str(k): v for k, v in value.items()}
    pairs = _bench_pairs(args, op)
    reference: dict[str | None, Any] = {}

    def case(name: str | None) -> _Case:
        def make(p: _Pair) -> Callable[[], Any]:
            f = _jitted(fn, p.compiler)
            if inputs is None:
                be = p.backend

                def call() -> Any:
                    with default_backend(be):
                        return f()

                return call
            arg = _moved(inputs[str(name)], p.backend)
            return lambda: f(arg)

        def check(value: Any) -> str | None:
            got = _host_tree(value)
            if name not in reference:  # the first row's result is the others' reference
                reference[name] = got
                return None
            why = _differs(got, reference[name])
            return None if why is None else f"differs from the first row's result: {why}"

        return _Case(name, make, check)

    cases = [case(None)] if inputs is None else [case(n) for n in inputs]
    result, failed = _bench_cases(op, pairs, cases, args)
    return _bench_report(
        op, args, result, failed, {"target": args.target, "inputs": args.inputs}, []
    )
