"""The ``numerix`` command line: ``numerix info`` and ``numerix bench matmul``.

Benchmarks run on a small x (``--rows``) with few repeats; no test asserts a timing
beyond "it is positive".
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any, ClassVar

import numpy as np
import pytest

import numerix
from numerix.cli import main
from numerix.plugins import register_backend, unregister_backend

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


class _Unloadable(numerix.Backend):
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
    code, out, _ = run_cli(capsys, *BENCH)
    assert code == 0
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

        @classmethod
        def bench_raw_matmul(cls, x_np: np.ndarray, w_np: np.ndarray) -> Any:
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
        assert rows["rawlib (raw)"]["peak_memory_bytes"] is None  # only host backends are measured
        assert len(calls) == 1 + 1 + 2  # check, warm-up, two timed runs
    finally:
        unregister_backend("hooked")
