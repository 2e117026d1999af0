"""``numerix bench mlp``, ``softmax`` and ``run``: every backend × compiler pair has its
row, every row's result is checked before it is timed, the winner is a row of the table,
and the user's mistakes get one line and exit 2. Runs are short (``--time``); no test
asserts a speed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from numerix.cli import main
from numerix.plugins import backend_class, register_backend, unregister_backend

QUICK = ["--time", "0.02", "--warmup", "0"]


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _rows(data: dict[str, Any]) -> set[tuple[str, str | None]]:
    return {(s["job"], s["input"]) for s in data["scenarios"]}


# ---------------------------------------------------------------- mlp
def test_bench_mlp_json_has_init_and_predict_for_every_pair(
    core_only: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "bench", "mlp", *QUICK, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert _rows(data) == {
        (job, case)
        for job in ("binary + eager", "binary + evaluator")
        for case in ("init", "predict")
    }
    for s in data["scenarios"]:
        assert s["checked"] is True and s["median_s"] > 0 and s["backend"] == "binary:cpu"
        assert s["compiler"] == (None if s["job"].endswith("eager") else "evaluator")
    assert data["failed"] == [] and data["input_shape"] == [2, 18] and data["key"] == 1701
    assert data["seeds"]["exla_vs_evaluator"] == {"init": 55.06, "predict": 8.79}
    fastest = {f["input"]: f for f in data["fastest"]}
    assert set(fastest) == {"init", "predict"}
    for case, f in fastest.items():
        assert (f["fastest"], case) in _rows(data) and f["times_faster"] >= 1


def test_bench_mlp_table_puts_the_seeds_beside_numerix(
    core_only: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    page = tmp_path / "mlp.html"
    code, out, _ = run_cli(capsys, "bench", "mlp", *QUICK, "--html", str(page))
    assert code == 0
    assert "##### With input init #####" in out and "##### With input predict #####" in out
    m = re.search(r"^predict: fastest: (binary \+ \w+), ([0-9.]+)× faster than (binary \+ \w+)$",
                  out, re.M)  # fmt: skip
    assert m is not None and {m.group(1), m.group(3)} == {"binary + eager", "binary + evaluator"}
    assert "EXLA init 55×, predict 8.8× faster than the pure evaluator" in out
    assert re.search(r"^  binary \+ eager: init [0-9.]+× (faster|slower), predict", out, re.M)
    html = page.read_text(encoding="utf-8")
    assert html.count("<svg") == 4 and "binary + evaluator" in html  # two charts per case
    assert f"report: {page}" in out


def test_bench_mlp_init_is_the_seeds_model(core_only: None) -> None:
    import numerix as nx
    from numerix import cli

    params = cli.mlp_init(nx.random.key(1701))
    w0 = params["dense_0"]["kernel"].to_numpy()
    assert w0.shape == (18, 32) and np.abs(w0).max() <= np.sqrt(6 / 50)
    assert params["dense_1"]["kernel"].shape == (32, 1)
    assert params["dense_0"]["bias"].to_numpy().tolist() == [0.0] * 32
    x = nx.random.uniform(nx.random.key(1701), (2, 18))
    assert cli.mlp_predict(params, x).to_numpy().tolist() == [[1.0], [1.0]]  # one unit


# ---------------------------------------------------------------- softmax
def test_bench_softmax_rows_and_html(
    core_only: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    page = tmp_path / "softmax.html"
    code, out, _ = run_cli(capsys, "bench", "softmax", *QUICK, "--size", "32", "--json",
                           "--html", str(page))  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert _rows(data) == {("binary + eager", "f32[32][32]"), ("binary + evaluator", "f32[32][32]")}
    assert data["shape"] == [32, 32] and all(s["checked"] for s in data["scenarios"])
    assert "<svg" in page.read_text(encoding="utf-8")


def test_bench_softmax_reports_a_wrong_answer_instead_of_timing_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = backend_class("binary")

    class WrongExp(base):  # type: ignore[misc, valid-type]
        name = "wrongexp"
        __slots__ = ()

        def exp(self, out: Any, x: Any) -> Any:
            out.data = np.ones(out.shape, dtype=np.float32)
            return out

    register_backend("wrongexp", WrongExp)
    try:
        code, out, err = run_cli(capsys, "bench", "softmax", *QUICK, "--size", "8", "--json",
                                 "--backends", "wrongexp,binary", "--compilers", "eager")  # fmt: skip
        assert code == 1
        data = json.loads(out)
        assert _rows(data) == {("binary + eager", "f32[8][8]")}  # the wrong row is not timed
        (bad,) = data["failed"]
        assert bad["name"] == "wrongexp + eager" and "max abs error" in bad["error"]
        assert "bench softmax: wrongexp + eager (f32[8][8]): the result: max abs error" in err
    finally:
        unregister_backend("wrongexp")


def test_bench_compilers_filter_and_unknown_names(
    core_only: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(capsys, "bench", "softmax", *QUICK, "--size", "8", "--json",
                           "--compilers", "evaluator", "--backend", "binary")  # fmt: skip
    assert code == 0 and {j for j, _ in _rows(json.loads(out))} == {"binary + evaluator"}
    code, out, err = run_cli(capsys, "bench", "mlp", "--compilers", "evaluator,nope")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "unknown compiler 'nope'" in err and "installed compilers are evaluator" in err
    code, _, err = run_cli(capsys, "bench", "softmax", "--backends", "binary,nope")
    assert code == 2 and "no backend named 'nope'" in err and "binary" in err


def test_bench_auto_is_a_row_when_asked_for(
    core_only: None, capsys: pytest.CaptureFixture[str]
) -> None:
    # not a compiler plugin: never a row by default, one per backend when named
    code, out, _ = run_cli(capsys, "bench", "softmax", *QUICK, "--size", "8", "--json",
                           "--backend", "binary")  # fmt: skip
    assert code == 0 and "binary + auto" not in {j for j, _ in _rows(json.loads(out))}
    code, out, _ = run_cli(capsys, "bench", "softmax", *QUICK, "--size", "8", "--json",
                           "--compilers", "eager,auto", "--backend", "binary")  # fmt: skip
    data = json.loads(out)
    assert code == 0 and {j for j, _ in _rows(data)} == {"binary + eager", "binary + auto"}
    assert all(s["checked"] for s in data["scenarios"])


def test_bench_a_compiler_serving_none_of_the_backends(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("numerix_xla")
    code, out, err = run_cli(capsys, "bench", "softmax", "--backend", "binary",
                             "--compilers", "xla")  # fmt: skip
    assert code == 2 and out == ""
    assert "no backend × compiler pair to time: xla serves none of binary(cpu)" in err


def test_bench_help_lists_the_benchmarks(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "bench", "--help")
    assert code == 0
    for name in ("matmul", "mlp", "softmax", "run"):
        assert re.search(rf"^    {name} ", out, re.M), out
    code, out, _ = run_cli(capsys, "bench", "run", "--help")
    for option in ("--inputs", "--json", "--html", "--time", "--warmup", "--backends",
                   "--backend", "--compilers"):  # fmt: skip
        assert option in out
    code, _, err = run_cli(capsys, "bench", "mlp", "--time", "0")
    assert code == 2 and "--time" in err


# ---------------------------------------------------------------- run
USER_FILE = """
import numpy as np
import numerix as nx

