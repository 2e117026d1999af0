"""defn, jit, compile, trace, control flow and the evaluator compiler."""

from __future__ import annotations

import contextvars
import gc
import inspect
import linecache
import re
import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import plugins
from numerix.defn import replay
from numerix.defn.compilers import Compiler
from numerix.defn.evaluator import Evaluator
from numerix.defn.expr import BLOCK, CONSTANT, TENSOR, ExprBackend
from numerix.testing.defn_cases import OPS, F, branchy, same, spd, t

# ---------------------------------------------------------------- every public op, traced


@pytest.mark.parametrize(("fn", "args"), OPS)
def test_defn_every_op_traced_equals_eager(fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    want = fn(*args)
    jitted = nx.jit(fn)
    got = jitted(*args)
    same(got, want)
    assert jitted.trace_count == 1
    # really traced: every output is computed from the parameters, none was a constant
    graph = nx.trace(fn, *args)
    assert len(graph.parameters) == len(args)
    assert all(o.op not in (CONSTANT, TENSOR) for o in graph.outputs)


def test_defn_every_block_is_one_node() -> None:
    a = spd()
    g = nx.trace(lambda x: (nx.cholesky(x), nx.eigh(x)), a)
    blocks = [n for n in g.nodes if n.op == BLOCK]
    assert [n.value.name for n in blocks] == ["cholesky", "eigh"]
    # a compiler whose backend lacks block_<name> lowers the traced fallback
    fb = blocks[0].fallback
    assert [(p.shape, p.dtype) for p in fb.parameters] == [((3, 3), nx.float32)]
    assert [(o.shape, o.dtype) for o in fb.outputs] == [((3, 3), nx.float32)]


def _backend_without_blocks() -> type:
    base = type(nx.get_backend("binary"))
    ns: dict[str, Any] = {"name": "noblocks", "is_host": False}
    ns.update({a: None for a in dir(base) if a.startswith("block_")})
    return type("NoBlocksBackend", (base,), ns)


def test_defn_block_fallback_evaluated_equals_eager() -> None:
    plugins.register_backend("noblocks", _backend_without_blocks(), replace=True)
    try:
        a = spd().to("noblocks")
        fn = lambda x: (nx.cholesky(x), nx.qr(x), nx.det(x))  # noqa: E731
        got = nx.jit(fn)(a)
        want = fn(a)  # eagerly the core's fallback runs too
        same(got, want)
        assert got[0].backend.name == "noblocks"
    finally:
        plugins.unregister_backend("noblocks")


# ---------------------------------------------------------------- the seed's softmax


@nx.defn
def softmax(x: Any) -> Any:
    max_val = nx.max(x)
    return nx.exp(x - max_val) / nx.sum(nx.exp(x - max_val))


def test_defn_seed_softmax_runs_and_lists() -> None:
    x = nx.tensor([1.0, 2.0, 3.0, 4.0])
    same(softmax(x), softmax.fn(x))
    assert softmax.is_cached(nx.tensor([0.0, 0.0, 0.0, 1.0]))
    assert not softmax.is_cached(nx.tensor([1, 2, 3, 4]))
    listing = str(nx.trace(softmax, nx.tensor([1, 2, 3, 4])))
    assert listing == (
        "parameter a                                                 s64[4]\n"
        "b = reduce [ a, kind: 'max', axes: (0,), keepdims: False ]  s64\n"
        "c = subtract [ a, b ]                                       s64[4]\n"
        "d = as_type [ c ]                                           f32[4]\n"
        "e = exp [ d ]                                               f32[4]\n"
        "f = reduce [ e, kind: 'sum', axes: (0,), keepdims: False ]  f32\n"
        "g = divide [ e, f ]                                         f32[4]"
    )


# ---------------------------------------------------------------- the cache


def test_defn_cache_same_signature_does_not_retrace() -> None:
    f = nx.jit(lambda x, y: x * y)
    f(nx.tensor([1.0, 2.0]), nx.tensor(3.0))
    f(nx.tensor([5.0, 6.0]), nx.tensor(1.0))
    assert f.trace_count == 1
    assert f.is_cached(nx.tensor([0.0, 0.0]), nx.tensor(0.0))
    assert not f.is_cached(nx.tensor([0.0, 0.0, 0.0]), nx.tensor(0.0))  # new shape
    assert not f.is_cached(nx.tensor([0.0, 0.0], dtype=nx.float64), nx.tensor(0.0))  # new dtype
    assert not f.is_cached((nx.tensor([0.0, 0.0]),), nx.tensor(0.0))  # new tree
    assert f.trace_count == 1  # is_cached compiles nothing
    f(nx.tensor([1.0, 2.0, 3.0]), nx.tensor(3.0))
    f(nx.tensor([1.0, 2.0], dtype=nx.float64), nx.tensor(3.0))
    assert f.trace_count == 3


def test_defn_cache_numbers_are_dynamic_tensors_of_the_default_dtype() -> None:
    seen = []
    f = nx.jit(lambda x, s: (seen.append(s.dtype), x * s)[1])
    r = f(nx.tensor([1, 2], dtype=nx.int32), 3)
    assert r.tolist() == [3, 6] and r.dtype is nx.int64  # s is an int64 tensor, not weak
    assert f(nx.tensor([1, 2], dtype=nx.int32), 5).tolist() == [5, 10]
    assert f.trace_count == 1 and seen == [nx.int64]
    assert f(nx.tensor([1.0, 2.0]), 0.5).dtype is nx.float32
    assert seen == [nx.int64, nx.float32]


def test_defn_cache_static_argnames() -> None:
    f = nx.jit(lambda x, axis, keep=False: nx.sum(x, axis=axis, keepdims=keep),
               static_argnames=("axis", "keep"))  # fmt: skip
    x = nx.ones((2, 3))
    assert f(x, 0).shape == (3,)
    assert f(x, axis=0).shape == (3,)
    assert f(x, 1, keep=True).shape == (2, 1)
    assert f.trace_count == 2  # axis=0 positionally and by name share one program
    assert f.is_cached(x, 1, keep=True) and not f.is_cached(x, 1)
    with pytest.raises(nx.ArgumentError, match=r"static argument 'axis' must be hashable"):
        f(x, [0])
    with pytest.raises(nx.ArgumentError, match=r"static_argnames \['nope'\] are not parameters"):
        nx.jit(lambda x: x, static_argnames=("nope",))


def test_static_arguments_bind_as_inspect_binds_them() -> None:
    # positional and keyword calls bind without inspect where they are plain: the same
    # key however an argument is passed, and inspect's error for a call it refuses
    def f(x, y, axis, keep=False):
        return nx.sum(x + y, axis=axis, keepdims=keep)

    g = nx.jit(f, static_argnames=("axis", "keep"))
    x = nx.ones((2, 3))
    for args, kwargs in [((x, x, 0), {}), ((x, x), {"axis": 0}), ((x,), {"axis": 0, "y": x}),
                         ((), {"keep": False, "axis": 0, "x": x, "y": x}),
                         ((x, x, 0, False), {})]:  # fmt: skip
        assert g(*args, **kwargs).shape == (3,)
    assert g.trace_count == 2  # keep given or left to its default: two signatures
    assert g(x, x, 1, True).shape == (2, 1) and g.trace_count == 3
    for args, kwargs in [((x,), {}), ((x, x), {"axis": 0, "x": x}), ((x, x, 0), {"nope": 1}),
                         ((x, x, 0, False, 5), {}), ((x, x), {})]:  # fmt: skip
        with pytest.raises(TypeError) as got:
            g(*args, **kwargs)
        with pytest.raises(TypeError) as want:
            inspect.signature(f).bind(*args, **kwargs)
        assert str(got.value) == str(want.value)


def test_defn_cache_pytrees_in_and_out() -> None:
    f = nx.jit(lambda p: {"s": p["a"] + p["b"][0], "t": [p["b"][1] * 2]})
    out = f({"a": nx.tensor([1, 2]), "b": (nx.tensor(10), nx.tensor(3.0))})
    assert out["s"].tolist() == [11, 12] and out["t"][0].item() == 6.0
    assert f.trace_count == 1


def test_defn_compile_from_templates() -> None:
    calls = []

    def fn(x: Any, y: Any) -> Any:
        calls.append(1)
        return x @ y

    c = nx.compile(fn, nx.template((2, 3)), nx.template((3,)))
    assert len(calls) == 1
    a, b = t(F, (2, 3)), t(F, (3,))
    same(c(a, b), a @ b)
    assert len(calls) == 1
    with pytest.raises(
        nx.TracingError,
        match=r"compiled for arguments \(f32\[2\]\[3\], f32\[3\]\), got \(f32\[2\]\[3\], s64\[3\]\)",
    ):
        c(a, nx.tensor([1, 2, 3]))
    with pytest.raises(nx.TracingError, match="a template has no values"):
        nx.jit(fn)(nx.template((2, 3)), b)


def test_defn_default_compiler_from_settings_and_call() -> None:
    class Counting(Evaluator):
        name = "counting"
        default_options = {"tag": None}
        compiled: list[Any] = []

        def compile(self, graph: Any, args_spec: Any, options: Any) -> Any:
            self.compiled.append(options["tag"])
            return super().compile(graph, args_spec, {})

    plugins.register_compiler("counting", Counting, replace=True)
    try:
        f = nx.jit(lambda x: x + 1)
        x = nx.tensor([1.0])
        f(x)
        assert Counting.compiled == []
        with nx.config(default_compiler="counting", compiler_options={"tag": "ctx"}):
            assert not f.is_cached(x)
            assert f(x).tolist() == [2.0]
            assert f.is_cached(x)
        assert Counting.compiled == ["ctx"]
        g = nx.jit(lambda x: x + 1, compiler="counting", tag="call")
        g(x)
        assert Counting.compiled == ["ctx", "call"]
        with pytest.raises(
            nx.ArgumentError,
            match=r"compiler 'counting' does not take option\(s\) 'bad'; it accepts: tag",
        ):
            nx.jit(lambda x: x, compiler="counting", bad=1)(x)
    finally:
        plugins.unregister_compiler("counting")


def test_defn_unknown_compiler_and_backend_as_compiler() -> None:
    x = nx.tensor([1.0])
    with pytest.raises(
        nx.ArgumentError, match=r"jit: no compiler named 'nope'; compilers: evaluator"
    ):
        nx.jit(lambda x: x, compiler="nope")(x)
    with pytest.raises(
        nx.ArgumentError, match=r"'binary' is a backend, not a compiler; compilers: evaluator"
    ):
        nx.jit(lambda x: x, compiler="binary")(x)
    with pytest.raises(nx.PluginError, match=r"is not a numerix\.defn\.Compiler class"):
        plugins.register_compiler("fake", int)
        try:
            plugins.get_compiler("fake")
        finally:
            plugins.unregister_compiler("fake")
    assert "evaluator" in plugins.compiler_entries()
    assert isinstance(plugins.get_compiler("evaluator"), Compiler)


# ---------------------------------------------------------------- the listing, CSE, folding


def test_defn_listing_cse_and_folding() -> None:
    def fn(x: Any) -> Any:
        y = (x + 0) * 1 - 0  # identities fold away
        y = y / 1
        z = nx.exp(y) + nx.exp(y)  # one exp
        k = nx.tensor(2.0) * 3 + 1  # constants fold
        return z * k

    g = nx.trace(fn, nx.template((2,)))
    assert str(g) == (
        "parameter a              f32[2]\n"
        "b = exp [ a ]            f32[2]\n"
        "c = add [ b, b ]         f32[2]\n"
        "d = multiply [ c, 7.0 ]  f32[2]"
    )


def test_defn_listing_names_past_z_and_constants() -> None:
    def fn(x: Any) -> Any:
        for _ in range(30):
            x = nx.sin(x)
        return x + nx.arange(3.0)

    lines = str(nx.trace(fn, nx.template((3,)))).splitlines()
    assert lines[0].startswith("parameter a ")
    assert lines[26].startswith("aa = sin [ z ]")
    assert lines[-2].startswith("constant af ")
    assert lines[-1].startswith("ag = add [ ae, af ]")


# ---------------------------------------------------------------- concrete errors


@pytest.mark.parametrize(
    ("fn", "op", "hint"),
    [
        (
            lambda x: 1 if x > 0 else 0,
            "bool",
            r"numerix\.cond\(pred, true_fn, false_fn, \*operands\)",
        ),
        (lambda x: bool(x), "bool", r"or numerix\.where\(pred, a, b\) to select values"),
        (lambda x: int(x), "int", r"return it from the defn and read it outside"),
        (lambda x: float(x), "float", r"numerix\.print_value\(t\)"),
        (lambda x: x.item(), "item", r"return it from the defn and read it outside"),
        (lambda x: x.tolist(), "tolist", r"return it from the defn"),
        (lambda x: x.to_numpy(), "to_numpy", r"return it from the defn"),
        (lambda x: np.asarray(x), "to_numpy", r"return it from the defn"),
    ],
)
def test_defn_concrete_errors_say_what_to_use(fn: Any, op: str, hint: str) -> None:
    with pytest.raises(
        nx.TracingError,
        match=rf"^{op}: (f32|pred) expr\(trace\) is a traced tensor inside numerix\.jit/defn: .*{hint}",
    ):
        nx.jit(fn)(nx.tensor(1.0))
    assert issubclass(nx.TracingError, TypeError)


def test_defn_leaked_tracer_is_refused() -> None:
    leaked = []
    nx.jit(lambda x: leaked.append(x) or x)(nx.tensor(1.0))
    with pytest.raises(nx.TracingError, match=r"used after its numerix\.jit/defn trace finished"):
        leaked[0] + 1
    with pytest.raises(nx.TracingError, match="returned a str"):
        nx.jit(lambda x: "no")(nx.tensor(1.0))


# ---------------------------------------------------------------- control flow


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_defn_control_flow_eager_and_traced(sign: float) -> None:
    x = nx.tensor([1.0, 2.0]) * sign
    eager = branchy(x, nx.tensor(4))
    f = nx.jit(branchy)
    same(f(x, nx.tensor(4)), eager)
    same(f(x * 3, nx.tensor(4)), branchy(x * 3, nx.tensor(4)))
    assert f.trace_count == 1
    assert eager[0].tolist() == ([2.0, 4.0] if sign > 0 else [-3.0, -4.0])
    assert eager[2].tolist() == [6.0, 6.0]  # 1 * 1 * 2 * 3


def test_defn_control_flow_with_closures_and_nesting() -> None:
    def fn(x: Any, k: Any) -> Any:
        def body(i: Any, acc: Any) -> Any:  # closes over x (a traced value): a free value
            return nx.cond(i % 2 == 0, lambda a: a + x, lambda a: a - k, acc)

        return nx.fori_loop(0, 5, body, nx.zeros_like(x))

    x, k = nx.tensor([1.0, 2.0]), nx.tensor(0.5)
    same(nx.jit(fn)(x, k), fn(x, k))
    g = nx.trace(fn, x, k)
    loop = next(n for n in g.nodes if n.op == "while")
    assert len(loop.subgraphs[1].free) == 2  # x and k enter the body as free values


def test_defn_cond_branches_must_agree() -> None:
    with pytest.raises(
        nx.TracingError,
        match=r"cond: the branches return different types: true_fn returns \(f32\[2\],\) and false_fn returns \(s64\[2\],\)",
    ):
        nx.jit(lambda x: nx.cond(x[0] > 0, lambda: (x,), lambda: (nx.tensor([1, 2]),)))(
            nx.tensor([1.0, 2.0])
        )
    with pytest.raises(
        nx.TracingError, match=r"while_loop: body_fn returns f32 but the loop state \(init\) is s64"
    ):
        nx.jit(lambda x: nx.while_loop(lambda s: s < 3, lambda s: s + x, 0))(nx.tensor(1.0))
    with pytest.raises(nx.ShapeError, match="cond: the predicate must be a 0-d tensor"):
        nx.jit(lambda x: nx.cond(x > 0, lambda: x, lambda: x))(nx.tensor([1.0, 2.0]))


def test_defn_cond_on_known_predicate_is_python() -> None:
    g = nx.trace(lambda x: nx.cond(True, lambda a: a + 1, lambda a: a - 1, x), nx.template(()))
    assert [n.op for n in g.nodes if n.op != CONSTANT] == ["parameter", "add"]


# ---------------------------------------------------------------- hooks


def test_defn_hook_runs_at_execution_time(capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[Any] = []

    @nx.defn
    def fn(x: Any) -> Any:
        y = nx.hook(x * 2, lambda v: seen.append(v.tolist()))
        nx.print_value(y + 1, label="y1")  # unused result: still runs
        return y

    assert fn(nx.tensor([1, 2])).tolist() == [2, 4]
    assert fn(nx.tensor([3, 4])).tolist() == [6, 8]
    assert seen == [[2, 4], [6, 8]]
    out = capsys.readouterr().out
    assert out.count("y1: Tensor<s64[2] binary(cpu)>") == 2 and "[7, 9]" in out
    assert fn.jitted.trace_count == 1


# ---------------------------------------------------------------- nested defn


def test_defn_nested_defn_inlines() -> None:
    @nx.defn
    def inner(x: Any) -> Any:
        return nx.exp(x)

    @nx.defn
    def outer(x: Any) -> Any:
        return inner(x) + inner(x * 2)

    x = nx.tensor([0.0, 1.0])
    same(outer(x), nx.exp(x) + nx.exp(x * 2))
    assert inner.jitted.trace_count == 0 and outer.jitted.trace_count == 1
    ops = [n.op for n in nx.trace(outer, x).nodes if n.op != CONSTANT]
    assert ops == ["parameter", "exp", "multiply", "exp", "add"]


# ---------------------------------------------------------------- captured tensors


def _counting_backend() -> type:
    base = type(nx.get_backend("binary"))

    class Counting(base):  # type: ignore[misc, valid-type]
        name = "counting"
        is_host = False
        moved_in = 0

        def from_numpy(self, out: Any, array: Any) -> Any:
            type(self).moved_in += 1
            return super().from_numpy(out, array)

        def from_dlpack(self, out: Any, owner: Any) -> Any:
            return None

    return Counting


def test_defn_captured_tensors_move_once_not_per_call() -> None:
    cls = _counting_backend()
    plugins.register_backend("counting", cls, replace=True)
    try:
        w = t(F, (40, 40))  # a host tensor, big enough to stay a captured tensor
        f = nx.jit(lambda x: x @ w)
        x = t(F, (3, 40)).to("counting")
        cls.moved_in = 0
        r1 = f(x)
        assert cls.moved_in == 1  # w moved to the arguments' backend when compiling
        r2 = f(x * 2)
        f(x)
        assert cls.moved_in == 1  # ... and never again
        assert r1.backend.name == "counting"
        np.testing.assert_allclose(r2.to_numpy(), (x * 2).to_numpy() @ w.to_numpy(), rtol=1e-6)
        g = nx.trace(lambda x: x @ w + x @ w, x)
        assert [n.op for n in g.nodes].count(TENSOR) == 1
        assert re.search(r"^tensor b +f32\[40\]\[40\]$", str(g), re.M)
    finally:
        plugins.unregister_backend("counting")


def test_defn_capture_happens_once_per_trace() -> None:
    w = t(F, (40, 40))
    seen: list[ExprBackend] = []

    def fn(x: Any) -> Any:
        seen.append(x.backend)
        return (x @ w) + (x @ w).sum() + x @ w @ w

    nx.jit(fn)(t(F, (2, 40)))
    assert seen[0].captures == 1


# ---------------------------------------------------------------- the evaluator frees early


def test_defn_evaluator_calls_the_backends_lowered_kernels() -> None:
    import numpy as np

    f = nx.compile(lambda x: nx.exp(x) + 1, nx.template((3,), F, backend="binary"))
    program = f.run.program  # type: ignore[attr-defined]
    ns = program.fn.__globals__
    # one line per node, each calling what binary lowered the primitive to
    lines = [ln.strip() for ln in program.source.splitlines()[1:-1]]
    assert [ln.rsplit("# ", 1)[1] for ln in lines if "# " in ln] == ["exp", "add"]
    called = [ns[ln.split("= ", 1)[1].split("(", 1)[0]] for ln in lines if "# " in ln]
    assert called == [np.exp, np.add]
    assert f(t(F, (3,))).dtype is F


def test_defn_evaluator_frees_intermediates_after_last_use() -> None:
    refs: list[Any] = []
    alive: list[bool] = []

    def fn(x: Any) -> Any:
        a = nx.exp(x)
        b = nx.sin(a)  # last use of a
        b = nx.hook(b, lambda v: alive.append(refs[-1]() is not None))
        return b * 2

    base = type(nx.get_backend("binary"))

    class Probe(base):  # type: ignore[misc, valid-type]
        name = "probe"

        def exp(self, out: Any, x: Any) -> Any:
            r = super().exp(out, x)
            refs.append(weakref.ref(r.data))  # the array the program holds
            return r

    plugins.register_backend("probe", Probe, replace=True)
    try:
        x = t(F, (3,)).to("probe")
        r = nx.jit(fn)(x)
        assert alive == [False]  # exp's array was dropped before the hook ran
        same(r, nx.sin(nx.exp(x)) * 2)
    finally:
        plugins.unregister_backend("probe")


def test_jit_of_numbers_runs_on_the_default_backend_of_each_call() -> None:
    # the cache key holds where Python numbers go: a program compiled while another
    # backend was the default is not reused (threads and contexts have their own)
    other = type("OtherHost", (type(nx.get_backend("binary")),), {"name": "otherhost"})
    plugins.register_backend("otherhost", other, replace=True)
    try:
        f = nx.jit(lambda a, b: a * b + 1)
        with nx.default_backend("binary"):
            r1 = f(2, 3.0)
        with nx.default_backend("otherhost"):
            r2 = f(2, 3.0)
            assert f.is_cached(2, 3.0)
        assert r1.backend.name == "binary" and r2.backend.name == "otherhost"
        assert r1.tolist() == r2.tolist() == 7.0 and r1.dtype is r2.dtype is nx.float32
        assert f.trace_count == 2
        results: list[Any] = [None] * 8

        def worker(i: int) -> None:
            with nx.default_backend("otherhost" if i % 2 else "binary"):
                results[i] = f(2, 3.0).backend.name

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results == ["binary", "otherhost"] * 4
    finally:
        plugins.unregister_backend("otherhost")


def test_jit_of_a_list_argument_says_it_is_a_tree_of_values() -> None:
    with pytest.raises(
        nx.TracingError,
        match=r"^tensor: the sequence holds traced values .*a list or tuple argument is a "
        r"tree of separate values .*pass numerix\.tensor\(\[\.\.\.\]\)",
    ):
        nx.jit(nx.sum)([1, 2, 3])
    got = nx.jit(nx.sum)(nx.tensor([1, 2, 3]))
    assert got.tolist() == 6 and got.dtype is nx.int64
    # a list of traced values stacked explicitly is one tensor
    got = nx.jit(lambda xs: nx.sum(nx.stack(xs)))([nx.tensor(1.0), nx.tensor(2.5)])
    assert got.tolist() == 3.5


def test_a_program_source_leaves_linecache_with_the_program() -> None:
    def numbered() -> set[str]:
        return {k for k in linecache.cache if k.startswith("<numerix program")}

    before = numbered()
    f = nx.jit(lambda x: nx.exp(x) * 2, compiler="evaluator")
    f(nx.tensor([1.0, 2.0]))
    made = numbered() - before
    assert len(made) == 1  # the program's lines show in tracebacks while it lives
    del f
    gc.collect()
    # the collector never changes linecache itself (linecache.checkcache may be walking
    # it): the lines leave at the next lowering
    assert numbered() & made
    linecache.checkcache()
    g = nx.jit(lambda x: nx.exp(x) * 3, compiler="evaluator")
    g(nx.tensor([1.0, 2.0]))
    assert not (numbered() & made)


def test_a_program_collected_while_linecache_is_checked_breaks_nothing() -> None:
    # checkcache() lists the cache's keys, then reads each: a program collected between
    # the two must leave its key in place
    real = linecache.cache
    dying: list[Any] = []

    class Collecting(dict):  # type: ignore[type-arg]
        def __getitem__(self, key: Any) -> Any:
            if dying:
                dying.clear()  # the program dies in the middle of the walk
                gc.collect()
            return dict.__getitem__(self, key)

    linecache.cache = Collecting(real)
    try:
        f = nx.jit(lambda x: nx.exp(x) - 1, compiler="evaluator")
        f(nx.tensor([1.0]))  # lowered while the walked cache is linecache's
        dying.append(f)
        del f
        linecache.checkcache()  # raised KeyError when the finalizer popped the key
    finally:
        survivors = linecache.cache
        linecache.cache = real
        real.update(survivors)
    assert replay._dead_sources  # left for the next lowering


# ---------------------------------------------------------------- is_cached tells the truth


def test_is_cached_of_a_jit_of_a_defn_answers_for_its_own_cache() -> None:
    x = nx.tensor([1.0, 2.0])
    inner = nx.defn(lambda v: v * 2)
    inner(x)  # the defn ran with the default compiler: its own cache holds a program
    other = nx.jit(inner, compiler=Evaluator())  # another compiler: nothing compiled yet
    assert not other.is_cached(x)
    assert other.trace_count == 0
    outer = nx.jit(nx.defn(lambda v: v + 1), compiler="evaluator")
    assert not outer.is_cached(x)
    assert outer(x).tolist() == [2.0, 3.0]
    assert outer.is_cached(x)  # the call compiled and cached it
    assert outer.trace_count == 1
    outer(x)
    assert outer.trace_count == 1
    assert not outer.is_cached(nx.tensor([1, 2]))


# ---------------------------------------------------------------- the bounded cache


def test_the_jit_cache_drops_the_least_recently_used_signature() -> None:
    f = nx.jit(lambda v: v * 2 + 1)
    xs = {n: nx.tensor(np.arange(n, dtype=np.float32)) for n in (1, 2, 3)}
    with nx.config(defn={"cache_size": 2}):
        for n in (1, 2):
            np.testing.assert_array_equal(np.asarray(f(xs[n])), np.arange(n) * 2 + 1)
        f(xs[1])  # a hit: signature 2 is now the least recently used
        got = f(xs[3])  # over the bound: 2 is dropped
        assert got.shape == (3,) and got.dtype == nx.float32
        assert [f.is_cached(xs[n]) for n in (1, 2, 3)] == [True, False, True]
        assert f.cache_info() == (1, 3, 2, 2, 1)
        info = f.cache_info()
        assert (info.hits, info.misses, info.maxsize, info.currsize, info.evictions) == (
            1, 3, 2, 2, 1
        )  # fmt: skip
        assert f.trace_count == 3
        f(xs[2])  # dropped: traced again, and 1 (least recently used) goes
        assert f.trace_count == 4
        assert [f.is_cached(xs[n]) for n in (1, 2, 3)] == [False, True, True]
        assert f.cache_info() == (1, 4, 2, 2, 2)


def test_the_jit_cache_counts_hits_of_the_general_path_too() -> None:
    # numbers and keyword arguments go through the general path; its hits count alike
    f = nx.jit(lambda v, s: v * s)
    x = nx.tensor([1.0, 2.0])
    assert f(x, 2.0).tolist() == [2.0, 4.0]
    assert f(x, s=3.0).tolist() == [3.0, 6.0]  # a new tree (s by keyword): a miss
    assert f(x, 4.0).tolist() == [4.0, 8.0]
    info = f.cache_info()
    assert (info.hits, info.misses, info.currsize, info.evictions) == (1, 2, 2, 0)
    assert info.maxsize == 64  # the default of [defn] cache_size


def test_an_evicted_program_is_released() -> None:
    f = nx.jit(lambda v: nx.exp(v) - 1)
    with nx.config(defn={"cache_size": 1}):
        f(nx.tensor([0.0]))
        (program,) = [run for run, _, _ in f.jitted._cache.values()]
        ref = weakref.ref(program)
        del program
        f(nx.tensor([0.0, 1.0]))  # evicts the f32[1] program
    gc.collect()
    assert ref() is None
    assert f.cache_info().evictions == 1 and f.cache_info().currsize == 1


def test_cache_clear_drops_every_program_and_the_counts() -> None:
    f = nx.jit(lambda v: -v)
    x = nx.tensor([1, 2], dtype=nx.int32)
    f(x)
    f(x)
    assert f.cache_info()[:2] == (1, 1)
    (program,) = [run for run, _, _ in f.jitted._cache.values()]
    ref = weakref.ref(program)
    del program
    f.cache_clear()
    gc.collect()
    assert ref() is None
    assert f.cache_info() == (0, 0, 64, 0, 0)
    assert not f.is_cached(x)
    assert f(x).tolist() == [-1, -2]  # compiled again
    assert f.trace_count == 2 and f.cache_info()[:2] == (0, 1)


def test_cache_size_is_a_setting_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from numerix.defn.jit import cache_size

    monkeypatch.setenv("NUMERIX_DEFN__CACHE_SIZE", "3")
    try:
        nx.reload_config()
        assert cache_size() == 3
        assert nx.jit(lambda v: v).cache_info().maxsize == 3
        monkeypatch.setenv("NUMERIX_DEFN__CACHE_SIZE", "0")
        with pytest.raises(
            nx.ConfigError,
            match=r"environment variable NUMERIX_DEFN__CACHE_SIZE: defn.cache_size: Input "
            r"should be greater than or equal to 1 \(got '0'\)",
        ):
            nx.reload_config()
    finally:
        monkeypatch.delenv("NUMERIX_DEFN__CACHE_SIZE")
        nx.reload_config()
    assert cache_size() == 64


def test_a_program_runs_in_its_backends_context_or_a_copy_when_it_is_in_use() -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("state", default="outside")
    ctx = contextvars.Context()
    ctx.run(var.set, "inside")
    calls: list[str] = []

    def program(a: Any) -> Any:
        calls.append(var.get())
        return a

    call = replay.in_context(ctx, program)
    assert call(1) == 1 and calls == ["inside"]
    assert var.get() == "outside"  # the caller's own context is left alone
    # in use: by this thread (a program run from inside one) ...
    assert ctx.run(call, 2) == 2 and calls[-1] == "inside"
    # ... or by another thread: a copy, holding the same values
    entered, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=ctx.run, args=(lambda: (entered.set(), release.wait(10)),))
    holder.start()
    try:
        assert entered.wait(10)
        assert call(3) == 3 and calls[-1] == "inside"
    finally:
        release.set()
        holder.join()
    # what the program itself raises goes up, and it is not run again
    n = len(calls)

    def refusing(a: Any) -> Any:
        calls.append("ran")
        raise RuntimeError("cannot enter context: raised by the program")

    with pytest.raises(RuntimeError, match="raised by the program"):
        replay.in_context(ctx, refusing)(0)
    assert calls[n:] == ["ran"]
