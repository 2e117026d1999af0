"""``[compile] cache_dir``: the xla compiler keeps its programs in JAX's persistent
compilation cache, so that a new process's first call loads its program. Each case runs
in fresh interpreters: JAX's cache settings are process-wide."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = """
import numpy as np
import numerix as nx
def f(x, w):
    h = nx.tanh(x @ w)
    for _ in range(3):
        h = nx.tanh(h @ w + h * 0.5)
    return nx.sum(h)
x = nx.tensor(np.ones((8, 16), np.float32), backend="xla")
w = nx.tensor(np.eye(16, dtype=np.float32) * 0.1, backend="xla")
print(repr(nx.jit(f, compiler="xla")(x, w).item()))
"""


def _run(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
        env={**os.environ, **env},
    )  # fmt: skip


def test_a_second_process_finds_its_program_in_the_cache(tmp_path: Path) -> None:
    cache = tmp_path / "programs"
    env = {"NUMERIX_COMPILE__CACHE_DIR": str(cache)}
    first = _run(PROGRAM, env)
    assert first.returncode == 0, first.stderr
    entries = sorted(p.name for p in cache.iterdir())
    assert entries, "the first process left no program in the cache directory"
    second = _run(PROGRAM, env)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout  # the same result
    assert sorted(p.name for p in cache.iterdir()) == entries  # loaded, not compiled anew
    plain = _run(PROGRAM, {"NUMERIX_COMPILE__CACHE_DIR": ""})
    assert plain.returncode != 0 and "cache_dir is empty" in plain.stderr


def test_a_cache_directory_jax_was_given_is_kept(tmp_path: Path) -> None:
    theirs, ours = tmp_path / "theirs", tmp_path / "ours"
    code = (
        f"import jax; jax.config.update('jax_compilation_cache_dir', {str(theirs)!r})\n"
        "import warnings; warnings.simplefilter('always')\n" + PROGRAM
        + "print(jax.config.jax_compilation_cache_dir)\n"
    )  # fmt: skip
    got = _run(code, {"NUMERIX_COMPILE__CACHE_DIR": str(ours)})
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip().endswith(str(theirs))
    assert "numerix leaves JAX's setting alone" in got.stderr
    assert not ours.exists()


@pytest.mark.parametrize("value, where", [("~/programs", "home/programs"), ("rel/dir", "rel/dir")])
def test_the_directory_is_expanded_and_made_absolute(
    tmp_path: Path, value: str, where: str
) -> None:
    (tmp_path / "home").mkdir()
    code = PROGRAM + "import jax; print(jax.config.jax_compilation_cache_dir)\n"
    got = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
        cwd=tmp_path, env={**os.environ, "HOME": str(tmp_path / "home"),
                           "NUMERIX_COMPILE__CACHE_DIR": value},
    )  # fmt: skip
    assert got.returncode == 0, got.stderr
    want = tmp_path / where if where.startswith("rel") else tmp_path / "home" / "programs"
    assert got.stdout.strip().splitlines()[-1] == str(want)
    assert any(want.iterdir())
