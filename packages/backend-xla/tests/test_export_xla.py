"""The xla compiler's exported programs: the compiled executable where the loading
machine is like the exporting one, the StableHLO (compiled on load) where it is not,
and what cannot be exported. The round trips over every dtype are the kit's
(numerix.testing.suite.export)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import numerix as nx
import numerix_xla.compiler as xc


def _f(x: Any, w: Any) -> Any:
    return nx.tanh(nx.dot(x, w)).sum(axis=0)


def _args() -> tuple[Any, Any]:
    rng = np.random.default_rng(0)
    x = nx.tensor(rng.standard_normal((5, 4)).astype(np.float32), backend="xla")
    w = nx.tensor(rng.standard_normal((4, 3)).astype(np.float32), backend="xla")
    return x, w


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    loaded: list[Any] = []
    real = xc._load_executable

    def load(*a: Any) -> Any:
        out = real(*a)
        loaded.append(out)
        return out

    monkeypatch.setattr(xc, "_load_executable", load)
    return loaded


def test_a_machine_like_this_one_loads_the_executable(monkeypatch: pytest.MonkeyPatch) -> None:
    x, w = _args()
    want = nx.jit(_f, compiler="xla")(x, w).to_numpy()
    loaded = _spy(monkeypatch)
    program = nx.load_exported(nx.export(_f, x, w, compiler="xla"))
    assert len(loaded) == 1 and loaded[0] is not None
    got = program(x, w)
    assert got.backend is x.backend and got.dtype is nx.float32
    np.testing.assert_array_equal(got.to_numpy(), want)


def test_another_jax_release_compiles_the_stablehlo(monkeypatch: pytest.MonkeyPatch) -> None:
    x, w = _args()
    want = nx.jit(_f, compiler="xla")(x, w).to_numpy()
    data = nx.export(_f, x, w, compiler="xla")
    real = xc._machine
    monkeypatch.setattr(xc, "_machine", lambda dev: {**real(dev), "jax": "0.0.1"})
    loaded = _spy(monkeypatch)
    program = nx.load_exported(data)
    assert loaded == []  # the executable was not tried
    np.testing.assert_allclose(program(x, w).to_numpy(), want, rtol=1e-6)


def test_hooks_cannot_be_exported() -> None:
    def f(x: Any) -> Any:
        nx.print_value(x)
        return x * 2

    with pytest.raises(nx.ArgumentError, match=r"export: compiler 'xla' cannot export.*hook"):
        nx.export(f, nx.template((3,), backend="xla"), compiler="xla")


def test_the_backend_must_be_the_compilers_kind() -> None:
    data = nx.export(lambda x: x + 1, nx.template((2,), backend="xla"), compiler="xla")
    with pytest.raises(nx.ArgumentError, match=r"runs on xla backends.*pass backend='xla'"):
        nx.load_exported(data, backend="binary")
