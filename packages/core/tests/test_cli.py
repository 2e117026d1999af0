"""The ``numerix`` command line: ``numerix info``, ``doctor`` and ``bench matmul``.

Benchmarks run on a small x (``--rows``) with few repeats; no test asserts a timing
beyond "it is positive".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

import numerix
from numerix.cli import main
from numerix.plugins import install_command, register_backend, unregister_backend
from numerix.testing.core_only import core_backend

BENCH = ["bench", "matmul", "--repeat", "2", "--warmup", "1", "--rows", "200", "--json"]


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------- numerix info


def test_info_names_the_binary_backend_and_its_distribution(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli(capsys, "info")
    assert code == 0
    assert "binary" in out
    assert "numerix-binary" in out
    assert numerix.__version__ in out
    assert "Default backend" in out and "binary(cpu)" in out


def test_info_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "info", "--json")
    assert code == 0
    info = json.loads(out)
    assert {"numerix_version", "plugins", "backends", "broken_plugins", "default_backend"} <= set(
        info
    )
    assert info["numerix_version"] == numerix.__version__
    binary = next(b for b in info["backends"] if b["name"] == "binary")
    assert binary["distribution"] == "numerix-binary"
    assert binary["status"] == "ok" and binary["error"] is None
    assert binary["devices"] == ["cpu"]
    plugin = next(p for p in info["plugins"] if p["distribution"] == "numerix-binary")
    assert {"entry_point", "distribution", "version", "backends"} <= set(plugin)
    assert "binary" in plugin["backends"]
    assert isinstance(info["broken_plugins"], list)
    assert info["default_backend"] == "binary(cpu)"


class _Unloadable(core_backend()):
    name = "unloadable"

    @classmethod
    def devices(cls) -> list[str]:
        raise RuntimeError("driver missing")


def test_info_reports_a_backend_that_fails_without_failing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    register_backend("unloadable", _Unloadable)
    try:
        code, out, _ = run_cli(capsys, "info", "--json")
        assert code == 0
        b = next(b for b in json.loads(out)["backends"] if b["name"] == "unloadable")
        assert b["status"] == "broken" and "driver missing" in b["error"]
        code, out, _ = run_cli(capsys, "info")
        assert code == 0 and "driver missing" in out
    finally:
        unregister_backend("unloadable")


class _Flushing(core_backend()):
    name = "flushing"
    numeric_notes = ("subnormal floats are flushed to zero",)

    @classmethod
    def devices(cls) -> list[str]:
        return ["cpu"]


def test_info_lists_a_backends_known_differences(capsys: pytest.CaptureFixture[str]) -> None:
    register_backend("flushing", _Flushing)
    try:
        code, out, _ = run_cli(capsys, "info", "--json")
        backends = {b["name"]: b for b in json.loads(out)["backends"]}
        assert backends["flushing"]["numeric_notes"] == ["subnormal floats are flushed to zero"]
        assert backends["binary"]["numeric_notes"] == []
        code, out, _ = run_cli(capsys, "info")
        assert code == 0
        assert "Known differences from numpy (docs/known-differences.md):" in out
        assert "flushing: subnormal floats are flushed to zero" in " ".join(out.split())
    finally:
        unregister_backend("flushing")


class _CoreAlone(core_backend()):
    name = "corealone"

    @classmethod
    def devices(cls) -> list[str]:
        return ["cpu"]


def test_info_counts_the_primitives_a_backend_implements(
    capsys: pytest.CaptureFixture[str],
) -> None:
    register_backend("corealone", _CoreAlone)
    try:
        code, out, _ = run_cli(capsys, "info", "--json")
        assert code == 0
        backends = {b["name"]: b for b in json.loads(out)["backends"]}
        total = len(numerix.primitives.REGISTRY)
        assert backends["binary"]["primitives"] == {"own": total, "by_fallback": 0}
        required = len(numerix.primitives.REQUIRED) + len(numerix.primitives.REQUIRED_FOR_COMPLEX)
        assert backends["corealone"]["primitives"] == {
            "own": required,
            "by_fallback": total - required,
        }
        code, out, _ = run_cli(capsys, "info")
        # the row's cells, however the table wraps them: the row and the lines after it
        # until the next row (one that names a backend in its first cell)
        lines = out.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("│ corealone "))
        rows = [lines[start]]
        for line in lines[start + 1 :]:
            if not line.startswith("│ ") or line[2] != " ":
                break
            rows.append(line)
        cells = " ".join(" ".join(c.strip() for c in r.split("│") if c.strip()) for r in rows)
        assert code == 0 and f"all {total} its own" in " ".join(out.split())
        flat = " ".join(cells.split())
        assert f"{required} its own, {total - required} by the core's fallbacks" in flat, flat
    finally:
        unregister_backend("corealone")


def test_python_dash_m_numerix_info() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "numerix", "info"], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert "numerix-binary" in r.stdout


def test_cli_does_not_make_import_numerix_heavier() -> None:
    code = "import sys, numerix; print('rich' in sys.modules, 'numerix.cli' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "False"]


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys)
    assert code == 0 and "info" in out and "bench" in out


# ---------------------------------------------------------------- numerix bench matmul


def test_bench_matmul_json(core_only: None, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, *BENCH)
    assert code == 0, err
    res = json.loads(out)
    assert res["x_shape"] == [200, 784] and res["w_shape"] == [784, 10]
    rows = {r["name"]: r for r in res["rows"]}
    assert {"binary (cpu)", "binary (cpu) jit[evaluator]", "numpy (raw)"} <= set(rows)
    assert [r["kind"] for r in res["rows"]] == ["numerix", "compiled", "raw"]
    assert rows["binary (cpu) jit[evaluator]"]["compiler"] == "evaluator"
    assert rows["binary (cpu)"]["compiler"] is None
    for r in rows.values():
        assert r["error"] is None
        assert len(r["times_s"]) == 2
        assert r["median_s"] > 0 and r["mean_s"] > 0 and r["min_s"] > 0
        assert r["ratio_to_fastest"] >= 1.0
        assert r["peak_memory_bytes"] > 0  # host rows are measured with tracemalloc
    assert min(r["ratio_to_fastest"] for r in rows.values()) == 1.0


def test_bench_matmul_without_compiled_rows(
    core_only: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(capsys, *BENCH, "--no-compiled")
    assert code == 0
    assert [r["name"] for r in json.loads(out)["rows"]] == ["binary (cpu)", "numpy (raw)"]


def test_bench_matmul_default_is_the_seed_size() -> None:
    from numerix.cli import _parser

    args = _parser().parse_args(["bench", "matmul"])
    assert args.rows == 10_000


def test_bench_matmul_table(core_only: None, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, *BENCH[:-1], "--backend", "binary")
    assert code == 0
    assert "binary (cpu)" in out and "numpy (raw)" in out and "fastest" in out
    assert "binary (cpu) jit[evaluator]" in out


def test_bench_unknown_backend_exits_2_with_the_installed_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(capsys, *BENCH, "--backend", "nope")
    assert code == 2
    assert out == ""
    assert "nope" in err and "installed backends" in err and "binary" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_bench_bad_backend_option_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, *BENCH, "--backend", "binary:gpu")
    assert code == 2 and "device must be 'cpu'" in err


def test_bench_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "bench", "matmul", "--repeat", "0")
    assert code == 2 and "--repeat" in err


def _binary_class() -> Any:
    from numerix.plugins import backend_class

    return backend_class("binary")


def test_bench_reports_a_wrong_answer_instead_of_timing_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = _binary_class()

    class WrongDot(base):  # type: ignore[misc, valid-type]
        name = "wrongdot"
        __slots__ = ()

        def dot(self, out: Any, x: Any, y: Any, **params: Any) -> Any:
            out.data = np.zeros(out.shape, dtype=np.float32)
            return out

    register_backend("wrongdot", WrongDot)
    try:
        code, out, err = run_cli(capsys, *BENCH, "--backend", "wrongdot", "--backend", "binary")
        assert code == 1
        rows = {r["name"]: r for r in json.loads(out)["rows"]}
        bad = rows["wrongdot (cpu)"]
        assert "wrong result" in bad["error"] and bad["times_s"] == [] and bad["median_s"] is None
        assert rows["binary (cpu)"]["error"] is None and rows["binary (cpu)"]["median_s"] > 0
        assert "wrongdot (cpu)" in err and "wrong result" in err
        code, out, _ = run_cli(capsys, *BENCH[:-1], "--backend", "wrongdot")
        assert code == 1 and "FAILED" in out
    finally:
        unregister_backend("wrongdot")


def test_bench_uses_a_backends_raw_matmul_hook(
    core_only: None, capsys: pytest.CaptureFixture[str]
) -> None:
    base = _binary_class()
    calls: list[int] = []

    class Hooked(base):  # type: ignore[misc, valid-type]
        name = "hooked"
        __slots__ = ()
        bench_raw_name: ClassVar[str] = "rawlib"

        def bench_raw_matmul(self, x_np: np.ndarray, w_np: np.ndarray) -> Any:
            def run() -> np.ndarray:
                calls.append(1)
                return np.matmul(x_np, w_np)

            return run

    register_backend("hooked", Hooked)
    try:
        code, out, _ = run_cli(capsys, *BENCH, "--backend", "hooked")
        assert code == 0
        rows = {r["name"]: r for r in json.loads(out)["rows"]}
        assert set(rows) == {"hooked (cpu)", "hooked (cpu) jit[evaluator]", "rawlib (raw)"}
        assert rows["rawlib (raw)"]["median_s"] > 0
        # a host backend (is_host): its raw row's memory is measured, as numpy's is
        assert rows["rawlib (raw)"]["peak_memory_bytes"] is not None
        assert len(calls) == 1 + 1 + 2 + 1  # check, warm-up, two timed runs, memory
    finally:
        unregister_backend("hooked")


# ---------------------------------------------------------------- a configuration mistake
@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty project folder as the working directory, no numerix variable, an empty
    user config folder; the settings read here are forgotten afterwards."""
    from numerix import configuration
    from numerix.configuration import _state as config_state

    for k in list(os.environ):
        if k.upper().startswith("NUMERIX_") or k.upper() in ("XLA_TARGET", "LIBTORCH_TARGET"):
            monkeypatch.delenv(k)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    monkeypatch.chdir(proj)
    global_before = configuration._global_default
    token = configuration._context_default.set(None)
    configuration._global_default = None
    config_state.base = config_state.base_backend = None
    yield proj
    configuration._context_default.reset(token)
    configuration._global_default = global_before
    config_state.base = config_state.base_backend = None


