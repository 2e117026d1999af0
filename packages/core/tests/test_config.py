"""Configuration: every source, their precedence, the effect on the default backend,
each bad-config error, ``numerix config`` and ``numerix doctor``, and the generated docs.

Every test runs in an empty project folder (``tmp_path``) with its own
``XDG_CONFIG_HOME`` and no ``NUMERIX_*``/``XLA_TARGET``/``LIBTORCH_TARGET`` variable;
the settings read are dropped after each test so none leak into another.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict, Field

import numerix as nx
from numerix import configuration, plugins
from numerix.cli import main
from numerix.configuration import _state as config_state
from numerix.plugins import install_command, register_settings_model, unregister_settings_model
from numerix_binary.backend import BinaryBackend

REPO = Path(__file__).resolve().parents[3]


# ---------------------------------------------------------------- fixtures
def _forget() -> None:
    config_state.base = None
    config_state.base_backend = None


@pytest.fixture(autouse=True)
def clean_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    for k in list(os.environ):
        if k.upper().startswith("NUMERIX_") or k.upper() in ("XLA_TARGET", "LIBTORCH_TARGET"):
            monkeypatch.delenv(k)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    proj = tmp_path / "proj"
    proj.mkdir()
    monkeypatch.chdir(proj)
    _forget()
    # a default set by an earlier test (global or in this context) would hide the settings
    global_before = configuration._global_default
    token = configuration._context_default.set(None)
    configuration._global_default = None
    yield proj
    configuration._context_default.reset(token)
    configuration._global_default = global_before
    _forget()


@pytest.fixture
def user_file(tmp_path: Path) -> Path:
    p = tmp_path / "xdg" / "numerix" / "config.toml"
    p.parent.mkdir(parents=True)
    return p


class FakeGPU(BinaryBackend):
    """A backend with a device that is never available (an absent GPU)."""

    name = "fakegpu"
    default_options: ClassVar[dict[str, Any]] = {"device": "cpu", "memory_fraction": 0.9}
    spec_fields = ("device",)
    is_host = False

    @classmethod
    def is_available(cls, **options: Any) -> bool:
        return options.get("device", "cpu") == "cpu"


class FakeGPUSettings(BaseModel):
    """Settings of the fakegpu test backend."""

    model_config = ConfigDict(extra="forbid")
    device: str = "cpu"
    memory_fraction: float = Field(default=0.9, gt=0.0, le=1.0)


@pytest.fixture
def fakegpu() -> Any:
    nx.register_backend("fakegpu", FakeGPU, replace=True)
    register_settings_model("fakegpu", FakeGPUSettings, replace=True)
    _forget()
    yield
    nx.unregister_backend("fakegpu")
    unregister_settings_model("fakegpu")
    _forget()


def src(key: str) -> dict[str, Any]:
    for row in configuration.effective_values():
        if row["key"] == key:
            return dict(row["source"])
    raise KeyError(key)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------- sources
def test_defaults_when_nothing_is_configured() -> None:
    # the settings hold the models of the plugins loaded so far (decision 24): load
    # them all, so that this test does not depend on what ran before it
    plugins.settings_models()
    s = nx.reload_config()
    assert s.default_backend == "binary"
    assert s.default_compiler == "evaluator"
    assert s.compiler_options == {}
    assert s.xla_target is None and s.libtorch_target is None
    assert s.backends.binary.device == "cpu"  # type: ignore[attr-defined]
    assert all(r["source"]["kind"] == "default" for r in configuration.effective_values())
    assert nx.get_default_backend() is nx.get_backend("binary")


def test_user_file(user_file: Path) -> None:
    user_file.write_text('default_compiler = "evaluator"\n\n[backends.binary]\ndevice = "cpu"\n')
    nx.reload_config()
    s = src("backends.binary.device")
    assert (s["kind"], s["file"], s["line"], s["key"]) == (
        "user",
        str(user_file),
        4,
        "backends.binary.device",
    )
    assert src("default_compiler")["line"] == 1


def test_project_numerix_toml_beats_user_file(user_file: Path, clean_config: Path) -> None:
    user_file.write_text('default_compiler = "fromuser"\ncompiler_options = {a = 1}\n')
    (clean_config / "numerix.toml").write_text('default_compiler = "fromproject"\n')
    s = nx.reload_config()
    assert s.default_compiler == "fromproject"
    assert src("default_compiler")["kind"] == "project"
    assert s.compiler_options == {"a": 1}  # keys the project does not set come from below
    assert src("compiler_options.a")["kind"] == "user"


def test_pyproject_tool_table_in_a_parent_folder(clean_config: Path) -> None:
    (clean_config / "pyproject.toml").write_text(
        '[project]\nname = "p"\n\n[tool.numerix]\ndefault_compiler = "pyproj"\n'
    )
    sub = clean_config / "src" / "pkg"
    sub.mkdir(parents=True)
    os.chdir(sub)
    assert nx.reload_config().default_compiler == "pyproj"
    s = src("default_compiler")
    assert (s["file"], s["line"], s["key"]) == (
        str(clean_config / "pyproject.toml"),
        5,
        "tool.numerix.default_compiler",
    )


def test_nearest_pyproject_ends_the_search(clean_config: Path) -> None:
    (clean_config / "numerix.toml").write_text('default_compiler = "outer"\n')
    inner = clean_config / "inner"
    inner.mkdir()
    (inner / "pyproject.toml").write_text('[project]\nname = "inner"\n')
    os.chdir(inner)
    assert nx.reload_config().default_compiler == "evaluator"


def test_the_search_stops_at_the_project_root(clean_config: Path) -> None:
    # a numerix.toml in a shared parent (a temporary directory, a home) configures
    # nothing below a project root (.git), nor below the working directory outside any
    (clean_config / "numerix.toml").write_text('default_compiler = "shared"\n')
    repo = clean_config / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    os.chdir(repo / "src")
    assert nx.reload_config().default_compiler == "evaluator"
    loose = clean_config / "scripts"
    loose.mkdir()
    os.chdir(loose)
    assert nx.reload_config().default_compiler == "evaluator"
    # inside a project, a numerix.toml at its root is found from a subfolder
    (repo / "numerix.toml").write_text('default_compiler = "repo"\n')
    os.chdir(repo / "src")
    assert nx.reload_config().default_compiler == "repo"
    assert src("default_compiler")["file"] == str(repo / "numerix.toml")
    # and in the working directory itself, whatever is around it
    os.chdir(clean_config)
    assert nx.reload_config().default_compiler == "shared"


def test_numerix_toml_and_tool_table_in_one_folder_is_an_error(clean_config: Path) -> None:
    (clean_config / "numerix.toml").write_text('default_compiler = "a"\n')
    (clean_config / "pyproject.toml").write_text('[tool.numerix]\ndefault_compiler = "b"\n')
    with pytest.raises(nx.ConfigError, match=r"both hold numerix settings; keep one"):
        nx.reload_config()


def test_numerix_config_names_a_file(
    tmp_path: Path, clean_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (clean_config / "numerix.toml").write_text('default_compiler = "project"\n')
    named = tmp_path / "elsewhere.toml"
    named.write_text('default_compiler = "named"\n')
    monkeypatch.setenv("NUMERIX_CONFIG", str(named))
    assert nx.reload_config().default_compiler == "named"
    assert src("default_compiler")["kind"] == "explicit"
    monkeypatch.setenv("NUMERIX_CONFIG", str(tmp_path / "missing.toml"))
    with pytest.raises(nx.ConfigError, match=r"NUMERIX_CONFIG=.*missing\.toml: no such file"):
        nx.reload_config()
    monkeypatch.setenv("NUMERIX_CONFIG", str(tmp_path))
    with pytest.raises(
        nx.ConfigError, match=r"^NUMERIX_CONFIG=.*: is a directory; point NUMERIX_CONFIG at a TOML"
    ):
        nx.reload_config()


def test_env_beats_files_and_numerix_config_says_so(
    user_file: Path,
    clean_config: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    user_file.write_text('default_compiler = "user"\n')
    (clean_config / "numerix.toml").write_text('default_compiler = "project"\n')
    monkeypatch.setenv("NUMERIX_DEFAULT_COMPILER", "env")
    assert nx.reload_config().default_compiler == "env"
    code, out, _ = cli(capsys, "config", "--json")
    assert code == 0
    row = next(r for r in json.loads(out)["values"] if r["key"] == "default_compiler")
    assert row["value"] == "env"
    assert row["source"]["kind"] == "env" and row["source"]["env"] == "NUMERIX_DEFAULT_COMPILER"
    monkeypatch.delenv("NUMERIX_DEFAULT_COMPILER")
    nx.reload_config()
    code, out, _ = cli(capsys, "config", "--json")
    row = next(r for r in json.loads(out)["values"] if r["key"] == "default_compiler")
    assert row["value"] == "project" and row["source"]["file"] == str(clean_config / "numerix.toml")


def test_nested_env_and_json_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NUMERIX_BACKENDS__BINARY__DEVICE", "cpu")
    monkeypatch.setenv("NUMERIX_COMPILER_OPTIONS", '{"unroll": 4}')
    s = nx.reload_config()
    assert s.compiler_options == {"unroll": 4}
    assert src("backends.binary.device")["env"] == "NUMERIX_BACKENDS__BINARY__DEVICE"
    assert src("compiler_options.unroll")["env"] == "NUMERIX_COMPILER_OPTIONS"


def test_bare_xla_and_libtorch_targets(monkeypatch: pytest.MonkeyPatch, clean_config: Path) -> None:
    (clean_config / "numerix.toml").write_text('xla_target = "rocm"\n')
    monkeypatch.setenv("XLA_TARGET", "CUDA12")
    monkeypatch.setenv("LIBTORCH_TARGET", "cu121")
    s = nx.reload_config()
    assert (s.xla_target, s.libtorch_target) == ("cuda12", "cu121")
    assert src("xla_target")["env"] == "XLA_TARGET"


def test_prefixed_target_variable_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NUMERIX_XLA_TARGET", "cuda12")
    with pytest.raises(nx.ConfigError, match=r"NUMERIX_XLA_TARGET: .*set XLA_TARGET instead"):
        nx.reload_config()


def test_context_beats_env_and_nests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NUMERIX_DEFAULT_COMPILER", "env")
    nx.reload_config()
    with nx.config(default_compiler="ctx1", compiler_options={"a": 1}) as s1:
        assert s1.default_compiler == "ctx1"
        assert configuration.settings().default_compiler == "ctx1"
        assert src("default_compiler")["kind"] == "context"
        with nx.config(compiler_options={"b": 2}) as s2:
            assert s2.default_compiler == "ctx1"
            assert s2.compiler_options == {"a": 1, "b": 2}
        assert configuration.settings().compiler_options == {"a": 1}
    assert configuration.settings().default_compiler == "env"


def test_arguments_beat_context() -> None:
    with nx.config(default_compiler="ctx"):
        assert configuration.load_settings(default_compiler="arg").default_compiler == "arg"
        assert configuration.load_settings().default_compiler == "ctx"


def test_context_is_local_to_a_thread() -> None:
    seen: list[str] = []
    with nx.config(default_compiler="main"):
        t = threading.Thread(target=lambda: seen.append(configuration.settings().default_compiler))
        t.start()
        t.join()
    assert seen == ["evaluator"]


def test_settings_are_read_once_then_reloaded(monkeypatch: pytest.MonkeyPatch) -> None:
    assert configuration.settings().default_compiler == "evaluator"
    monkeypatch.setenv("NUMERIX_DEFAULT_COMPILER", "later")
    assert configuration.settings().default_compiler == "evaluator"  # cached
    assert nx.reload_config().default_compiler == "later"
    assert configuration.settings().default_compiler == "later"


def test_reading_writes_no_file(tmp_path: Path, clean_config: Path) -> None:
    nx.reload_config()
    configuration.effective_values()
    assert not (tmp_path / "xdg").exists()
    assert list(clean_config.iterdir()) == []


# ---------------------------------------------------------------- effect on the default backend
def test_env_selects_the_default_backend(fakegpu: None, monkeypatch: pytest.MonkeyPatch) -> None:
    assert nx.get_default_backend().name == "binary"
    monkeypatch.setenv("NUMERIX_DEFAULT_BACKEND", "fakegpu")
    nx.reload_config()
    assert nx.get_default_backend() is nx.get_backend("fakegpu")
    assert nx.tensor([1.0]).backend.name == "fakegpu"


def test_backend_table_supplies_options(fakegpu: None, clean_config: Path) -> None:
    (clean_config / "numerix.toml").write_text(
        'default_backend = "fakegpu"\n[backends.fakegpu]\nmemory_fraction = 0.5\n'
    )
    nx.reload_config()
    assert nx.get_default_backend().options == {"device": "cpu", "memory_fraction": 0.5}


def test_context_and_global_defaults_beat_the_settings(fakegpu: None) -> None:
    with nx.config(default_backend="fakegpu"):
        assert nx.get_default_backend().name == "fakegpu"
        with nx.default_backend("binary"):
            assert nx.get_default_backend().name == "binary"
        nx.set_global_default_backend("binary")
        try:
            assert nx.get_default_backend().name == "binary"
        finally:
            assert nx.set_global_default_backend(None).name == "fakegpu"  # cleared
        assert nx.get_default_backend().name == "fakegpu"
    assert nx.get_default_backend().name == "binary"


def test_priority_list_picks_first_available(
    fakegpu: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NUMERIX_DEFAULT_BACKEND", "xla:cuda, fakegpu:cuda, binary, fakegpu")
    assert nx.reload_config().default_backend == ["xla:cuda", "fakegpu:cuda", "binary", "fakegpu"]
    assert nx.get_default_backend().name == "binary"
    with nx.config(default_backend=["fakegpu:cuda", "fakegpu:cpu", "binary"]):
        assert nx.get_default_backend().name == "fakegpu"


def test_priority_list_nothing_available(
    core_only: None, fakegpu: None, clean_config: Path
) -> None:
    (clean_config / "numerix.toml").write_text('default_backend = ["xla", "fakegpu:cuda"]\n')
    nx.reload_config()
    with pytest.raises(
        nx.ConfigError,
        match=r"numerix\.toml:1 \(project file, key default_backend\): default_backend: none of "
        r"the backends in the priority list is available: 'xla': not installed \("
        + re.escape(install_command("numerix-xla"))
        + r"\); 'fakegpu:cuda': not available on this machine\. Installed backends: "
        r"binary, fakegpu",
    ):
        nx.get_default_backend()


def test_unknown_backend_lists_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NUMERIX_DEFAULT_BACKEND", "bianry")
    nx.reload_config()
    with pytest.raises(
        nx.ConfigError,
        match=r"^environment variable NUMERIX_DEFAULT_BACKEND: default_backend: no backend named "
        r"'bianry'; installed backends: binary",
    ):
        nx.tensor([1])


def test_unknown_default_compiler_names_its_source(
    monkeypatch: pytest.MonkeyPatch, clean_config: Path
) -> None:
    x = nx.tensor([1.0])
    monkeypatch.setenv("NUMERIX_DEFAULT_COMPILER", "jaxjit")
    nx.reload_config()
    with pytest.raises(
        nx.ConfigError,
        match=r"^environment variable NUMERIX_DEFAULT_COMPILER: default_compiler: no compiler "
        r"named 'jaxjit'; compilers: evaluator",
    ):
        nx.jit(lambda t: t + 1)(x)
    monkeypatch.delenv("NUMERIX_DEFAULT_COMPILER")
    (clean_config / "numerix.toml").write_text('\ndefault_compiler = "jaxjit"\n')
    nx.reload_config()
    with pytest.raises(
        nx.ConfigError,
        match=r"numerix\.toml:2 \(project file, key default_compiler\): default_compiler: no "
        r"compiler named 'jaxjit'",
    ):
        nx.jit(lambda t: t + 1)(x)
    with pytest.raises(
        nx.ConfigError,
        match=r"^numerix\.config\(\) context: default_compiler: 'binary' is a backend, not a "
        r"compiler",
    ):
        with nx.config(default_compiler="binary"):
            nx.jit(lambda t: t + 1)(x)
    # a compiler named in the call is the call's own mistake
    with pytest.raises(nx.ArgumentError, match=r"^jit: no compiler named 'jaxjit'"):
        nx.jit(lambda t: t + 1, compiler="jaxjit")(x)


def test_only_the_environment_changes_where_a_script_runs(tmp_path: Path) -> None:
    (tmp_path / "numerix_cfg_probe.py").write_text(
        textwrap.dedent("""
        from typing import ClassVar
        from numerix_binary.backend import BinaryBackend
        class Probe(BinaryBackend):
            name = "probe"
            default_options: ClassVar[dict] = {"device": "cpu"}
    """)
    )
    script = textwrap.dedent("""
        import numerix as nx
        nx.register_backend("probe", "numerix_cfg_probe:Probe")
        print(nx.tensor([1.0, 2.0]).backend.name)
    """)
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.upper().startswith("NUMERIX_") and k not in ("XLA_TARGET", "LIBTORCH_TARGET")
    }
    base.update(PYTHONPATH=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "xdg"))

    def run(**env: str) -> str:
        r = subprocess.run(
            [sys.executable, "-c", script],
            env={**base, **env},
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
        )
        return r.stdout.strip()

    assert run() == "binary"
    assert run(NUMERIX_DEFAULT_BACKEND="probe") == "probe"
    assert run(NUMERIX_DEFAULT_BACKEND="xla:cuda,probe") == "probe"


def test_reading_settings_imports_no_heavy_library(tmp_path: Path) -> None:
    code = textwrap.dedent("""
        import sys, numerix
        numerix.tensor([1])
        light = 'pydantic' not in sys.modules  # nothing configured: defaults, no pydantic
        numerix.reload_config()
        from numerix.configuration import effective_values; effective_values()
        print(light, sorted(m for m in ('jax', 'torch') if m in sys.modules))
    """)
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("NUMERIX_")}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "xdg"), XLA_TARGET="cuda12")
    env.pop("XLA_TARGET")
    r = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert r.stdout.split() == ["True", "[]"]


# ---------------------------------------------------------------- bad configuration
def test_malformed_toml_names_file_and_line(clean_config: Path) -> None:
    (clean_config / "numerix.toml").write_text('default_compiler = "x"\n\ndefault_backend = [\n')
    with pytest.raises(
        nx.ConfigError,
        match=r"numerix\.toml:3: malformed TOML \(line 3, at the "
        r"end of the file\): Invalid value$",
    ):
        nx.reload_config()
    (clean_config / "numerix.toml").write_text("\ndefault_compiler = evaluator\n")
    with pytest.raises(
        nx.ConfigError,
        match=r"numerix\.toml:2: malformed TOML \(line 2, column 20\): "
        r"Invalid value$",
    ):
        nx.reload_config()


@pytest.mark.parametrize("depth", [40, 5000])
def test_deeply_nested_toml_names_the_file(clean_config: Path, depth: int) -> None:
    f = clean_config / "numerix.toml"
    f.write_text("\ndefault_backend = " + "[" * depth + "]" * depth + "\n")
    with pytest.raises(nx.ConfigError, match=r"numerix\.toml(:2 \(key default_backend\))?: .*nest"):
        nx.reload_config()
    f.write_text("[backends.binary]\ndevice = " + "{a = " * depth + "1" + "}" * depth + "\n")
    with pytest.raises(
        nx.ConfigError,
        match=r"numerix\.toml(:2 \(key backends\.binary\.device\.a\.a\.a\.…\))?: .*nest",
    ):
        nx.tensor([1.0])


def test_deeply_nested_json_in_the_environment_or_a_context(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for depth in (40, 5000):
        monkeypatch.setenv("NUMERIX_COMPILER_OPTIONS", '{"a": ' + "[" * depth + "]" * depth + "}")
        with pytest.raises(
            nx.ConfigError, match=r"^environment variable NUMERIX_COMPILER_OPTIONS: .*nest"
        ):
            nx.reload_config()
    deep: dict[str, Any] = {}
    for _ in range(40):
        deep = {"a": deep}
    with pytest.raises(nx.ConfigError, match=r"^numerix\.config\(\) context: compiler_options\.a"):
        with nx.config(compiler_options=deep):
            pass


_SPEEDUPS_PROBE = """
import os, sys
try:
    import numerix
