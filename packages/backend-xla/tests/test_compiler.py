"""The ``xla`` compiler: every core op traced, compiled to one jax.jit program and
compared with its eager result on the xla backend; the cache, control flow, hooks,
captured tensors, blocks and the compiler's options."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import optree
import pytest

import numerix as nx
from numerix.defn import ArgSpec
from numerix.defn.expr import BLOCK, TENSOR
from numerix.testing.defn_cases import OPS, F, branchy, spd, t
from numerix.testing.tolerances import tolerance
from numerix_xla import compiler as xc
from numerix_xla._extra import ExtraKernels


def xla(x: Any) -> Any:
    return x.to("xla")


def close(got: Any, want: Any, op: str | None = None, rtol: float | None = None) -> None:
    """Equal trees: exact dtype, shape and backend; values exact for integers and bool,
    within the kit's tolerance for the result dtype otherwise (XLA fuses the compiled
    program, so a reduction may associate differently from the eager kernels)."""
    gl, gt = optree.tree_flatten(got)
    wl, wt = optree.tree_flatten(want)
    assert gt == wt
    for g, w in zip(gl, wl):
        assert type(g) is nx.Tensor and type(w) is nx.Tensor
        assert g.dtype is w.dtype, (g.describe(), w.describe())
        assert g.shape == w.shape, (g.describe(), w.describe())
        assert g.backend is w.backend, (g.describe(), w.describe())
        a, b = g.to_numpy(), w.to_numpy()
        assert a.dtype == b.dtype == g.dtype.numpy_dtype and a.shape == g.shape
        if g.dtype.kind in "fc":
            rt, at = tolerance(op, g.dtype)
            rt = rt if rtol is None else rtol
            np.testing.assert_allclose(
                a.astype(np.complex128), b.astype(np.complex128), rtol=rt, atol=at
            )
        else:
            np.testing.assert_array_equal(a, b)


class Counting:
    """Counts the xla compiler's compile calls (monkeypatched in)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.n = 0
        orig = xc.XlaCompiler.compile

        def compile(comp: Any, *a: Any) -> Any:
            self.n += 1
            return orig(comp, *a)

        monkeypatch.setattr(xc.XlaCompiler, "compile", compile)


# ---------------------------------------------------------------- every op