calls = []

def f(x):
    calls.append(1)
    return nx.tanh(x) * 2 + nx.sum(x)

def no_args():
    return nx.ones((4,)) * 3

INPUTS = {"small": np.ones((4, 4), np.float32), "large": np.ones((64, 64), np.float32)}

def make_inputs():
    return {"only": np.full((3,), 0.5, np.float32)}

NUMBER = 3

def a_list():
    return [1, 2]
"""


@pytest.fixture
def user_file(tmp_path: Path) -> Path:
    path = tmp_path / "model.py"
    path.write_text(USER_FILE, encoding="utf-8")
    return path


def test_bench_run_times_every_pair_and_names_the_winner(
    core_only: None, capsys: pytest.CaptureFixture[str], user_file: Path
) -> None:
    code, out, err = run_cli(capsys, "bench", "run", f"{user_file}:f", "--inputs",
                             f"{user_file}:INPUTS", *QUICK)  # fmt: skip
    assert code == 0, err
    table = {ln.split("  ")[0].strip() for ln in out.splitlines() if ln.startswith("binary")}
    assert table == {"binary + eager", "binary + evaluator"}
    winners = re.findall(r"^(small|large): fastest: (.+), ([0-9.]+)× faster than (.+)$", out, re.M)
    assert [w[0] for w in winners] == ["small", "large"]
    for _, best, ratio, slowest in winners:
        assert {best, slowest} == table and float(ratio) >= 1


def test_bench_run_inputs_from_a_function_and_no_inputs(
    core_only: None, capsys: pytest.CaptureFixture[str], user_file: Path
) -> None:
    code, out, _ = run_cli(capsys, "bench", "run", f"{user_file}:f", "--inputs",
                           f"{user_file}:make_inputs", *QUICK, "--json")  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert {i for _, i in _rows(data)} == {"only"} and len(data["scenarios"]) == 2
    code, out, _ = run_cli(capsys, "bench", "run", f"{user_file}:no_args", *QUICK, "--json")
    assert code == 0
    data = json.loads(out)
    assert _rows(data) == {("binary + eager", None), ("binary + evaluator", None)}
    assert data["fastest"][0]["fastest"] in {"binary + eager", "binary + evaluator"}


@pytest.mark.parametrize(
    "target, inputs, message",
    [
        ("missing.py:f", None, "no file"),
        ("{file}:nope", None, "has no 'nope'; it defines a_list, f, make_inputs, no_args"),
        ("{file}:NUMBER", None, "is not callable (of type int); name a function"),
        ("{file}", None, "must be FILE.py:NAME"),
        ("{file}:f", "{file}:a_list", "must be a non-empty dict name -> argument"),
        ("{file}:f", "{file}:NUMBER", "got int"),
        ("{broken}:f", None, "importing"),
    ],
)
def test_bench_run_mistakes_are_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
    user_file: Path,
    target: str,
    inputs: str | None,
    message: str,
) -> None:
    broken = user_file.with_name("broken.py")
    broken.write_text("raise RuntimeError('no model here')\n", encoding="utf-8")
    fmt = {"file": user_file, "broken": broken}
    argv = ["bench", "run", target.format(**fmt), *QUICK]
    if inputs is not None:
        argv += ["--inputs", inputs.format(**fmt)]
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("numerix: error: bench run: ") and message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_bench_run_flags_a_pair_whose_result_differs(
    capsys: pytest.CaptureFixture[str], user_file: Path
) -> None:
    base = backend_class("binary")

    class WrongTanh(base):  # type: ignore[misc, valid-type]
        name = "wrongtanh"
        __slots__ = ()

        def tanh(self, out: Any, x: Any) -> Any:
            out.data = np.zeros(out.shape, dtype=np.float32)
            return out

    register_backend("wrongtanh", WrongTanh)
    try:
        code, out, err = run_cli(capsys, "bench", "run", f"{user_file}:f", "--inputs",
                                 f"{user_file}:make_inputs", "--backends", "binary,wrongtanh",
                                 "--compilers", "eager", *QUICK, "--json")  # fmt: skip
        assert code == 1
        data = json.loads(out)
        assert _rows(data) == {("binary + eager", "only")}
        assert "differs from the first row's result" in data["failed"][0]["error"]
        assert "wrongtanh + eager (only)" in err
    finally:
        unregister_backend("wrongtanh")


# ---------------------------------------------------------------- with xla and torch
@pytest.mark.parametrize("plugin, backend, compiler", [("numerix_xla", "xla", "xla"),
                                                       ("numerix_torch", "torch", "torch")])  # fmt: skip
def test_bench_softmax_on_an_accelerated_backend_and_its_compiler(
    capsys: pytest.CaptureFixture[str], plugin: str, backend: str, compiler: str
) -> None:
    pytest.importorskip(plugin)
    code, out, err = run_cli(capsys, "bench", "softmax", *QUICK, "--size", "16", "--json",
                             "--backends", f"binary,{backend}")  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    jobs = {j for j, _ in _rows(data)}
    assert {f"{backend} + eager", f"{backend} + evaluator", f"{backend} + {compiler}",
            "binary + eager", "binary + evaluator"} == jobs  # fmt: skip
    own = next(s for s in data["scenarios"] if s["job"] == f"{backend} + {compiler}")
    assert own["compiler"] == compiler and own["backend"].startswith(f"{backend}:")
    # a CPU device: the backend cannot tell its device memory
    assert own["device_memory_bytes"] is None
