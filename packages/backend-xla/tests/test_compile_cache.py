"""``[compile] cache_dir``: the xla compiler keeps its compiled programs there (in
``numerix-xla/``, filed under the graph's fingerprint; and JAX's persistent compilation
cache), so that a new process's first call loads its program without tracing or
compiling it. Each case runs in fresh interpreters: JAX's cache settings are
process-wide."""

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
    return _run_args([code], env)


def _run_args(code_and_args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", *code_and_args], capture_output=True, text=True, timeout=120,
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
    # numerix's own program files are kept where numerix was told; JAX's are not
    assert [p.name for p in ours.iterdir()] == ["numerix-xla"]


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


KEPT = """
import os, sys
import numpy as np
import numerix as nx
k = float(sys.argv[1])
rng = np.random.default_rng(0)
xs = rng.standard_normal((40, 40)).astype(np.float32)
x = nx.tensor(xs, backend="xla")
small = np.arange(4, dtype=np.float32) * k
big = (np.eye(40, dtype=np.float32) * k).astype(np.float32)
c, w = nx.tensor(small, backend="xla"), nx.tensor(big, backend="xla")
def plain(x):
    return nx.tanh(x) * 2.0
def literal(x):                 # k: a literal of the program
    return x[0, :4] * k
def small_captured(x):          # captured tensors: extra arguments of the program
    return x[0, :4] * c
def captured(x):
    return x @ w
def hooked(x):
    return nx.hook(x + 1.0, lambda t: None)
want = {"plain": np.tanh(xs) * 2, "literal": xs[0, :4] * np.float32(k),
        "small_captured": xs[0, :4] * small, "captured": xs @ big, "hooked": xs + 1}
def call(name):
    f = nx.compile(globals()[name], x, compiler="xla")
    got = f(x).numpy()
    assert np.allclose(got, want[name], rtol=1e-5, atol=1e-5), name
    return f.run.loaded_from
for name in ("plain", "literal", "small_captured", "captured", "hooked"):
    print(name, call(name) is not None)
# exported where JAX's cache holds the program (the second time): still whole
open(sys.argv[2], "wb").write(nx.export(nx.jit(plain, compiler="xla"), x))
if k == 2.0:
    # a kept file that is not whole is compiled again, and written anew
    path = call("captured")
    data = bytearray(open(path, "rb").read())
    data[-1] ^= 0xFF
    open(path, "wb").write(bytes(data))
    print("corrupt", call("captured") is not None, call("captured") == path)
"""


def test_a_kept_program_is_loaded_without_compiling_and_only_where_it_is_the_same(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "programs"

    def kept_run(k: str) -> list[str]:
        got = _run_args([KEPT, k, str(tmp_path / f"{k}.nxp")],
                        {"NUMERIX_COMPILE__CACHE_DIR": str(cache)})  # fmt: skip
        assert got.returncode == 0, got.stderr
        return got.stdout.split()

    assert kept_run("1") == ["plain", "False", "literal", "False", "small_captured", "False",
                             "captured", "False", "hooked", "False"]  # fmt: skip
    kept = sorted(p.name for p in (cache / "numerix-xla").glob("*.bin"))
    assert len(kept) == 4  # the hooked program calls Python: not kept
    assert sorted(p.name for p in (cache / "numerix-xla").glob("*.sha256")) == [
        name + ".sha256" for name in kept
    ]
    # the literal changed: compiled again; the captured tensors are arguments: loaded,
    # and their new values used (checked against numpy in the program)
    assert kept_run("2") == ["plain", "True", "literal", "False", "small_captured", "True",
                             "captured", "True", "hooked", "False", "corrupt", "False",
                             "True"]  # fmt: skip
    assert len(list((cache / "numerix-xla").glob("*.bin"))) == 5
    load = (
        "import sys, numpy as np, numerix as nx\n"
        "x = np.random.default_rng(0).standard_normal((40, 40)).astype(np.float32)\n"
        "got = nx.load_exported(sys.argv[1])(nx.tensor(x, backend='xla')).numpy()\n"
        "assert np.allclose(got, np.tanh(x) * 2, rtol=1e-5, atol=1e-5)\n"
    )
    third = _run_args([load, str(tmp_path / "2.nxp")], {})
    assert third.returncode == 0, third.stderr