except Exception as e:
    print(type(e).__module__ + "." + type(e).__name__ + ": " + str(e))
    os.environ["NUMERIX_SPEEDUPS"] = "0"  # fixed: the same process imports numerix
    import numerix
print(numerix._tensor.SPEEDUPS_TURNED_OFF, (numerix.tensor([1.0]) * 2).tolist())
"""


@pytest.mark.parametrize(
    ("value", "off"),
    [("0", True), ("off", True), (" False ", True), ("1", False), ("yes", False), ("", False)],
)
def test_numerix_speedups_accepts_the_switches(value: str, off: bool) -> None:
    env = {**os.environ, "NUMERIX_SPEEDUPS": value}
    r = subprocess.run([sys.executable, "-c", _SPEEDUPS_PROBE], env=env, capture_output=True,
                       text=True, timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[0] == f"{off} [2.0]"


def test_numerix_speedups_refuses_other_values_at_import_naming_the_variable() -> None:
    env = {**os.environ, "NUMERIX_SPEEDUPS": "maybe"}
    r = subprocess.run([sys.executable, "-c", _SPEEDUPS_PROBE], env=env, capture_output=True,
                       text=True, timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr
    error, after = r.stdout.splitlines()
    assert error == (
        "numerix.errors.ConfigError: environment variable NUMERIX_SPEEDUPS='maybe': not a "
        "switch; use 0 (or false, no, off) to turn the compiled fast path off, 1 (or true, "
        "yes, on) or unset it to keep it on"
    )
    assert after == "True [2.0]"


@pytest.mark.parametrize("where", ["project", "user"])
def test_a_config_file_that_is_a_directory_is_an_error(
    clean_config: Path, user_file: Path, where: str
) -> None:
    d = clean_config / "numerix.toml" if where == "project" else user_file
    d.mkdir()
    with pytest.raises(
        nx.ConfigError,
        match=rf"^{re.escape(str(d))}: is a directory, where numerix reads its {where} file; "
        r"remove or rename it",
    ):
        nx.tensor([1.0])


def test_unknown_key_in_a_file_suggests_the_closest(clean_config: Path) -> None:
    (clean_config / "pyproject.toml").write_text(
        '[tool.numerix]\ndefault_compiler = "evaluator"\n\n[tool.numerix.backends.binary]\ndevcie = "cpu"\n'
    )
    with pytest.raises(
        nx.ConfigError,
        match=r"pyproject\.toml:5 \(project file, key tool\.numerix\.backends\.binary\.devcie\): "
        r"backends\.binary\.devcie: unknown key 'devcie'; did you mean 'device'\?",
    ):
        nx.reload_config()


def test_unknown_top_level_key_in_a_file(user_file: Path) -> None:
    user_file.write_text('default_backnd = "binary"\n')
    with pytest.raises(
        nx.ConfigError,
        match=r"config\.toml:1 \(user file, key default_backnd\): "
        r"default_backnd: unknown key 'default_backnd'; did you mean 'default_backend'\?",
    ):
        nx.reload_config()


def test_unknown_backend_table_lists_the_installed(clean_config: Path) -> None:
    (clean_config / "numerix.toml").write_text("[backends.bniary]\ndevice = 'cpu'\n")
    with pytest.raises(
        nx.ConfigError,
        match=r"unknown key 'bniary'; did you mean 'binary'\?.*"
        r"all installed backends: binary",
    ):
        nx.reload_config()


def test_table_of_a_known_plugin_not_installed_warns(core_only: None, clean_config: Path) -> None:
    (clean_config / "numerix.toml").write_text("[backends.xla]\nmemory_fraction = 0.5\n")
    with pytest.warns(
        configuration.ConfigWarning,
        match=r"numerix\.toml:1 .*the 'xla' backend "
        r"is not installed.*" + re.escape(install_command("numerix-xla")),
    ):
        nx.reload_config()


def test_unknown_nested_env_var_suggests_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NUMERIX_BACKENDS__BINARY__DEVCE", "cpu")
    with pytest.raises(
        nx.ConfigError,
        match=r"^environment variable NUMERIX_BACKENDS__BINARY__DEVCE: backends\.binary\.devce: "
        r"unknown key 'devce'; did you mean NUMERIX_BACKENDS__BINARY__DEVICE\?",
    ):
        nx.reload_config()


def test_unknown_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NUMERIX_DEFAULT_BACKEN", "binary")
    with pytest.raises(
        nx.ConfigError,
        match=r"^environment variable NUMERIX_DEFAULT_BACKEN: "
        r"unknown key 'default_backen'; did you mean NUMERIX_DEFAULT_BACKEND\?",
    ):
        nx.reload_config()


def test_wrong_type_in_a_file(clean_config: Path) -> None:
    (clean_config / "numerix.toml").write_text("\ndefault_backend = 3\n")
    with pytest.raises(
        nx.ConfigError,
        match=r"numerix\.toml:2 \(project file, key default_backend\): "
        r"default_backend: expected a backend name, a 'name:client:device' string "
        r"or a list of them, got int 3",
    ):
        nx.reload_config()


def test_wrong_value_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NUMERIX_BACKENDS__BINARY__DEVICE", "cuda")
    with pytest.raises(
        nx.ConfigError,
        match=r"^environment variable NUMERIX_BACKENDS__BINARY__DEVICE: "
        r"backends\.binary\.device: Input should be 'cpu' \(got 'cuda'\)",
    ):
        nx.reload_config()


def test_out_of_range_and_wrong_type_in_a_plugin_table(
    fakegpu: None, clean_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (clean_config / "numerix.toml").write_text("[backends.fakegpu]\nmemory_fraction = 1.5\n")
    with pytest.raises(
        nx.ConfigError,
        match=r"numerix\.toml:2 .*backends\.fakegpu\.memory_fraction: "
        r"Input should be less than or equal to 1 \(got 1\.5\)",
    ):
        nx.reload_config()
    monkeypatch.setenv("NUMERIX_BACKENDS__FAKEGPU__MEMORY_FRACTION", "half")
    with pytest.raises(
        nx.ConfigError,
        match=r"NUMERIX_BACKENDS__FAKEGPU__MEMORY_FRACTION: "
        r"backends\.fakegpu\.memory_fraction: Input should be a valid number",
    ):
        nx.reload_config()


def test_empty_priority_list_and_bad_json(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(
        nx.ConfigError, match=r"call argument: default_backend: the priority list is empty"
    ):
        configuration.load_settings(default_backend=[])
    monkeypatch.setenv("NUMERIX_COMPILER_OPTIONS", "{not json")
    with pytest.raises(
        nx.ConfigError, match=r"NUMERIX_COMPILER_OPTIONS: compiler_options: cannot read"
    ):
        nx.reload_config()


def test_bad_context_is_refused_on_entry() -> None:
    with pytest.raises(
        nx.ConfigError,
        match=r"numerix\.config\(\) context: default_compilr: "
        r"unknown key 'default_compilr'; did you mean 'default_compiler'\?",
    ):
        with nx.config(default_compilr="x"):
            pass


# ---------------------------------------------------------------- CLI
def test_config_table(
    core_only: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NUMERIX_DEFAULT_BACKEND", "binary")
    nx.reload_config()
    code, out, _ = cli(capsys, "config")
    assert code == 0
    assert "default_backend" in out and "environment variable NUMERIX_DEFAULT_BACKEND" in out
    assert "backends.binary.device" in out and "default" in out


def test_config_with_bad_configuration_exits_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NUMERIX_DEFAULT_BACKEN", "binary")
    code, _, err = cli(capsys, "config", "--json")
    assert code == 2 and "NUMERIX_DEFAULT_BACKEN" in err


def test_doctor_clean(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "doctor")
    assert code == 0 and "no problems found" in out
    code, out, _ = cli(capsys, "doctor", "--json")
    assert code == 0 and json.loads(out)["problems"] == []


def test_doctor_xla_target_without_numerix_xla(
    core_only: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XLA_TARGET", "cuda12")
    monkeypatch.setenv("NUMERIX_DEFAULT_BACKEND", "torch")
    code, out, _ = cli(capsys, "doctor", "--json")
    assert code == 1
    fixes = [p["fix"] for p in json.loads(out)["problems"]]
    # the install commands take the form numerix was installed in (here: a checkout)
    from numerix.plugins import install_command

    assert fixes == [install_command("numerix-torch"), install_command("numerix-xla", "cuda12")]
    assert "numerix-xla[cuda12]" in fixes[1] or "backend-xla[cuda12]" in fixes[1]
    code, out, _ = cli(capsys, "doctor")
    assert code == 1 and f"fix: {fixes[1]}" in out


def test_doctor_reports_invalid_configuration(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LIBTORCH_TARGET", "cu999")
    monkeypatch.setenv("NUMERIX_DEFAULT_BACKEN", "binary")
    code, out, _ = cli(capsys, "doctor", "--json")
    assert code == 1
    problems = json.loads(out)["problems"]
    assert problems[0]["fix"] == "unset NUMERIX_DEFAULT_BACKEN   # or correct its value"
    monkeypatch.delenv("NUMERIX_DEFAULT_BACKEN")
    _forget()
    code, out, _ = cli(capsys, "doctor", "--json")
    assert code == 1
    assert "LIBTORCH_TARGET=cu999: not a target numerix-torch is built for" in out


def test_doctor_reports_an_uninstalled_plugin_table(
    core_only: None, capsys: pytest.CaptureFixture[str], clean_config: Path
) -> None:
    (clean_config / "numerix.toml").write_text("[backends.torch]\ndevice = 'cuda'\n")
    code, out, _ = cli(capsys, "doctor", "--json")
    assert code == 1
    from numerix.plugins import install_command

    assert json.loads(out)["problems"][0]["fix"] == install_command("numerix-torch")


# ---------------------------------------------------------------- plugins and docs
def test_binary_contributes_its_settings_model() -> None:
    from numerix.plugins import settings_models

    model, dist = settings_models()["binary"]
    assert dist == "numerix-binary"
    assert model.model_config.get("extra") == "forbid"


def test_settings_model_registered_twice_needs_replace(fakegpu: None) -> None:
    with pytest.raises(nx.PluginError, match=r"settings for 'fakegpu' are already registered"):
        register_settings_model("fakegpu", FakeGPUSettings)


def test_configuration_reference_matches_the_models() -> None:
    page = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    sys.path.insert(0, str(REPO / "docs"))
    try:
        import gen_config_reference as gen
    finally:
        sys.path.remove(str(REPO / "docs"))
    assert gen.render(page) == page, (
        "docs/configuration.md is stale: run docs/gen_config_reference.py"
    )
    for key in (
        "default_backend",
        "default_compiler",
        "compiler_options",
        "xla_target",
        "libtorch_target",
        "backends.binary.device",
    ):
        assert f"| `{key}` |" in page


def test_doctor_asks_the_installed_build_about_the_target(
    core_only: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from numerix_binary.backend import BinaryBackend

    class WrongBuild(BinaryBackend):
        name = "torch"

        @classmethod
        def check_target(cls, target: str) -> tuple[str, str] | None:
            return (
                f"LIBTORCH_TARGET={target}, but this is the cpu build",
                "install the cu128 build",
            )

    nx.register_backend("torch", WrongBuild, replace=True)
    try:
        monkeypatch.setenv("LIBTORCH_TARGET", "cu128")
        code, out, _ = cli(capsys, "doctor", "--json")
        assert code == 1
        problems = json.loads(out)["problems"]
        assert problems == [
            {"problem": "LIBTORCH_TARGET=cu128, but this is the cpu build",
             "fix": "install the cu128 build"}
        ]  # fmt: skip
    finally:
        nx.unregister_backend("torch")


def test_very_long_environment_values_are_cut_in_errors(
    clean_config: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    long = "x" * 3000
    # a name longer than the file system allows is a config error, not an OSError
    monkeypatch.setenv("NUMERIX_CONFIG", long)
    with pytest.raises(nx.ConfigError, match=r"cannot be used as a file name") as e:
        nx.reload_config()
    assert len(str(e.value)) < 300 and "…(3016 characters)" in str(e.value)
    monkeypatch.delenv("NUMERIX_CONFIG")
    monkeypatch.setenv("NUMERIX_DEFAULT_BACKEND", long)
    with pytest.raises(nx.ConfigError, match=r"NUMERIX_DEFAULT_BACKEND") as e:
        nx.reload_config()
        nx.zeros(2)
    assert len(str(e.value)) < 400 and re.search(r"x…\(300\d characters\)", str(e.value))
    code, out, _ = cli(capsys, "config")
    assert code == 0 and "NUMERIX_DEFAULT_BACKEND" in out
    assert "x" * 200 not in "".join(out.split())  # the table cell is cut too


def test_clip_long_words_keeps_ordinary_messages() -> None:
    msg = "add: shapes (2, 3) and (4,) cannot be broadcast; see /usr/lib/python3/numerix.toml"
    assert nx.errors.clip_long_words(msg) == msg
    assert str(nx.NumerixError(msg)) == msg
    cut = nx.errors.clip_long_words("a " + "y" * 121 + " b")
    assert cut == "a " + "y" * 60 + "…(121 characters) b"
