"""``numerix.defn.graph.fingerprint``: two graphs share a digest only when a program
compiled from one computes what a program compiled from the other does (a compiler's
program cache files programs under it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix.defn.graph import fingerprint

X = nx.template((4,))
M = nx.template((40, 40))


def fp(fn: Callable[..., Any], *args: Any) -> str | None:
    return fingerprint(nx.trace(fn, *args))


def test_the_same_function_traced_twice_has_one_digest() -> None:
    def f(x: Any) -> Any:
        return nx.exp(x - nx.max(x)) * 0.5

    a, b = fp(f, X), fp(f, X)
    assert a is not None and a == b
    assert fp(f, nx.template((5,))) != a  # another argument type
    assert fp(f, nx.template((4,), "float64")) != a


@pytest.mark.parametrize(
    "f, g",
    [
        (lambda x: x * 0.5, lambda x: x * 0.25),  # a Python number
        (lambda x: x * 0.0, lambda x: x * -0.0),  # the sign of zero
        (lambda x: nx.sum(x, axis=0), lambda x: nx.sum(x, axis=1)),  # a parameter
        (lambda x: x + x, lambda x: x * x),  # the operation
        (lambda x: (x, x + 1), lambda x: (x + 1, x)),  # which node is which output
    ],
    ids=["number", "signed-zero", "parameter", "op", "outputs"],
)
def test_graphs_that_compute_otherwise_differ(f: Any, g: Any) -> None:
    assert fp(f, M) != fp(g, M)


def test_small_constants_count_by_value() -> None:
    # a constant a program may hold as a literal: its value is part of the program
    c1 = nx.tensor(np.arange(4, dtype=np.float32))
    c2 = nx.tensor(np.arange(4, dtype=np.float32) * 2)
    assert fp(lambda x: x * c1, X) != fp(lambda x: x * c2, X)
    c3 = nx.tensor(np.arange(4, dtype=np.float32))  # another tensor, the same values
    assert fp(lambda x: x * c1, X) == fp(lambda x: x * c3, X)


def test_captured_tensors_count_by_type() -> None:
    # a captured tensor is an extra argument of the program: its type alone
    w1 = nx.tensor(np.ones((40, 40), np.float32))
    w2 = nx.tensor(np.zeros((40, 40), np.float32))
    w3 = nx.tensor(np.zeros((40, 40), np.float64))
    assert fp(lambda x: x @ w1, M) == fp(lambda x: x @ w2, M)
    assert fp(lambda x: x @ w1, M) != fp(lambda x: x.astype("float64") @ w3, M)


def test_subgraphs_and_recorded_blocks_are_part_of_it() -> None:
    def branch(k: float) -> Callable[[Any], Any]:
        return lambda x: nx.cond(nx.sum(x) > 0, lambda y: y * k, lambda y: y - 1.0, x)

    assert fp(branch(2.0), X) != fp(branch(3.0), X)
    assert fp(branch(2.0), X) == fp(branch(2.0), X)

    def layer(k: float) -> Callable[[Any], Any]:
        inner = nx.checkpoint(lambda h: nx.tanh(h * k))
        return lambda x: inner(x) + 1.0

    assert fp(layer(2.0), X) != fp(layer(3.0), X)


def test_a_graph_that_calls_python_has_none() -> None:
    assert fp(lambda x: nx.hook(x * 2.0, lambda t: None), X) is None


# ---------------------------------------------------------------- numerix.defn.kept
def test_kept_files_are_read_back_only_whole(tmp_path: Any) -> None:
    from numerix.defn import kept

    path = str(tmp_path / "sub" / "program.bin")
    assert kept.read_kept(path) is None  # nothing kept yet
    assert kept.keep_file(path, b"machine code")
    assert kept.read_kept(path) == b"machine code"
    with open(path, "r+b") as f:  # altered: not read
        f.write(b"M")
    assert kept.read_kept(path) is None
    written = tmp_path / "written.tmp"  # a file a library wrote is moved in
    written.write_bytes(b"a package")
    assert kept.keep_file(path, written=str(written))
    assert not written.exists() and kept.read_kept(path) == b"a package"
    (tmp_path / "sub" / "program.bin.sha256").unlink()  # no digest: not read
    assert kept.read_kept(path) is None
    blocked = tmp_path / "file"
    blocked.write_bytes(b"")
    assert not kept.keep_file(str(blocked / "x.bin"), b"data")  # a folder cannot be made


def test_the_key_names_the_graph_the_arguments_and_the_compiler_terms(tmp_path: Any) -> None:
    from numerix.defn import kept

    g = nx.trace(lambda x: x * 0.5, X)
    key = kept.program_key(g, [X], "lib 1.0")
    assert key is not None and key == kept.program_key(
        nx.trace(lambda x: x * 0.5, X), [X], "lib 1.0"
    )
    assert kept.program_key(g, [X], "lib 1.1") != key
    assert kept.program_key(g, [nx.template((4,), "float64")], "lib 1.0") != key
    assert kept.program_key(nx.trace(lambda x: nx.hook(x, lambda t: None), X), [X]) is None
    assert kept.kept_path("folder", key, ".bin") is None  # no cache directory set
    with nx.config(compile={"cache_dir": str(tmp_path)}):
        assert kept.kept_path("folder", key, ".bin") == str(tmp_path / "folder" / f"{key}.bin")
        assert kept.kept_path("folder", None, ".bin") is None
    assert len(kept.code_version("numerix_nonexistent")) == 64
