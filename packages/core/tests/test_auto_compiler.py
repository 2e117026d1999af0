"""``jit(fn, compiler="auto")``: every compiler serving the call's backend is timed on the
first call of a signature, the fastest is kept, ``f.explain`` says why, and the choice
is kept in the compile cache. The candidates here are the evaluator and test compilers
that run the evaluator's program slowly (a sleep per call), so which one wins is known."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import plugins
from numerix.defn.evaluator import Evaluator

F = nx.float32


def _slow_compiler(name: str, pause: float) -> type[Evaluator]:
    class Slow(Evaluator):
        compiled: list[int] = []
        calls: list[int] = []

        def compile(self, graph: Any, args_spec: Any, options: Any) -> Any:
            type(self).compiled.append(1)
            run = super().compile(graph, args_spec, {})

            def slow(leaves: Any) -> Any:
                type(self).calls.append(1)
                time.sleep(pause)
                return run(leaves)

            return slow

    Slow.name = name
    return Slow


class Refusing(Evaluator):
    name = "refusing"

    def compile(self, graph: Any, args_spec: Any, options: Any) -> Any:
        raise nx.ArgumentError("refusing: this compiler takes no graph")


@pytest.fixture
def slow() -> Iterator[type[Evaluator]]:
    cls = _slow_compiler("slowpoke", 0.003)
    plugins.register_compiler("slowpoke", cls, replace=True)
    try:
        yield cls
    finally:
        plugins.unregister_compiler("slowpoke")


def softmax(x: Any) -> Any:
    e = nx.exp(x - nx.max(x, axis=-1, keepdims=True))
    return e / nx.sum(e, axis=-1, keepdims=True)


def _x(shape: tuple[int, ...] = (8, 16)) -> Any:
    return nx.tensor(np.random.default_rng(0).random(shape, dtype=np.float32))


def _oracle(x: Any) -> np.ndarray:
    a = x.to_numpy()
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_auto_keeps_the_fastest_and_says_why(slow: Any) -> None:
    f = nx.jit(softmax, compiler="auto")
    x = _x()
    y = f(x)
    assert y.dtype is F and y.shape == (8, 16)
    np.testing.assert_allclose(y.to_numpy(), _oracle(x), rtol=1e-6)
    choice = f.explain(x)
    assert choice.compiler == "evaluator"
    assert "fastest median" in choice.reason
    rows = {r["compiler"]: r for r in choice.rows}
    assert set(rows) == {"evaluator", "slowpoke"}
    assert rows["evaluator"]["status"] == "chosen" and rows["slowpoke"]["status"] == "timed"
    assert rows["slowpoke"]["median_s"] >= 0.003 > rows["evaluator"]["median_s"]
    assert rows["slowpoke"]["calls"] == rows["evaluator"]["calls"] >= 5
    assert choice.search_s > 0
    table = choice.table()
    assert table.splitlines()[1].startswith("evaluator") and "× slower" in table
    assert "chosen: evaluator" in str(choice)
    # the signature runs the winner from now on: the slow program is not called again
    ran = len(slow.calls)
    for _ in range(3):
        np.testing.assert_allclose(f(x).to_numpy(), _oracle(x), rtol=1e-6)
    assert len(slow.calls) == ran
    assert f.cache_info().misses == 1 and f.trace_count == 1
    # a new signature searches again; explain of a known one compiles nothing
    x2 = _x((3, 4))
    assert f.explain(x2).compiler == "evaluator"
    assert f.cache_info().misses == 2 and f.trace_count == 2
    assert f.explain(x) is choice


def test_auto_takes_python_numbers_and_trees(slow: Any) -> None:
    f = nx.jit(lambda d, s: d["a"] * s + 1.0, compiler="auto")
    x = _x((4,))
    out = f({"a": x}, 2.0)
    np.testing.assert_allclose(out.to_numpy(), x.to_numpy() * 2 + 1, rtol=1e-6)
    assert f.explain({"a": x}, 3.0).compiler == "evaluator"


def test_a_compiler_that_refuses_drops_out(slow: Any) -> None:
    plugins.register_compiler("refusing", Refusing, replace=True)
    try:
        f = nx.jit(softmax, compiler="auto")
        x = _x()
        np.testing.assert_allclose(f(x).to_numpy(), _oracle(x), rtol=1e-6)
        rows = {r["compiler"]: r for r in f.explain(x).rows}
        assert rows["refusing"]["status"] == "dropped: refusing: this compiler takes no graph"
        assert "median_s" not in rows["refusing"]
        assert f.explain(x).compiler == "evaluator"
    finally:
        plugins.unregister_compiler("refusing")


def test_when_every_compiler_refuses_the_first_error_is_raised(monkeypatch: Any) -> None:
    from numerix.defn import auto

    plugins.register_compiler("refusing", Refusing, replace=True)
    try:
        monkeypatch.setattr(auto, "compilers_serving", lambda backend: ["refusing"] * 2)
        with pytest.raises(nx.ArgumentError, match="refusing: this compiler takes no graph"):
            nx.jit(softmax, compiler="auto")(_x())
    finally:
        plugins.unregister_compiler("refusing")


def test_the_only_compiler_is_taken_untimed() -> None:
    f = nx.jit(softmax, compiler="auto")
    x = _x()
    np.testing.assert_allclose(f(x).to_numpy(), _oracle(x), rtol=1e-6)
    choice = f.explain(x)
    assert choice.compiler == "evaluator" and choice.rows == []
    assert choice.reason == "the only installed compiler serving binary(cpu)"


def test_a_compiler_another_outruns_is_not_timed(slow: Any) -> None:
    # "quick" declares that it outruns slowpoke: slowpoke is never compiled, the search
    # is between the evaluator and quick; named, slowpoke still compiles
    quick = _slow_compiler("quick", 0.0)
    plugins.register_compiler("quick", quick, replace=True, outruns=("slowpoke",))
    try:
        f = nx.jit(softmax, compiler="auto")
        x = _x()
        np.testing.assert_allclose(f(x).to_numpy(), _oracle(x), rtol=1e-6)
        choice = f.explain(x)
        rows = {r["compiler"]: r for r in choice.rows}
        assert set(rows) == {"evaluator", "quick", "slowpoke"}
        assert (
            rows["slowpoke"]["status"] == "not timed: quick outruns it (as quick's plugin declares)"
        )
        assert "median_s" not in rows["slowpoke"] and rows["quick"]["calls"] >= 5
        assert slow.compiled == [] and quick.compiled == [1]
        assert "not timed: quick outruns it" in choice.table()
        # alone with what it outruns, it is taken untimed, and the reason says why
        plugins.unregister_compiler("quick")
        plugins.register_compiler("quick", quick, replace=True, outruns=("slowpoke", "evaluator"))
        g = nx.jit(softmax, compiler="auto")
        np.testing.assert_allclose(g(x).to_numpy(), _oracle(x), rtol=1e-6)
        c = g.explain(x)
        assert c.compiler == "quick" and slow.compiled == []
        assert c.reason == ("nothing else to time on binary(cpu): it outruns evaluator, "
                            "slowpoke, as its plugin declares")  # fmt: skip
        assert [r["status"].split(":")[0] for r in c.rows] == ["chosen", "not timed", "not timed"]
        np.testing.assert_allclose(nx.jit(softmax, compiler="slowpoke")(x).to_numpy(), _oracle(x),
                                   rtol=1e-6)  # fmt: skip
        assert slow.compiled == [1]
    finally:
        plugins.unregister_compiler("quick")


@pytest.mark.parametrize("bad", [["evaluator"], ("",), ("quick",), "evaluator"])
def test_outruns_is_a_tuple_of_other_compilers_names(bad: Any) -> None:
    with pytest.raises(TypeError, match="outruns must be a tuple of other compilers' names"):
        plugins.CompilerEntry("quick", Evaluator, outruns=bad)


def test_hooks_are_not_timed(slow: Any) -> None:
    seen: list[Any] = []

    def fn(x: Any) -> Any:
        return nx.hook(x * 2, seen.append)

    f = nx.jit(fn, compiler="auto")
    x = _x((3,))
    f(x)
    assert len(seen) == 1  # once for the call: the search ran nothing more
    choice = f.explain(x)
    assert choice.compiler == "evaluator" and "hooks" in choice.reason and choice.rows == []
    assert slow.calls == []


def test_the_budget_bounds_the_rounds() -> None:
    a = _slow_compiler("slow_a", 0.02)
    b = _slow_compiler("slow_b", 0.02)
    plugins.register_compiler("slow_a", a, replace=True)
    plugins.register_compiler("slow_b", b, replace=True)
    try:
        with nx.config(defn={"auto_budget": 0.03}):
            f = nx.jit(softmax, compiler="auto")
            x = _x()
            f(x)
        rows = {r["compiler"]: r for r in f.explain(x).rows}
        # one round at least; the budget stops the search before the five rounds a clear
        # winner needs
        assert 1 <= rows["slow_a"]["calls"] < 5
        assert rows["slow_a"]["calls"] == rows["slow_b"]["calls"] == rows["evaluator"]["calls"]
    finally:
        plugins.unregister_compiler("slow_a")
        plugins.unregister_compiler("slow_b")


def test_auto_budget_setting_is_checked() -> None:
    with pytest.raises(nx.ConfigError, match="auto_budget"), nx.config(defn={"auto_budget": 0}):
        pass
    with pytest.raises(nx.ConfigError, match="auto_budget"):
        with nx.config(defn={"auto_budget": "soon"}):
            pass


def test_auto_takes_no_compiler_options() -> None:
    with pytest.raises(
        nx.ArgumentError, match=r"'auto', which takes no compiler options.*\['tag'\]"
    ):
        nx.jit(softmax, compiler="auto", tag=1)(_x())
    with nx.config(default_compiler="auto", compiler_options={"tag": 1}):
        with pytest.raises(
            nx.ArgumentError, match=r"the default_compiler setting is 'auto', which takes no"
        ):
            nx.jit(softmax)(_x())


def test_the_default_compiler_can_be_auto(slow: Any) -> None:
    f = nx.jit(softmax)
    x = _x()
    with nx.config(default_compiler="auto"):
        np.testing.assert_allclose(f(x).to_numpy(), _oracle(x), rtol=1e-6)
        choice = f.explain(x)
        assert {r["compiler"] for r in choice.rows} == {"evaluator", "slowpoke"}
    # outside the context the default compiler is the evaluator, named, not searched
    plain = f.explain(x)
    assert plain.compiler == "evaluator" and plain.rows == []
    assert plain.reason in ("the default compiler", "the default_compiler setting")
    assert nx.jit(softmax, compiler="evaluator").explain(x).reason == (
        "jit(compiler='evaluator') names it"
    )


def test_ahead_of_time_auto_takes_the_backends_own_compiler() -> None:
    c = nx.compile(softmax, nx.template((2, 3)), compiler="auto")
    x = _x((2, 3))
    np.testing.assert_allclose(c(x).to_numpy(), _oracle(x), rtol=1e-6)
    with nx.config(default_compiler="auto"):
        c = nx.compile(softmax, nx.template((2, 3)))
        np.testing.assert_allclose(c(x).to_numpy(), _oracle(x), rtol=1e-6)
    with pytest.raises(nx.ArgumentError, match="compile: compile\\(compiler='auto'\\)"):
        nx.compile(softmax, nx.template((2, 3)), compiler="auto", tag=1)


def test_the_choice_is_kept_in_the_compile_cache(slow: Any, tmp_path: Path) -> None:
    x = _x()
    with nx.config(compile={"cache_dir": str(tmp_path)}):
        f = nx.jit(softmax, compiler="auto")
        f(x)
        first = f.explain(x)
        assert first.saved is not None and Path(first.saved).parent == tmp_path / "numerix-auto"
        kept = json.loads(Path(first.saved).read_text())
        assert kept["compiler"] == "evaluator"
        # another function with the same graph (another process, as far as the cache
        # knows): the kept choice is compiled, nothing else
        compiled = len(slow.compiled)
        g = nx.jit(softmax, compiler="auto")
        np.testing.assert_allclose(g(x).to_numpy(), _oracle(x), rtol=1e-6)
        again = g.explain(x)
        assert again.compiler == "evaluator" and "earlier search" in again.reason
        assert again.saved == first.saved and len(slow.compiled) == compiled
        # a file numerix cannot read is searched again, and written anew
        Path(first.saved).write_text("{not json")
        h = nx.jit(softmax, compiler="auto")
        h(x)
        assert "fastest median" in h.explain(x).reason and len(slow.compiled) == compiled + 1
        assert json.loads(Path(first.saved).read_text())["compiler"] == "evaluator"
        # a kept choice that is no longer a candidate is searched again
        Path(first.saved).write_text(json.dumps({"compiler": "gone", "rows": []}))
        k = nx.jit(softmax, compiler="auto")
        k(x)
        assert "fastest median" in k.explain(x).reason


def test_explain_inside_a_trace_is_refused() -> None:
    f = nx.jit(softmax, compiler="auto")

    def outer(x: Any) -> Any:
        f.explain(x)
        return x

    with pytest.raises(nx.TracingError, match=r"explain: .* inside a trace"):
        nx.jit(outer)(_x())