class _ReadsSettings(core_backend()):
    """A healthy backend whose probes read the settings, as xla's and torch's do."""

    name = "readssettings"

    @classmethod
    def devices(cls) -> list[str]:
        from numerix.configuration import settings

        settings()
        return ["cpu"]

    @classmethod
    def is_available(cls, **options: Any) -> bool:
        return bool(cls.devices())


BAD_KEY = "[backends.binary]\ndevic = 'cpu'\n"


@pytest.fixture
def reads_settings() -> Iterator[None]:
    register_backend("readssettings", _ReadsSettings)
    yield
    unregister_backend("readssettings")


def test_info_reports_a_config_mistake_once_as_a_config_error(
    project: Path, reads_settings: None, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "numerix.toml").write_text(BAD_KEY)
    code, out, _ = run_cli(capsys, "info", "--json")
    info = json.loads(out)
    assert code == 1  # the default backend and the devices cannot be known
    assert "numerix.toml:2" in info["config_error"] and "'devic'" in info["config_error"]
    row = next(b for b in info["backends"] if b["name"] == "readssettings")
    assert row["status"] == "not checked"  # healthy, not broken
    assert info["broken_plugins"] == [] and info["broken_backends"] == []
    code, out, _ = run_cli(capsys, "info")
    assert code == 1
    assert out.count("unknown key 'devic'") == 1
    assert "Configuration error" in out and "broken" not in out


