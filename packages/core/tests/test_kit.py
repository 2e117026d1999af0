"""The conformance kit tested on itself: it passes a correct backend (numerix-binary runs
it in full) and fails a deliberately wrong one with a readable report."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from numerix.testing import plugin as kit_plugin

BROKEN_CONFTEST = textwrap.dedent('''
    import os

    import numpy as np
    import pytest

    import numerix as nx
    from numerix_binary.backend import BinaryBackend


    class WrongBackend(BinaryBackend):
        """Two classic backend bugs, and a dtype it does not claim."""

        name = "wrong"
        supported_dtypes = frozenset(d for d in nx.dtypes.ALL_DTYPES if d is not nx.complex128)

        def add(self, out, x1, x2):
            # computes float32 additions in float64 and hands back the wider array
            r = np.add(x1.data, x2.data)
            out.data = r.astype(np.float64) if r.dtype == np.float32 else np.asarray(r)
            return out

        def exp(self, out, x):
            # rounds differently: a relative error of 1e-3
            super().exp(out, x)
            out.data = (out.data * (1 + 1e-3)).astype(out.data.dtype)
            return out

        @classmethod
        def clear_caches(cls):
            # the kit calls it between ops; the test run counts the calls
            if "KIT_CLEARS_FILE" in os.environ:
                with open(os.environ["KIT_CLEARS_FILE"], "a") as f:
                    f.write("clear\\n")


    nx.register_backend("wrong", WrongBackend, replace=True)


    @pytest.fixture(scope="session")
    def numerix_backend():
        return "wrong"
''')


def _run_kit(d: Path, *options: str, env: dict[str, str] | None = None) -> Any:
    (d / "conftest.py").write_text(BROKEN_CONFTEST)
    (d / "test_conformance.py").write_text("from numerix.testing.suite import *  # noqa: F403\n")
    (d / "pytest.ini").write_text("[pytest]\n")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rN", *options,
         "-k", "test_binary_one_dtype or test_unary", str(d)],
        capture_output=True, text=True, cwd=d, timeout=600, env=env,
    )  # fmt: skip


@pytest.fixture(scope="module")
def wrong_run(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    return _run_kit(tmp_path_factory.mktemp("wrong_backend"))


@pytest.fixture(scope="module")
def wrong_run_xdist(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[subprocess.CompletedProcess[str], Path]:
    # two workers, every case of an op on one of them, caches cleared every 50 tests
    d = tmp_path_factory.mktemp("wrong_backend_xdist")
    clears = d / "clears.txt"
    env = {**os.environ, "KIT_CLEARS_FILE": str(clears)}
    run = _run_kit(
        d, "-n", "2", "--dist", "loadgroup", "-o", "numerix_clear_caches_every=50", env=env
    )
    return run, clears


def test_wrong_backend_fails_the_kit(wrong_run: subprocess.CompletedProcess[str]) -> None:
    assert wrong_run.returncode == 1, wrong_run.stdout[-3000:]


def test_report_names_the_wrong_dtype(wrong_run: subprocess.CompletedProcess[str]) -> None:
    # the kit's rule check ([debug] check_rules) names it at the kernel, before any value
    # is compared
    assert re.search(
        r"add on .*: the kernel's native array has shape \(\d*,?\d*\) and dtype float64 "
        r"but the rules give shape \(\d*,?\d*\) and dtype float32",
        wrong_run.stdout,
    ), wrong_run.stdout[-3000:]


def test_report_names_the_rounding(wrong_run: subprocess.CompletedProcess[str]) -> None:
    assert "Not equal to tolerance" in wrong_run.stdout


def _summary(out: str) -> dict[str, tuple[int, int, int]]:
    rows = {}
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if "numerix conformance kit" in ln)
    for ln in lines[start + 2 :]:
        parts = ln.split()
        if len(parts) == 4 and parts[1].isdigit():
            rows[parts[0]] = (int(parts[1]), int(parts[2]), int(parts[3]))
        if parts and parts[0] == "total":
            break
    return rows


def test_summary_per_op(wrong_run: subprocess.CompletedProcess[str]) -> None:
    rows = _summary(wrong_run.stdout)
    passed, failed, not_claimed = rows["add"]
    assert passed > 0 and failed > 0 and not_claimed > 0  # int adds pass; f32 adds fail
    assert rows["exp"][1] > 0
    # the ops it implements correctly pass; only tests exercising add or exp fail
    # (unary_special_values checks exp(inf), exp(-inf), exp(nan) among others)
    assert rows["subtract"][1] == 0 and rows["subtract"][0] > 0
    assert rows["sqrt"][1] == 0 and rows["sqrt"][0] > 0
    failing = {op for op, r in rows.items() if r[1] and op != "total"}
    assert failing == {"add", "exp", "unary_special_values"}


def test_summary_is_the_same_under_xdist(
    wrong_run: subprocess.CompletedProcess[str],
    wrong_run_xdist: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    # the workers' reports reach the controller, which prints the same table
    run, _ = wrong_run_xdist
    assert run.returncode == 1, run.stdout[-3000:]
    assert _summary(run.stdout) == _summary(wrong_run.stdout)


def test_kit_clears_the_backends_caches(
    wrong_run_xdist: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    run, clears = wrong_run_xdist
    # about 2,000 cases in groups of one op, a clear at the first op change after 50
    n = len(clears.read_text().split()) if clears.exists() else 0
    assert n >= 10, run.stdout[-2000:]


def test_caches_are_cleared_only_when_the_op_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    clearing = kit_plugin._Clearing(3)
    monkeypatch.setattr(kit_plugin, "clear_caches", lambda: calls.append(clearing.op or ""))
    for op in ["add", "add", "add", "add", "exp", "exp", "sum", "sum", "sum", "sum", "sum"]:
        clearing.before(op)
    # after 4 adds (>= 3) at the change to exp; then exp, exp, sum: 2 since, no clear at
    # sum; the 5 sums that follow are one op, so no clear either
    assert calls == ["add"]
    never = kit_plugin._Clearing(0)
    for op in ["a", "b", "c"] * 10:
        never.before(op)
    assert calls == ["add"]


def test_caches_are_cleared_when_the_process_grows(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    size = [100 << 20]
    monkeypatch.setattr(kit_plugin, "_resident", lambda: size[0])
    monkeypatch.setattr(kit_plugin, "_release_memory", lambda: calls.append("released"))
    monkeypatch.setattr(kit_plugin, "clear_caches", lambda: calls.append("cleared"))
    clearing = kit_plugin._Clearing(1000, memory=1 << 30)
    clearing.before("add")
    size[0] += 1 << 30  # exactly the limit: not past it
    clearing.before("add")
    assert calls == []
    size[0] += 1  # past it: cleared within the op, and the size after is the new base
    clearing.before("add")
    assert calls == ["cleared", "released"]
    clearing.before("add")
    assert calls == ["cleared", "released"]


PARTIAL_CONFTEST = textwrap.dedent('''
    from typing import Any, ClassVar

    import pytest

    import numerix as nx
    from numerix.backend import Backend
    from numerix.primitives import REQUIRED
    from numerix_binary.backend import BinaryBackend


    class PartialBackend(Backend):
        """A backend of the required core alone (binary's kernels), without complex dtypes."""

        name = "partial"
        default_options: ClassVar[dict[str, Any]] = {"device": "cpu"}
        spec_fields = ("device",)
        supported_dtypes = frozenset(d for d in nx.dtypes.ALL_DTYPES if d.kind != "c")
        from_numpy = BinaryBackend.from_numpy
        to_numpy = BinaryBackend.to_numpy
        program_context = BinaryBackend.program_context

        def maximum(self, out, x1, x2):
            # claimed (the class defines it), so its NotImplementedError is a failure
            raise NotImplementedError("backend 'partial' does not implement primitive 'maximum'")


    for _name in REQUIRED:
        setattr(PartialBackend, _name, getattr(BinaryBackend, _name))
    nx.register_backend("partial", PartialBackend, replace=True)


    @pytest.fixture(scope="session")
    def numerix_backend():
        return "partial"
''')


# two families of the kit (collecting all of it takes seconds)
PARTIAL_TESTS = (
    "from numerix.testing.suite.elementwise import test_binary_one_dtype  # noqa: F401\n"
    "from numerix.testing.suite.properties import test_property_binary_broadcasting  # noqa: F401\n"
)


@pytest.fixture(scope="module")
def partial_run(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    d = tmp_path_factory.mktemp("partial_backend")
    (d / "conftest.py").write_text(PARTIAL_CONFTEST)
    (d / "test_conformance.py").write_text(PARTIAL_TESTS)
    (d / "pytest.ini").write_text("[pytest]\n")
    select = (
        "(test_binary_one_dtype and (add or multiply) and (f32 or s8 or u64 or c64)) "
        "or (test_property_binary_broadcasting and (multiply or maximum) and s32)"
    )
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
         "--hypothesis-profile=numerix-ci", "-k", select, str(d)],
        capture_output=True, text=True, cwd=d, timeout=600,
    )  # fmt: skip


def test_partial_backend_unclaimed_primitives(
    partial_run: subprocess.CompletedProcess[str],
) -> None:
    rows = _summary(partial_run.stdout)
    # add and multiply are implemented and pass, their complex cases are not claimed
    # (the class holds no complex dtype), never failed; maximum is defined by the class,
    # so its NotImplementedError fails
    for op in ("add", "multiply"):
        assert rows[op][0] > 0 and rows[op][1] == 0 and rows[op][2] > 0, rows
    assert rows["maximum"][1] > 0 and rows["maximum"][2] == 0, rows
    assert rows["total"][2] == sum(r[2] for op, r in rows.items() if op != "total")
    assert "not claimed: backend partial(cpu) does not claim complex64" in partial_run.stdout
    assert partial_run.returncode == 1  # the failing maximum


def test_partial_backend_green_without_failures(tmp_path: Path) -> None:
    # the same backend without its wrong claim: a green run, not claimed ops counted
    (tmp_path / "conftest.py").write_text(PARTIAL_CONFTEST.replace("def maximum(", "def _maximum("))
    (tmp_path / "test_conformance.py").write_text(PARTIAL_TESTS)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "-k", "test_binary_one_dtype and (add or divide or maximum) and (f32 or s64 or c64)",
         str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:]
    rows = _summary(run.stdout)
    for op in ("add", "divide"):  # the complex cases not claimed
        assert rows[op][0] > 0 and rows[op][1] == 0 and rows[op][2] > 0, rows
    # maximum by the core's fallback, its complex cases refused by the op (passed)
    assert rows["maximum"][:2] == (rows["maximum"][0], 0) and rows["maximum"][0] > 0, rows


def test_summary_shows_op_names(partial_run: subprocess.CompletedProcess[str]) -> None:
    # ops parametrised as ("add", nx.add, np.add) are reported by their name
    lines = partial_run.stdout.splitlines()
    start = next(i for i, ln in enumerate(lines) if "numerix conformance kit" in ln)
    body = lines[
        start + 2 : next(i for i in range(start, len(lines)) if lines[i].startswith("total"))
    ]
    assert body and all(re.fullmatch(r"\w+ +\d+ +\d+ +\d+", ln) for ln in body), body


DOCS = Path(__file__).resolve().parents[3] / "docs"


def _page_blocks(page: str) -> dict[str, str]:
    """The page's Python code blocks that start with a ``# path`` comment, by path."""
    text = (DOCS / page).read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    return {b.split("\n", 1)[0][2:].strip(): b for b in blocks if b.startswith("# ")}


#: the page's kit run: casts, bits, the required arithmetic with numerix's rules where numpy
#: leaves them open, reductions, indexing, and ops the core's fallbacks serve (maximum,
#: slicing, sort) on the page's required core
PAGE_KIT = (
    "astype or test_bitcast or test_reduce or test_take_block or test_pow_negative_integer_exponent"
    " or test_integer_division_by_zero_follows_numpy"
    " or (test_binary_one_dtype and (add or floor_divide or remainder or pow or maximum))"
    " or (test_unary and (exp or sqrt)) or test_getitem_every_dtype"
    " or (test_sort and not argsort)"
)


def test_write_a_backend_page_passes_the_kit(tmp_path: Path) -> None:
    # the page's backend (the required core on numpy), built from its code blocks, passes
    # the kit: its own kernels and the core's fallbacks over them
    blocks = _page_blocks("write-a-backend.md")
    pkg = tmp_path / "src" / "numerix_mybackend"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "backend.py").write_text(blocks["src/numerix_mybackend/backend.py"])
    # the plugin's entry point is not installed here: register the page's class
    (tmp_path / "conftest.py").write_text(
        blocks["tests/conftest.py"]
        + "\n\nimport numerix\nfrom numerix_mybackend.backend import MyBackend\n\n"
        + 'numerix.register_backend("mybackend", MyBackend, replace=True)\n'
    )
    (tmp_path / "test_conformance.py").write_text(blocks["tests/test_conformance.py"])
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "src")}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
         "--hypothesis-profile=numerix-ci", "-k", PAGE_KIT, str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path, timeout=600, env=env,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:]
    rows = _summary(run.stdout)
    assert rows["total"][0] > 0 and rows["total"][1] == 0, rows
    saturates = rows["astype_float_to_int_saturates"]
    assert saturates[0] > 0 and saturates[1] == 0, rows
    # a required kernel of the page's, and an op only a fallback serves, both pass
    assert rows["add"][0] > 0 and rows["maximum"][0] > 0, rows
    # bfloat16 is not held: its cases are not claimed, never failed
    assert "does not claim bfloat16" in run.stdout, run.stdout[-3000:]