@pytest.mark.parametrize(("fn", "args"), OPS)
def test_xla_compiler_every_op_equals_eager(fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    xs = [xla(a) for a in args]
    want = fn(*xs)
    jitted = nx.jit(fn, compiler="xla")
    close(jitted(*xs), want)
    close(jitted(*xs), want)
    assert jitted.trace_count == 1


def test_xla_compiler_seed_softmax_lists_and_runs() -> None:
    @nx.defn(compiler="xla")
    def softmax(x: Any) -> Any:
        return nx.exp(x - nx.max(x)) / nx.sum(nx.exp(x - nx.max(x)))

    x = xla(nx.tensor([1, 2, 3, 4]))
    got = softmax(x)
    e = np.exp(np.arange(1.0, 5.0) - 4)
    np.testing.assert_allclose(got.to_numpy(), e / e.sum(), rtol=1e-6)
    assert got.dtype is nx.float32 and got.backend is x.backend
    assert "d = as_type [ c ]" in str(nx.trace(softmax, x))


def test_xla_compiler_binary_arguments_move_to_the_device() -> None:
    a, b = t(F).to("binary"), t(F, seed=1).to("binary")
    got = nx.jit(lambda x, y: x * y + 1, compiler="xla")(a, b)
    assert got.backend.name == "xla"
    close(got, xla(a) * xla(b) + 1)
    # numbers are 0-d tensors on the other arguments' backend
    close(nx.jit(lambda x, s: x * s, compiler="xla")(xla(a), 3.0), xla(a) * xla(nx.tensor(3.0)))


def test_xla_compiler_returns_trees_parameters_and_constants() -> None:
    x = xla(t(F))
    out = nx.jit(lambda x: {"same": x, "k": 2.0, "pair": (x + 1, nx.sum(x))}, compiler="xla")(x)
    assert out["same"].backend is x.backend and out["k"].backend is x.backend
    close(out["same"], x)
    assert out["k"].dtype is nx.float32 and float(out["k"].to_numpy()) == 2.0
    close(out["pair"], (x + 1, nx.sum(x)))


# ---------------------------------------------------------------- the cache


def test_xla_compiler_cache_compiles_once_per_signature(monkeypatch: pytest.MonkeyPatch) -> None:
    count = Counting(monkeypatch)
    f = nx.jit(lambda x, n: x * n, compiler="xla", static_argnames=("n",))
    x = xla(t(F))
    assert not f.is_cached(x, n=2)
    f(x, n=2)
    assert f.is_cached(x, n=2) and count.n == 1
    f(x * 3, n=2)
    assert count.n == 1  # same signature: no recompile
    for args, kw in [((xla(t(F, (2, 2))),), {"n": 2}), ((xla(t(nx.float64)),), {"n": 2}),
                     ((x,), {"n": 3})]:  # fmt: skip
        assert not f.is_cached(*args, **kw)
        close(f(*args, **kw), args[0] * kw["n"])
        assert f.is_cached(*args, **kw)
    assert count.n == 4 and f.trace_count == 4


# ---------------------------------------------------------------- control flow and hooks


def _branchy(x: Any, n: Any) -> Any:
    # the shared control-flow case, and a nested cond
    nested = nx.cond(n > 2, lambda: nx.cond(n > 4, lambda: x * 4, lambda: x * 3), lambda: -x)
    return (*branchy(x, n), nested)


@pytest.mark.parametrize(("sign", "n"), [(1.0, 5), (-1.0, 3), (1.0, 0)])
def test_xla_compiler_cond_while_fori_equal_eager(sign: float, n: int) -> None:
    x = xla(t(F, (3,))) * sign
    nn = xla(nx.tensor(n))
    f = nx.jit(_branchy, compiler="xla")
    close(f(x, nn), _branchy(x, nn))
    g = nx.trace(_branchy, x, nn)
    assert {"cond", "while"} <= {node.op for node in g.nodes}


def test_xla_compiler_hooks_run_in_order_at_each_call_even_unused() -> None:
    seen: list[tuple[str, Any, Any]] = []

    def rec(tag: str) -> Callable[[Any], None]:
        return lambda v: seen.append((tag, v.dtype, v.to_numpy().copy()))

    def fn(x: Any) -> Any:
        nx.hook(x * 10, rec("unused"))
        y = nx.hook(x + 1, rec("used"))
        s = nx.while_loop(lambda s: s < 3, lambda s: nx.hook(s + 1, rec("loop")), nx.tensor(0))
        return y * 2, s

    f = nx.jit(fn, compiler="xla")
    x = xla(nx.tensor([1.0, 2.0]))
    for k in (1, 2):
        seen.clear()
        y, s = f(x * k)
        close(y, (x * k + 1) * 2)
        assert int(s.to_numpy()) == 3
        assert [tag for tag, _, _ in seen] == ["unused", "used", "loop", "loop", "loop"]
        np.testing.assert_array_equal(seen[0][2], np.array([10.0, 20.0]) * k)
        np.testing.assert_array_equal(seen[1][2], np.array([1.0, 2.0]) * k + 1)
        assert [int(v) for _, _, v in seen[2:]] == [1, 2, 3]
        assert seen[0][1] is nx.float32 and seen[2][1] is nx.int64


# ---------------------------------------------------------------- captured tensors


def test_xla_compiler_captured_tensors_move_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import numerix.ops._core as core

    moved: list[str] = []
    orig = core.on_backend

    def on_backend(x: Any, backend: Any) -> Any:
        if x.backend.name == "binary" and backend.name == "xla":
            moved.append(f"{x.dtype.short}{list(x.shape)}")
        return orig(x, backend)

    monkeypatch.setattr(core, "on_backend", on_backend)
    w = t(F, (40, 40)).to("binary")  # too big to be a constant: a captured tensor
    big = np.arange(2000, dtype=np.float32)
    f = nx.jit(lambda x: (x @ w, nx.tensor(big, backend="binary") * x[0, 0]), compiler="xla")
    x = xla(t(F, (3, 40)))
    r = f(x)
    want = ["f32[2000]", "f32[40, 40]"]
    assert sorted(moved) == want  # w and the big constant, when compiling
    f(x * 2)
    f(x)
    assert sorted(moved) == want  # ... and never again
    close(r[0], x @ xla(w), rtol=1e-5)
    close(r[1], xla(nx.tensor(big)) * x[0, 0])
    g = nx.trace(lambda x: x @ w + x @ w, x)
    assert [n.op for n in g.nodes].count(TENSOR) == 1


# ---------------------------------------------------------------- blocks


def test_xla_compiler_blocks_native_and_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    a = xla(spd())
    fn = lambda x: (nx.cholesky(x), nx.qr(x), nx.det(x), nx.top_k(x, 2))  # noqa: E731
    assert sum(n.op == BLOCK for n in nx.trace(fn, a).nodes) == 4
    want = fn(a)
    calls: list[str] = []
    # the method the backend's class resolves (the kit's rule check may wrap
    # ExtraKernels' on the class itself)
    cls = type(a.backend)
    assert issubclass(cls, ExtraKernels)
    orig = cls.block_cholesky

    def spy(self: Any, *args: Any, **kw: Any) -> Any:
        calls.append("native")
        return orig(self, *args, **kw)

    monkeypatch.setattr(cls, "block_cholesky", spy)
    close(nx.jit(fn, compiler="xla")(a), want, rtol=1e-5)
    assert calls == ["native"]  # block_cholesky lowered once, into the program
    # a backend without block_<name>: the core's fallback graph is lowered instead
    for name in ("block_cholesky", "block_qr", "block_det", "block_top_k"):
        monkeypatch.setattr(cls, name, None)
    close(nx.jit(fn, compiler="xla")(a), want, rtol=1e-4)


# ---------------------------------------------------------------- options


def test_xla_compiler_options_device_donation_and_refusals() -> None:
    x = xla(t(F))
    got = nx.jit(lambda x: x + 1, compiler="xla", client="host", device_id=0)(t(F).to("binary"))
    assert got.backend is x.backend
    assert got.data.devices() == {x.backend.jax_device}
    # donation: the argument's buffer goes to the program
    y = x * 1
    close(nx.jit(lambda v: v * 2, compiler="xla", donate=True)(y), x * 2)
    assert y.data.is_deleted()
    z = x * 1
    nx.jit(lambda v: v * 2, compiler="xla")(z)
    assert not z.data.is_deleted()
    with pytest.raises(nx.ArgumentError, match=r"compiler 'xla' does not take option\(s\) 'mode'"):
        nx.jit(lambda v: v, compiler="xla", mode="fast")(x)
    with pytest.raises(nx.ArgumentError, match=r"client as a name"):
        nx.jit(lambda v: v, compiler="xla", client=3)(x)
    with pytest.raises(nx.BackendOptionError, match=r"unknown client 'gpu'"):
        nx.jit(lambda v: v, compiler="xla", client="gpu")(x)


def test_xla_compiler_is_listed_and_is_one_program() -> None:
    from numerix import plugins

    assert type(plugins.get_compiler("xla")).__name__ == "XlaCompiler"
    x = xla(t(F))
    graph = nx.trace(lambda v: nx.exp(v) * 2 + nx.sum(v), x)
    run = xc.XlaCompiler().compile(graph, [ArgSpec(x.shape, x.dtype, x.backend)],
                                   xc.XlaCompiler.default_options)  # fmt: skip
    hlo = run.lowered.lower(  # type: ignore[attr-defined]
        jax.ShapeDtypeStruct(x.shape, np.float32)
    ).as_text()
    assert hlo.count("func.func public @main") == 1
    close(run([x])[0], nx.exp(x) * 2 + nx.sum(x))


# ---------------------------------------------------------------- the meeting rule, deallocation

_TWO_DEVICES = """
import json, warnings
import numerix as nx
warnings.simplefilter("ignore")
a = nx.tensor([1.0, 2.0], backend="xla:host:1")
b = nx.tensor([10.0, 20.0], backend="xla:host:0")
add = lambda x, y: x + y


def err(fn):
    try:
        fn()
    except nx.BackendMismatchError as e:
        return str(e)


r = {
    "eager": err(lambda: a + b),
    "evaluator": err(lambda: nx.jit(add, compiler="evaluator")(a, b)),
    "xla": err(lambda: nx.jit(add, compiler="xla")(a, b)),
    "option": err(lambda: nx.jit(lambda x: x + 1, compiler="xla", device_id=0)(a)),
}
c = nx.compile(lambda x: x + 1, nx.template((2,), nx.float32, backend="xla:host:0"),
               compiler="xla")
r["compiled"] = err(lambda: c(a))
out = nx.jit(add, compiler="xla")(a, nx.tensor([1.0, 1.0]))  # host data joins device 1
r["host_joins"] = [out.describe(), [d.id for d in out.data.devices()], out.tolist()]
print(json.dumps(r))
"""


def test_xla_compiler_refuses_two_devices_as_eager_code_does() -> None:
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=2"}
    out = subprocess.run(
        [sys.executable, "-c", _TWO_DEVICES], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    both = "f32[2] xla(host:1), {0} 1: f32[2] xla(host:0)); move them to one first, e.g. " \
        "numerix.backend_transfer(t, 'xla', client='host', device_id=1)"  # fmt: skip
    assert r["eager"] == "add: operands live on different backends or devices (operand 0: " + (
        both.format("operand")
    )
    jit = "jit: arguments live on different backends or devices (argument 0: " + both.format(
        "argument"
    )
    assert r["evaluator"] == r["xla"] == jit  # the xla compiler merged them before
    assert r["option"] == (
        "jit: arguments live on different backends or devices (argument 0: f32[2] xla(host:1); "
        "the program runs on xla(host:0)); move them to one first, e.g. "
        "numerix.backend_transfer(t, 'xla', client='host', device_id=0)"
    )
    assert r["compiled"].startswith("compile: arguments live on different backends or devices")
    assert "argument 0: f32[2] xla(host:1); the program runs on xla(host:0)" in r["compiled"]
    assert r["host_joins"] == ["f32[2] xla(host:1)", [1], [2.0, 3.0]]


def test_xla_compiler_takes_host_arguments_as_numpy_payloads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from numerix.ops import _core as core

    h = t(F, (3, 4)).to("binary")
    x = xla(t(F, (4,)))
    fn = lambda a, b: nx.exp(a) * b + 1  # noqa: E731
    f = nx.jit(fn, compiler="xla")
    close(f(h, x), fn(xla(h), x))
    moved: list[str] = []
    orig = core.on_backend
    monkeypatch.setattr(core, "on_backend", lambda v, b: moved.append(v.describe()) or orig(v, b))
    for k in range(3):
        a = t(F, (3, 4), seed=k).to("binary")
        r = f(a, x)
        assert r.backend is x.backend and r.data.devices() == {x.backend.jax_device}
        close(r, fn(xla(a), x))
    assert moved == []  # jax.jit puts the numpy payloads on the device itself
    # donation: device buffers are donated, host ones (numpy) are not asked to be
    y = xla(h) * 1
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # jax warns of donated buffers it cannot use
        close(nx.jit(lambda a, b: a + b, compiler="xla", donate=True)(h, y), xla(h) * 2)
    assert y.data.is_deleted()


def test_compiled_program_on_xla_takes_host_and_its_device_refuses_others() -> None:
    host = nx.template((2,), nx.float32, backend="binary")
    c = nx.compile(lambda v: v * 2, host, compiler="xla")
    x = nx.tensor([1.0, 2.0], backend="xla")
    for arg in (x, nx.tensor([1.0, 2.0], backend="binary")):
        r = c(arg)
        assert r.backend is x.backend and r.tolist() == [2.0, 4.0]
    on_binary = nx.compile(lambda v: v * 2, host, compiler="evaluator")
    with pytest.raises(
        nx.BackendMismatchError,
        match=r"^compile: arguments .*\(argument 0: f32\[2\] xla\(host:0\); the program runs on "
        r"binary\(cpu\)\); move them to one first, e.g. numerix.backend_transfer\(t, 'binary'",
    ):
        on_binary(x)  # it was moved to binary and run there


@pytest.mark.parametrize("compiler", ["xla", "evaluator"])
def test_deallocated_tensors_under_the_xla_compiler(compiler: str) -> None:
    w = nx.tensor(np.arange(300, dtype=np.float32), backend="xla")  # captured, not a literal
    f = nx.jit(lambda v: v + w, compiler=compiler)
    x = nx.ones((300,), backend="xla")
    assert f(x).tolist() == (np.arange(300) + 1.0).tolist()
    nx.backend_deallocate(w)
    with pytest.raises(
        nx.DeallocatedError,
        match=r"^jit: a tensor the program captured when it was compiled \(f32\[300\]\) was "
        r"deallocated with numerix.backend_deallocate",
    ):
        f(x)  # jax's "Array has been deleted" before
    dead = nx.ones((2,), backend="xla")
    nx.backend_deallocate(dead)
    assert repr(dead) == "Tensor<f32[2] deallocated>"
    with pytest.raises(nx.DeallocatedError, match=r"^jit: argument 1 \(f32\[2\]\) was dealloc"):
        nx.jit(lambda a, b: a + b, compiler=compiler)(nx.ones((2,), backend="xla"), dead)
    with pytest.raises(nx.DeallocatedError, match=r"^add: operand 0 \(f32\[2\]\) was dealloc"):
        dead + nx.ones((2,), backend="xla")  # it suggested backend_transfer(t, 'deallocated')


def test_xla_compiler_is_cached_answers_for_this_jit() -> None:
    x = xla(t(F))
    inner = nx.defn(lambda v: v * 2)
    inner(x)  # compiled by the default compiler (the evaluator)
    g = nx.jit(inner, compiler="xla")
    assert not g.is_cached(x) and g.trace_count == 0  # it said True: the inner's cache
    close(g(x), x * 2)
    assert g.is_cached(x) and g.trace_count == 1
    h = nx.jit(nx.defn(lambda v: v + 1), compiler="xla")
    assert not h.is_cached(x)
    h(x)
    assert h.is_cached(x) and h.trace_count == 1  # it said False after the call


_FIRST_JIT = """
import sys
import numpy as np
import numerix as nx
x = nx.tensor(np.array([[1.5, -2.0, 0.25], [-1.0, 0.0, 0.0]], np.float32), backend="xla")
w = nx.tensor(np.array([[2.0], [1.0], [4.0]], np.float32), backend="xla")
f = nx.jit(lambda x, w: (nx.maximum(nx.dot(x, w) * 0.5, 0.0), 2.5), compiler="xla")
h, k = f(x, w)
print(h.dtype, h.to_numpy().tolist(), k.dtype, k.to_numpy().tolist())
print([m for m in ("numerix_binary", "numerix_torch", "optree") if m in sys.modules])
"""


def test_first_jit_with_python_scalars_loads_no_other_backend_nor_optree() -> None:
    # a Python scalar in the trace is a constant holding a numpy value: the binary
    # backend (2-3 ms to load) stays out of the xla compiler's first call; flat arguments
    # and a tuple of results need no optree (6 ms)
    r = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", _FIRST_JIT], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    values, others = r.stdout.strip().splitlines()
    # (3 - 2 + 1) * 0.5 = 1 and -2 * 0.5 = -1, then the maximum with 0.0
    assert values == "float32 [[1.0], [0.0]] float32 2.5"
    assert others == "[]"
