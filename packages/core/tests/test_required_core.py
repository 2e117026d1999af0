"""The required core and the fallbacks: what a backend must implement, what the core
composes for it, and how registration and the kit treat a backend of the core alone."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import dtypes
from numerix.backend import Backend, is_fallback, native_primitives, required_missing
from numerix.errors import PluginError
from numerix.primitives import REGISTRY, REQUIRED, REQUIRED_FOR_COMPLEX
from numerix.primitives._registry import fallback_rule
from numerix.testing.core_only import core_backend, core_only
from numerix.testing.oracle import Cases


def test_the_required_core_is_small_and_declared() -> None:
    assert len(REQUIRED) <= 30
    for name in (*REQUIRED, *REQUIRED_FOR_COMPLEX):
        assert name in REGISTRY, name
        assert REGISTRY[name].required and REGISTRY[name].fallback is None
    assert all(why.strip() for why in (*REQUIRED.values(), *REQUIRED_FOR_COMPLEX.values()))


def test_a_required_primitive_takes_no_fallback() -> None:
    with pytest.raises(ValueError, match="'add' is required"):
        fallback_rule("add")(lambda out, x1, x2: x1)


def test_a_fallback_is_attached_once() -> None:
    nx.backend.load_fallbacks()
    with pytest.raises(ValueError, match="'full' already has a fallback"):
        fallback_rule("full")(lambda out, **params: out)


class _Empty(Backend):
    name = "empty"


def test_a_class_without_an_optional_primitive_gets_the_fallback_kernel() -> None:
    for p in REGISTRY:
        method = getattr(_Empty, p.name, None)
        if p.required:
            assert method is None or method is getattr(Backend, p.name), p.name
        else:
            assert is_fallback(method), p.name
    assert native_primitives(_Empty) == []
    binary = nx.plugins.backend_class("binary")
    assert len(native_primitives(binary)) == len(REGISTRY)


def test_registration_refuses_a_backend_without_the_required_core() -> None:
    assert required_missing(_Empty) == [*REQUIRED, *REQUIRED_FOR_COMPLEX]
    with pytest.raises(PluginError) as e:
        nx.register_backend("empty", _Empty)
    msg = str(e.value)
    assert "register_backend: backend 'empty': class _Empty does not implement" in msg
    assert all(f"{n}," in msg or f"{n};" in msg for n in (*REQUIRED, *REQUIRED_FOR_COMPLEX))
    assert "empty" not in nx.plugins.backend_entries()


def test_the_complex_parts_are_required_only_of_a_backend_holding_complex() -> None:
    base = core_backend()
    real_only = frozenset(d for d in dtypes.ALL_DTYPES if d.kind != "c")
    no_parts = type("NoParts", (base,), {"name": "noparts", "real": None, "imag": None,
                                         "conj": None})  # fmt: skip
    assert required_missing(no_parts) == list(REQUIRED_FOR_COMPLEX)
    real = type("Real", (no_parts,), {"name": "realonly", "supported_dtypes": real_only})
    assert required_missing(real) == []
    nx.register_backend("realonly", real, replace=True)
    try:
        t = nx.tensor([1.0, -2.0], backend="realonly")
        assert np.array_equal(nx.abs(t).numpy(), [1.0, 2.0])
    finally:
        nx.unregister_backend("realonly")


@pytest.fixture(scope="module")
def core() -> Any:
    cls = core_only(nx.plugins.backend_class("binary"), "binarycore_t")
    nx.register_backend("binarycore_t", cls, replace=True)
    yield nx.get_backend("binarycore_t")
    nx.unregister_backend("binarycore_t")


def test_core_only_keeps_the_required_core_and_nothing_else(core: Any) -> None:
    assert sorted(native_primitives(type(core))) == sorted(
        n for n in REGISTRY.names() if REGISTRY[n].required
    )
    assert type(core).fast_kernel(core, "maximum", "tt", dtypes.float32) is None


def test_a_fallback_runs_eagerly_under_jit_and_under_grad(core: Any) -> None:
    a = np.array([[0.5, -1.5, 2.0], [3.0, -0.0, 1.0]], np.float32)
    x = nx.tensor(a, backend=core)
    want = np.maximum(a.T, 0.25)

    def f(t: Any) -> Any:
        return nx.maximum(nx.transpose(t), 0.25)

    for got in (f(x), nx.jit(f)(x)):
        assert got.backend is core and got.dtype is nx.float32 and got.shape == (3, 2)
        np.testing.assert_array_equal(got.numpy(), want)
    g = nx.grad(lambda t: nx.sum(f(t)))(x)
    np.testing.assert_array_equal(g.numpy(), (a > 0.25).astype(np.float32))


def test_a_backend_overriding_an_optional_primitive_runs_its_own(core: Any) -> None:
    calls = []

    class Own(type(core)):  # type: ignore[misc]
        name = "owncore_t"

        def maximum(self, out: Any, x1: Any, x2: Any) -> Any:
            calls.append(1)
            out.data = np.maximum(x1.data, x2.data)
            return out

    nx.register_backend("owncore_t", Own, replace=True)
    try:
        t = nx.tensor([1.0, 5.0], backend="owncore_t")
        assert nx.maximum(t, 2.0).tolist() == [2.0, 5.0] and calls == [1]
    finally:
        nx.unregister_backend("owncore_t")


def test_grouped_cases_that_reach_only_what_is_not_claimed_raise_it() -> None:
    cases = Cases()
    with cases.case("a"):
        pass
    with cases.case("b"):
        raise NotImplementedError("backend 'x' does not implement primitive 'sort'")
    with pytest.raises(NotImplementedError, match="primitive 'sort'"):
        cases.finish()
    cases = Cases()
    with cases.case("b"):
        raise NotImplementedError("backend 'x' does not implement primitive 'sort'")
    with cases.case("c"):
        raise ValueError("wrong")
    with pytest.raises(AssertionError, match=r"1 of 2 cases failed \(1 more not claimed\)"):
        cases.finish()


def test_a_dtype_the_backend_does_not_hold_is_refused_by_every_way_in() -> None:
    held = frozenset(d for d in dtypes.ALL_DTYPES if d not in (dtypes.float16, dtypes.bfloat16))
    cls = type("NoHalf", (core_backend(),), {"name": "nohalf", "supported_dtypes": held})
    nx.register_backend("nohalf", cls, replace=True)
    try:
        x = nx.tensor([1.0, 2.0], backend="nohalf")
        i = nx.tensor([1, 2], dtype="int16", backend="nohalf")
        ways = {
            "full": lambda: nx.zeros(3, dtype="float16", backend="nohalf"),
            "from_numpy": lambda: nx.tensor(np.ones(2, np.float16), backend="nohalf"),
            "arange": lambda: nx.arange(3, dtype="float16", backend="nohalf"),
            "eye": lambda: nx.eye(2, dtype="float16", backend="nohalf"),
            "astype": lambda: x.astype("float16"),
            "bitcast": lambda: nx.bitcast(i, "float16"),
            "as_type": lambda: nx.jit(lambda t: t.astype("float16"))(x),
            "backend_transfer": lambda: nx.backend_transfer(
                nx.tensor([1.0], dtype="float16"), "nohalf"
            ),
        }
        for op, way in ways.items():
            with pytest.raises(nx.errors.UnsupportedDTypeError) as e:
                way()
            assert str(e.value).startswith(f"{op}: backend nohalf(cpu) cannot hold float16"), (
                op,
                str(e.value),
            )
        assert nx.jit(lambda t: t + 1)(x).tolist() == [2.0, 3.0]
    finally:
        nx.unregister_backend("nohalf")


def test_a_backend_claiming_every_dtype_reads_as_none() -> None:
    cls = type("All", (core_backend(),), {"name": "alldt",
                                          "supported_dtypes": frozenset(dtypes.ALL_DTYPES)})  # fmt: skip
    assert cls.supported_dtypes is None


def test_every_optional_primitive_has_a_fallback() -> None:
    nx.backend.load_fallbacks()
    bare = [p.name for p in REGISTRY if not p.required and p.fallback is None]
    assert bare == [], f"optional primitives without a core fallback: {bare}"


def test_dlpack_without_the_librarys_own_goes_through_a_host_copy() -> None:
    base = core_backend()
    cls = type("NoDl", (base,), {"name": "nodl"})
    cls.to_dlpack = Backend.to_dlpack  # type: ignore[method-assign]
    cls.dlpack_device = Backend.dlpack_device  # type: ignore[method-assign]
    nx.register_backend("nodl", cls, replace=True)
    try:
        a = np.arange(6, dtype=np.int16).reshape(2, 3)
        t = nx.tensor(a, backend="nodl")
        assert t.__dlpack_device__() == (1, 0)
        got = np.from_dlpack(t)
        assert got.dtype == a.dtype
        np.testing.assert_array_equal(got, a, strict=True)
    finally:
        nx.unregister_backend("nodl")
