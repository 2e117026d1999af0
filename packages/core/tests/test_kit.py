"""The conformance kit tested on itself: it passes a correct backend (numerix-binary runs
it in full) and fails a deliberately wrong one with a readable report."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

BROKEN_CONFTEST = textwrap.dedent('''
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


    nx.register_backend("wrong", WrongBackend, replace=True)


    @pytest.fixture(scope="session")
    def numerix_backend():
        return "wrong"
''')


@pytest.fixture(scope="module")
def wrong_run(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    d: Path = tmp_path_factory.mktemp("wrong_backend")
    (d / "conftest.py").write_text(BROKEN_CONFTEST)
    (d / "test_conformance.py").write_text("from numerix.testing.suite import *  # noqa: F403\n")
    (d / "pytest.ini").write_text("[pytest]\n")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rN",
         "-k", "test_binary_one_dtype or test_unary", str(d)],
        capture_output=True, text=True, cwd=d, timeout=600,
    )  # fmt: skip


def test_wrong_backend_fails_the_kit(wrong_run: subprocess.CompletedProcess[str]) -> None:
    assert wrong_run.returncode == 1, wrong_run.stdout[-3000:]


def test_report_names_the_wrong_dtype(wrong_run: subprocess.CompletedProcess[str]) -> None:
    assert "backend holds float64, expected float32" in wrong_run.stdout


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