def test_bench_stops_on_a_config_mistake_with_one_config_error(
    project: Path, reads_settings: None, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "numerix.toml").write_text(BAD_KEY)
    code, out, err = run_cli(capsys, *BENCH)
    assert code == 2 and out == ""
    assert err.count("unknown key 'devic'") == 1 and len(err.strip().splitlines()) == 1
    assert "configuration is invalid" in err and "FAILED" not in err


# ---------------------------------------------------------------- numerix doctor
def _doctor(capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, str]]]:
    code, out, _ = run_cli(capsys, "doctor", "--json")
    return code, json.loads(out)["problems"]


def _fake_distribution(site: Path, name: str, module: str, body: str, entry: str) -> None:
    """An installed distribution ``name`` in the folder ``site`` (put it on sys.path):
    module ``module`` with ``body``, entry point ``entry`` in the numerix.plugins group."""
    site.mkdir(exist_ok=True)
    (site / f"{module}.py").write_text(textwrap.dedent(body))
    dist = site / f"{name.replace('-', '_')}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[numerix.plugins]\n{entry} = {module}\n")


def test_doctor_reports_a_backend_whose_library_or_class_is_missing(tmp_path: Path) -> None:
    # numerix-fakelib installed, the library its backend imports missing (as numerix-torch
    # without torch), and a second backend whose class does not exist: each is a problem
    # whose fix reinstalls the plugin (pulling in what it needs)
    site = tmp_path / "site"
    _fake_distribution(
        site,
        "numerix-fakelib",
        "numerix_fakelib",
        """
        from numerix.hookspecs import hookimpl
        from numerix.plugins import BackendEntry

        @hookimpl
        def numerix_backends():
            return [BackendEntry("fakelib", "numerix_fakelib_backend:FakeBackend"),
                    BackendEntry("fakeclass", "numerix_fakelib:NoSuchClass")]
        """,
        "fakelib",
    )
    (site / "numerix_fakelib_backend.py").write_text("import fakelib_native_library\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMERIX_")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")])
    r = subprocess.run(
        [sys.executable, "-m", "numerix", "doctor", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert r.returncode == 1, r.stdout + r.stderr
    problems = {p["problem"].split(")")[0]: p for p in json.loads(r.stdout)["problems"]}
    lib = problems["backend 'fakelib' (numerix-fakelib"]
    assert "it needs the module 'fakelib_native_library', which is not installed" in lib["problem"]
    assert lib["fix"].startswith("pip install --force-reinstall numerix-fakelib")
    cls = problems["backend 'fakeclass' (numerix-fakelib"]
    assert "AttributeError" in cls["problem"] and "NoSuchClass" in cls["problem"]
    assert "no problems found" not in r.stdout


@pytest.mark.skipif(
    "torch" not in __import__("numerix").plugins.backend_entries(),
    reason="numerix-torch is not installed here: the fake-plugin test above covers the case",
)
def test_doctor_reports_numerix_torch_without_torch() -> None:
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from numerix.cli import main\n"
        "sys.exit(main(['doctor', '--json']))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    (p,) = [p for p in json.loads(r.stdout)["problems"] if "'torch'" in p["problem"]]
    assert "it needs the module 'torch'" in p["problem"]
    assert p["fix"].startswith(install_command("numerix-torch", reinstall=True))


class _NoDevice(core_backend()):
    name = "nodevice"
    spec_fields = ("device",)

    @classmethod
    def devices(cls) -> list[str]:
        return []

    @classmethod
    def is_available(cls, **options: Any) -> bool:
        return False


def test_doctor_priority_list_with_nothing_available(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "numerix.toml").write_text(
        '# devices this machine lacks\ndefault_backend = ["nodevice:gpu"]\n'
    )
    register_backend("nodevice", _NoDevice)
    try:
        code, problems = _doctor(capsys)
    finally:
        unregister_backend("nodevice")
    assert code == 1
    (p,) = problems
    assert "none of the backends in the priority list is available" in p["problem"]
    assert p["fix"] == (
        f"edit {project / 'numerix.toml'}:2: end the priority list with a backend every "
        'machine has, such as "binary"'
    )


@pytest.mark.parametrize(
    "files, env, fix",
    [
        pytest.param(
            {"numerix.toml": "default_backen = 'binary'\ndefault_compiller = 'evaluator'\n"},
            {},
            "edit {p}/numerix.toml:1 (key default_backen); {p}/numerix.toml:2 "
            "(key default_compiller)",
            id="two-bad-keys",
        ),
        pytest.param(
            {
                "numerix.toml": "default_backend = 'binary'\n",
                "pyproject.toml": "[tool.numerix]\ndefault_backend = 'binary'\n",
            },
            {},
            "remove [tool.numerix] from {p}/pyproject.toml, or remove {p}/numerix.toml",
            id="both-files",
        ),
        pytest.param(
            {},
            {"NUMERIX_CONFIG": "{p}/missing.toml"},
            "unset NUMERIX_CONFIG   # or point it at an existing TOML file",
            id="numerix-config-missing",
        ),
        pytest.param(
            {"numerix.toml": "default_backend = 'binary'\n"},
            {"NUMERIX_DEFAULT_BACKEN": "binary"},
            "unset NUMERIX_DEFAULT_BACKEN   # or correct its value",
            id="bad-variable",
        ),
        pytest.param(
            {"numerix.toml": "default_backend = \n"},
            {},
            "edit {p}/numerix.toml:1",
            id="malformed-toml",
        ),
    ],
)
def test_doctor_fix_lines_name_what_to_change(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    files: dict[str, str],
    env: dict[str, str],
    fix: str,
) -> None:
    for name, text in files.items():
        (project / name).write_text(text)
    for k, v in env.items():
        monkeypatch.setenv(k, v.format(p=project))
    code, problems = _doctor(capsys)
    assert code == 1
    assert [p["fix"] for p in problems] == [fix.format(p=project)]


# ---------------------------------------------------------------- install commands
def _checkout(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    for folder in ("core", "backend-binary", "backend-xla", "backend-torch"):
        (root / "packages" / folder).mkdir(parents=True)
        (root / "packages" / folder / "pyproject.toml").write_text("[project]\n")
    return root


@pytest.mark.parametrize(
    "record, expected",
    [
        pytest.param(None, 'pip install "numerix-xla[cuda12]"', id="index"),
        pytest.param(
            {"url": "file://{root}/packages/core", "dir_info": {"editable": True}},
            'pip install -e "{root}/packages/backend-xla[cuda12]"',
            id="editable-checkout",
        ),
        pytest.param(
            {"url": "file://{root}/packages/core", "dir_info": {}},
            'pip install "{root}/packages/backend-xla[cuda12]"',
            id="folder-install",
        ),
        pytest.param(
            {
                "url": "https://example.org/numerix.git",
                "vcs_info": {"vcs": "git", "commit_id": "0123abc"},
                "subdirectory": "packages/core",
            },
            'pip install "numerix-xla[cuda12] @ git+https://example.org/numerix.git@0123abc'
            '#subdirectory=packages/backend-xla"',
            id="vcs",
        ),
        pytest.param(
            {"url": "file://{root}/dist/numerix-0.1.0-py3-none-any.whl", "archive_info": {}},
            'pip install "numerix-xla[cuda12]" --find-links {root}/dist',
            id="wheel-file",
        ),
    ],
)
def test_install_command_follows_how_numerix_was_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, record: Any, expected: str
) -> None:
    from numerix import plugins

    root = _checkout(tmp_path)
    (root / "dist").mkdir()
    if record is not None:
        record = json.loads(json.dumps(record).replace("{root}", str(root)))
    monkeypatch.setattr(plugins, "_direct_url", lambda d: record if d == "numerix" else None)
    assert install_command("numerix-xla", "cuda12") == expected.format(root=root)


def test_install_command_of_this_installation() -> None:
    # read off the real metadata: from a checkout (as here and in CI), the command names
    # the plugin's folder in that checkout, and that folder holds its pyproject.toml
    from importlib.metadata import distribution

    record = distribution("numerix").read_text("direct_url.json")
    cmd = install_command("numerix-torch")
    if record is None:
        assert cmd == "pip install numerix-torch"
        return
    url = json.loads(record)["url"]
    assert url.startswith("file://") and url.endswith("packages/core")
    folder = Path(cmd.split()[-1])
    assert folder.name == "backend-torch" and (folder / "pyproject.toml").is_file()
    assert cmd.startswith("pip install -e ") == json.loads(record)["dir_info"].get(
        "editable", False
    )


# ---------------------------------------------------------------- misspelt names
def test_a_misspelt_name_gets_a_suggestion_on_every_path(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from numerix.configuration import _state as config_state

    (project / "numerix.toml").write_text('default_backend = ["bianry", "nope"]\n')
    with pytest.raises(
        numerix.ConfigError, match=r"'bianry': not installed; did you mean 'binary'"
    ):
        numerix.reload_config()
        numerix.get_default_backend()
    (project / "numerix.toml").unlink()
    monkeypatch.setenv("NUMERIX_DEFAULT_BACKEND", "bianry")
    config_state.base = config_state.base_backend = None
    with pytest.raises(numerix.ConfigError, match=r"did you mean 'binary'\?"):
        numerix.tensor([1.0])
    monkeypatch.delenv("NUMERIX_DEFAULT_BACKEND")
    config_state.base = config_state.base_backend = None
    for call in (
        lambda: numerix.tensor([1.0], backend="bianry"),
        lambda: numerix.default_backend("bianry").__enter__(),
        lambda: numerix.set_default_backend("bianry"),
    ):
        with pytest.raises(numerix.BackendNotFoundError, match=r"did you mean 'binary'\?"):
            call()
    with pytest.raises(numerix.ArgumentError, match=r"did you mean 'evaluator'\?"):
        numerix.jit(numerix.sum, compiler="evalutor")(numerix.tensor([1.0]))


def test_a_backend_whose_plugin_is_broken_raises_plugin_error(tmp_path: Path) -> None:
    # as docs/write-a-backend.md says: asking for it raises PluginError with the reason
    site = tmp_path / "site"
    _fake_distribution(
        site, "numerix-crash", "numerix_crash", "raise RuntimeError('boom')\n", "crash"
    )
    code = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {str(site)!r})
        import numerix as nx
        try:
            nx.tensor([1], backend="crash")
        except nx.PluginError as e:
            print(type(e).__name__, e)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.stdout.startswith(
        "PluginError get_backend: backend 'crash': the plugin providing it "
    ), r.stdout + r.stderr
    assert "(numerix-crash) is broken: RuntimeError: boom" in r.stdout
    assert "reinstall it with: pip install --force-reinstall numerix-crash" in r.stdout


# ---------------------------------------------------------------- bench at 80 columns
def test_bench_table_fits_80_columns_and_names_each_row_once(
    core_only: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base = _binary_class()

    class WithDevice(base):  # type: ignore[misc, valid-type]
        name = "withdevice"
        __slots__ = ()
        bench_raw_name: ClassVar[str] = "rawlib"

        def bench_raw_matmul(self, x_np: np.ndarray, w_np: np.ndarray) -> Any:
            return lambda: np.matmul(x_np, w_np) * 33.0 / 33.0

    register_backend("withdevice", WithDevice)
    monkeypatch.setenv("COLUMNS", "80")
    try:
        code, out, _ = run_cli(
            capsys, *BENCH[:-1], "--backend", "binary", "--backend", "withdevice"
        )
    finally:
        unregister_backend("withdevice")
    assert code == 0
    lines = out.splitlines()
    assert max(len(ln) for ln in lines) <= 80
    assert "…" not in out  # no cell is cut
    for name in ("binary (cpu) jit[evaluator]", "withdevice (cpu)", "rawlib (raw)"):
        assert any(name in ln for ln in lines), name
    assert "(raw) (raw" not in out
    assert "slower" in out or out.count("fastest") == 1


def test_config_warning_points_at_the_users_line(
    core_only: None, project: Path, recwarn: pytest.WarningsRecorder
) -> None:
    from numerix.configuration import ConfigWarning

    (project / "numerix.toml").write_text("[backends.torch]\ndevice = 'cpu'\n")
    numerix.tensor([1.0])  # reads the configuration: the warning is about this line
    with numerix.config(default_backend="binary"):
        pass
    got = [w for w in recwarn.list if issubclass(w.category, ConfigWarning)]
    assert got, "no ConfigWarning"
    assert {(w.filename, w.lineno) for w in got} <= {
        (__file__, test_config_warning_points_at_the_users_line.__code__.co_firstlineno + 6),
        (__file__, test_config_warning_points_at_the_users_line.__code__.co_firstlineno + 7),
    }, [(w.filename, w.lineno) for w in got]


def test_doctor_installs_a_targets_package_the_way_numerix_was_installed(
    core_only: None,
    project: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a backend's check_target writes the index form; numerix came from a checkout here
    from numerix import plugins

    root = _checkout(tmp_path)
    record = {"url": f"file://{root}/packages/core", "dir_info": {"editable": True}}
    monkeypatch.setattr(plugins, "_direct_url", lambda d: record if d == "numerix" else None)

    class NoGPU(_binary_class()):  # type: ignore[misc]
        name = "xla"

        @classmethod
        def check_target(cls, target: str) -> tuple[str, str] | None:
            return (
                f"XLA_TARGET={target}: no device",
                'pip install --force-reinstall "numerix-xla[cuda12]"   # and check the driver',
            )

    register_backend("xla", NoGPU, replace=True)
    monkeypatch.setenv("XLA_TARGET", "cuda12")
    code, problems = _doctor(capsys)
    assert code == 1
    assert [p["fix"] for p in problems] == [
        f'pip install -e "{root}/packages/backend-xla[cuda12]"   # and check the driver'
    ]


# ---------------------------------------------------------------- bench interleaves its rows
def test_bench_interleaves_its_rows_and_reports_the_spread(
    core_only: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # each round times every row once, in turn (not one row's repeats in a block)
    import numerix.cli as cli

    calls: list[str] = []

    def rows(specs: Any, x_np: np.ndarray, w_np: np.ndarray, *_: Any) -> list[Any]:
        def run(name: str) -> Any:
            def f() -> Any:
                calls.append(name)
                return x_np @ w_np

            return f

        return [cli.BenchRow(n, "raw", "binary", run(n)) for n in ("a", "b", "c")]

    monkeypatch.setattr(cli, "_rows", rows)
    res = cli.bench_matmul(repeat=3, warmup=1, rows=20, progress=False)
    assert calls == ["a", "b", "c"] * 5  # the check, the warm-up, then 3 rounds
    assert res["interleaved"] is True
    for r in res["rows"]:
        assert len(r["times_s"]) == 3
        assert r["min_s"] == min(r["times_s"]) and r["max_s"] == max(r["times_s"])
        assert r["min_s"] <= r["median_s"] <= r["max_s"]
    code, out, _ = run_cli(capsys, *BENCH[:-1], "--backend", "binary")
    assert code == 0
    assert "spread" in out and "interleaved runs" in out
    assert any(ln.split()[:1] == ["a"] and "–" in ln for ln in out.splitlines())
