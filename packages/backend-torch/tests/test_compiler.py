"""The ``torch`` compiler: the core's defn op cases compiled and compared with eager torch,
the cache, control flow, hooks, captured tensors, blocks, options and inductor mode."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import optree
import pytest
import torch

import numerix as nx
from numerix.defn.expr import BLOCK
from numerix.testing.defn_cases import OPS, F, branchy, same, spd, t
from numerix_torch.backend import TorchBackend
from numerix_torch.compiler import InductorFallbackWarning, TorchCompiler


def on_torch(tree: Any) -> Any:
    return optree.tree_map(
        lambda x: nx.backend_transfer(x, "torch", device="cpu") if type(x) is nx.Tensor else x,
        tree,
    )


def tj(fn: Callable[..., Any], **kw: Any) -> Any:
    return nx.jit(fn, compiler="torch", **kw)


# ---------------------------------------------------------------- every op


@pytest.mark.parametrize(("fn", "args"), OPS)
def test_torch_compiler_every_op_equals_eager(
    fn: Callable[..., Any], args: tuple[Any, ...]
) -> None:
    args = on_torch(args)
    want = fn(*args)  # eager on torch: the same kernels, so the very same values
    jitted = tj(fn)
    got = jitted(*args)
    same(got, want)
    same(jitted(*args), want)  # the shells are reused: a second run is as good
    assert jitted.trace_count == 1
    assert all(r.backend.name == "torch" for r in optree.tree_leaves(got))


def test_torch_compiler_is_registered() -> None:
    assert "torch" in nx.plugins.compiler_entries()
    assert isinstance(nx.plugins.get_compiler("torch"), TorchCompiler)


# ---------------------------------------------------------------- the seed's softmax, the cache


def softmax(x: Any) -> Any:
    max_val = nx.max(x)
    return nx.exp(x - max_val) / nx.sum(nx.exp(x - max_val))


def test_torch_compiler_seed_softmax_and_cache() -> None:
    f = tj(softmax)
    x = on_torch(t(F, (4,)))
    same(f(x), softmax(x))
    same(f(x * 2), softmax(x * 2))
    assert f.trace_count == 1
    assert f.is_cached(on_torch(t(F, (4,), seed=3)))
    assert not f.is_cached(on_torch(t(F, (5,))))  # new shape
    assert not f.is_cached(on_torch(t(nx.float64, (4,))))  # new dtype
    assert f.trace_count == 1
    same(f(on_torch(t(F, (5,)))), softmax(on_torch(t(F, (5,)))))
    same(f(on_torch(t(nx.float64, (4,)))), softmax(on_torch(t(nx.float64, (4,)))))
    assert f.trace_count == 3
    s = tj(lambda x, axis: nx.sum(x, axis=axis), static_argnames=("axis",))
    s(x[None], 0)
    s(x[None], 0)
    assert s.trace_count == 1 and not s.is_cached(x[None], 1)
    same(s(x[None], 1), nx.sum(x[None], axis=1))
    assert s.trace_count == 2 and s.is_cached(x[None], 1)


def test_torch_compiler_seed_mlp_predict() -> None:
    w1, b1 = on_torch((t(F, (18, 32)), t(F, (32,), seed=1)))
    w2, b2 = on_torch((t(F, (32, 1), seed=2), t(F, (1,), seed=3)))

    def predict(x: Any) -> Any:  # the weights are captured tensors
        h = nx.maximum(x @ w1 + b1, 0.0)
        return nx.softmax(h @ w2 + b2, axis=-1)

    x = on_torch(t(F, (2, 18), seed=4))
    same(tj(predict)(x), predict(x))


def test_torch_compiler_train_step_equals_torch_autograd() -> None:
    """A training step (value_and_grad and an SGD update) as one program: the same loss
    and parameters as torch's autograd, and a program of torch's backward kernels: no
    transpose of a weight's gradient (the update reads it contiguously), tanh's and
    log_softmax's derivatives one call each."""
    rng = np.random.default_rng(0)
    arrays = [
        rng.standard_normal(s).astype(np.float32) * 0.3 for s in ((12, 8), (8,), (8, 3), (3,))
    ]
    x = rng.random((5, 12), dtype=np.float32)
    y = np.eye(3, dtype=np.float32)[[0, 2, 1, 1, 0]]

    def loss(params: Any, x: Any, y: Any) -> Any:
        w1, b1, w2, b2 = params
        h = nx.tanh(x @ w1 + b1)
        return -nx.mean(nx.sum(y * nx.log_softmax(h @ w2 + b2, axis=-1), axis=-1))

    def step(params: Any, x: Any, y: Any) -> Any:
        value, grads = nx.value_and_grad(loss)(params, x, y)
        return value, [p - 0.1 * g for p, g in zip(params, grads)]

    args = ([nx.tensor(a, backend="torch") for a in arrays], *on_torch((x, y)))
    value, new = tj(step)(*args)
    source = nx.compile(step, *args, compiler="torch").run.program.source
    assert "# transpose" not in source and "# reshape" not in source
    assert source.count("# block_tanh_grad") == source.count("# block_log_softmax_grad") == 1
    tp = [torch.tensor(a, requires_grad=True) for a in arrays]
    w1, b1, w2, b2 = tp
    h = torch.tanh(torch.tensor(x) @ w1 + b1)
    want = -(torch.tensor(y) * torch.log_softmax(h @ w2 + b2, dim=-1)).sum(-1).mean()
    want.backward()
    np.testing.assert_allclose(value.item(), want.item(), rtol=1e-6)
    for p, q in zip(new, tp):
        assert q.grad is not None
        want_p = (q - 0.1 * q.grad).detach().numpy()
        np.testing.assert_allclose(p.to_numpy(), want_p, rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------- control flow and hooks


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_torch_compiler_control_flow(sign: float) -> None:
    x, n = on_torch((nx.tensor([1.0, 2.0]) * sign, nx.tensor(4)))
    f = tj(branchy)
    got = f(x, n)
    assert [v.tolist() for v in optree.tree_leaves(got)] == [
        v.tolist() for v in optree.tree_leaves(branchy(x, n))
    ]
    assert got[0].tolist() == ([2.0, 4.0] if sign > 0 else [-3.0, -4.0])
    assert got[2].tolist() == [6.0, 6.0]
    assert f(x, on_torch(nx.tensor(2)))[1][0].item() == 2
    assert f.trace_count == 1


def test_torch_compiler_loop_state_swaps_and_nesting() -> None:
    # the body reads its old state after writing a new value: the state must not alias
    def fn(a: Any, b: Any, x: Any) -> Any:
        def body(i: Any, s: Any) -> Any:
            p, q = s
            inner = nx.cond(i % 2 == 0, lambda v: v + x, lambda v: v - 1.0, q)
            return (p + 1.0, p * inner)

        return nx.fori_loop(0, 5, body, (a, b))

    a, b, x = on_torch((nx.tensor([1.0, 2.0]), nx.tensor([3.0, 4.0]), nx.tensor(0.5)))
    same(tj(fn)(a, b, x), fn(a, b, x))


def test_torch_compiler_hooks_run_at_execution_time() -> None:
    seen: list[Any] = []

    def fn(x: Any) -> Any:
        y = nx.hook(x * 2, lambda v: seen.append((v.backend.name, v.tolist())))
        nx.hook(y + 1, lambda v: seen.append(("unused", v.tolist())))  # result unused: runs
        return y

    f = tj(fn)
    assert f(on_torch(nx.tensor([1, 2]))).tolist() == [2, 4]
    assert f(on_torch(nx.tensor([3, 4]))).tolist() == [6, 8]
    assert seen == [("torch", [2, 4]), ("unused", [3, 5]), ("torch", [6, 8]), ("unused", [7, 9])]


# ---------------------------------------------------------------- captured tensors


def test_torch_compiler_captured_tensors_move_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import numerix.ops._core as core

    moved: list[Any] = []
    real = core.on_backend  # where a captured tensor moves to the program's backend

    def counting(v: Any, b: Any) -> Any:
        if not b.is_tracing:  # not the trace capturing it
            moved.append(v.describe())
        return real(v, b)

    w = nx.backend_transfer(t(F, (40, 40)), "binary")  # captured, too big for a constant
    x = on_torch(t(F, (3, 40)))
    monkeypatch.setattr(core, "on_backend", counting)
    f = tj(lambda x: x @ w)
    r1 = f(x)
    assert moved == ["f32[40][40] binary(cpu)"]  # once, when compiling
    r2 = f(x * 2)
    f(x)
    assert len(moved) == 1  # never again
    assert r1.backend.name == "torch"
    np.testing.assert_allclose(r2.to_numpy(), (x * 2).to_numpy() @ w.to_numpy(), rtol=1e-5)


# ---------------------------------------------------------------- blocks


def test_torch_compiler_blocks_run_natively(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = TorchBackend.block_cholesky

    def spy(self: Any, out: Any, x: Any, **kw: Any) -> Any:
        calls.append("cholesky")
        return real(self, out, x, **kw)

    monkeypatch.setattr(TorchBackend, "block_cholesky", spy)
    a = on_torch(spd())
    fn = lambda x: (nx.cholesky(x), nx.eigh(x))  # noqa: E731
    f = tj(fn)
    got = f(a)
    f(a)
    assert calls == ["cholesky", "cholesky"]
    calls.clear()
    same(got, fn(a))


def test_torch_compiler_block_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("block_cholesky", "block_qr", "block_det", "block_eigh"):
        monkeypatch.setattr(TorchBackend, name, None)
    a = on_torch(spd())
    fn = lambda x: (nx.cholesky(x), nx.qr(x), nx.det(x))  # noqa: E731
    g = nx.trace(fn, a)
    assert [n.value.name for n in g.nodes if n.op == BLOCK] == ["cholesky", "qr", "det"]
    same(tj(fn)(a), fn(a))  # eagerly the core's fallback runs too


# ---------------------------------------------------------------- options, threads


def test_torch_compiler_options() -> None:
    x = nx.backend_transfer(t(F, (2, 3)), "binary")  # moved to the compiler's device per call
    r = tj(lambda x: nx.exp(x), device="cpu")(x)
    assert r.backend == nx.get_backend("torch", device="cpu")
    np.testing.assert_allclose(r.to_numpy(), np.exp(x.to_numpy()), rtol=1e-6)
    with pytest.raises(
        nx.ArgumentError, match=r"compiler 'torch': unknown mode 'fast'; modes are replay, inductor"
    ):
        tj(lambda x: x, mode="fast")(x)
    with pytest.raises(nx.ArgumentError, match=r"it accepts: mode, device, device_id"):
        tj(lambda x: x, client="cpu")(x)


def test_torch_compiler_concurrent_calls_do_not_share_shells() -> None:
    f = tj(lambda x: nx.sum(nx.exp(x) * x, axis=1))
    xs = [on_torch(t(F, (64, 64), seed=i)) for i in range(8)]
    want = [nx.sum(nx.exp(x) * x, axis=1).to_numpy() for x in xs]
    errors: list[str] = []

    def work(i: int) -> None:
        for _ in range(50):
            if not np.array_equal(f(xs[i]).to_numpy(), want[i]):
                errors.append(f"thread {i}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []


# ---------------------------------------------------------------- inductor


def test_torch_compiler_inductor_softmax() -> None:
    x = on_torch(t(F, (8, 8)))
    f = tj(softmax, mode="inductor")
    with warnings.catch_warnings():
        warnings.simplefilter("error", InductorFallbackWarning)  # really compiled
        r = f(x)
    assert r.dtype is F and r.shape == (8, 8) and r.backend.name == "torch"
    np.testing.assert_allclose(r.to_numpy(), softmax(x).to_numpy(), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(f(x * 2).to_numpy(), softmax(x * 2).to_numpy(), rtol=1e-5)
    assert f.trace_count == 1


def test_torch_compiler_inductor_compiles_the_seed_mlp() -> None:
    # captured weights and the 0-d constant of maximum(..., 0.0) are real tensors in a
    # graph traced on fake ones: inductor compiled none of it while make_fx refused them
    w1, b1 = on_torch((t(F, (18, 32)), t(F, (32,), seed=1)))
    w2, b2 = on_torch((t(F, (32, 1), seed=2), t(F, (1,), seed=3)))

    def predict(x: Any) -> Any:
        h = nx.maximum(x @ w1 + b1, 0.0)
        return nx.softmax(h @ w2 + b2, axis=0)

    x = on_torch(t(F, (2, 18), seed=4))
    f = tj(predict, mode="inductor")
    with warnings.catch_warnings():
        warnings.simplefilter("error", InductorFallbackWarning)  # really compiled
        r = f(x)
        r2 = f(x * 2)
        xt = nx.transpose(on_torch(t(F, (18, 2), seed=5)))  # a strided view
        assert not xt.data.is_contiguous()
        r3 = f(xt)
    xs, a1, c1, a2, c2 = (v.to_numpy() for v in (x, w1, b1, w2, b2))

    def oracle(v: np.ndarray) -> np.ndarray:
        z = np.maximum(v @ a1 + c1, np.float32(0)) @ a2 + c2
        e = np.exp(z - z.max(axis=0))
        return e / e.sum(axis=0)

    assert r.dtype is F and r.shape == (2, 1) and r.backend.name == "torch"
    np.testing.assert_allclose(r.to_numpy(), oracle(xs), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(r2.to_numpy(), oracle(xs * 2), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(r3.to_numpy(), oracle(xt.to_numpy()), rtol=1e-5, atol=1e-7)
    assert f.trace_count == 1


def test_threefry_block_is_traced_out_of_place_for_inductor() -> None:
    # the block's kernel works in place eagerly; traced for inductor it is written out
    # of place (inductor took more than five minutes over the in-place chain), the same bits
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    from numerix_torch._random import threefry2x32, tracing_for_graph

    rng = np.random.default_rng(8)
    words = [torch.from_numpy(rng.integers(0, 2**32, s, dtype=np.uint32)) for s in
             [(), (3, 1), (1, 4), (3, 4)]]  # fmt: skip
    eager = threefry2x32(*words, (3, 4))
    with tracing_for_graph():
        graph = threefry2x32(*words, (3, 4))
        gm = make_fx(lambda *w: threefry2x32(*w, (3, 4)), tracing_mode="fake")(*words)
    for a, b in zip(eager, graph, strict=True):
        assert a.dtype == b.dtype == torch.uint32 and a.shape == b.shape == (3, 4)
        assert torch.equal(a.view(torch.int32), b.view(torch.int32))
    ops = [str(n.target).split(".") for n in gm.graph.nodes if n.op == "call_function"]
    in_place = [op for op in ops if op[1][-1:] == "_" != op[1][:1] or op[2].endswith("out")]
    assert ops and not in_place, in_place


def test_torch_compiler_inductor_compiles_threefry() -> None:
    key = nx.random.key(3, backend="torch")
    f = tj(lambda k: nx.random.uniform(k, (6,)), mode="inductor")
    with warnings.catch_warnings():
        warnings.simplefilter("error", InductorFallbackWarning)  # really compiled
        r = f(key)
    want = nx.random.uniform(nx.random.key(3, backend="binary"), (6,))
    assert r.dtype is nx.float32 and r.shape == (6,) and r.backend.name == "torch"
    np.testing.assert_array_equal(r.to_numpy(), want.to_numpy(), strict=True)


def test_torch_compiler_inductor_falls_back_on_control_flow() -> None:
    x, n = on_torch((nx.tensor([1.0, 2.0]), nx.tensor(4)))
    with pytest.warns(InductorFallbackWarning, match=r"cond, while node\(s\).*replay mode"):
        got = tj(branchy, mode="inductor")(x, n)
    assert [v.tolist() for v in optree.tree_leaves(got)] == [
        v.tolist() for v in optree.tree_leaves(branchy(x, n))
    ]


# ---------------------------------------------------------------- the meeting rule, deallocation


@pytest.fixture
def elsewhere() -> Any:
    """A non-host backend that is not torch (numpy kernels): what the torch compiler met
    as an xla tensor."""
    from numerix_binary.backend import BinaryBackend

    class Elsewhere(BinaryBackend):
        name = "elsewhere"
        is_host = False

        def from_numpy(self, out: Any, array: np.ndarray) -> Any:
            out.data = np.array(array, copy=True)
            return out

        def from_dlpack(self, out: Any, source: Any) -> None:
            return None

    nx.register_backend("elsewhere", Elsewhere, replace=True)
    yield nx.get_backend("elsewhere")
    nx.unregister_backend("elsewhere")


def test_torch_compiler_refuses_another_backend_as_eager_code_does(elsewhere: Any) -> None:
    e = nx.tensor([1.0, 2.0], backend=elsewhere)
    x = on_torch(nx.tensor([1.0, 2.0]))
    with pytest.raises(nx.BackendMismatchError, match=r"^add: operands .*elsewhere\(cpu\)"):
        e + x
    with pytest.raises(
        nx.BackendMismatchError,
        match=r"^jit: arguments live on different backends or devices \(argument 0: f32\[2\] "
        r"elsewhere\(cpu\); the program runs on torch\(cpu\)\); move them to one first, e.g. "
        r"numerix.backend_transfer\(t, 'torch', device='cpu'",
    ):
        tj(lambda v: v + 1)(e)  # it was pulled onto torch
    with pytest.raises(nx.BackendMismatchError, match=r"argument 0: f32\[2\] elsewhere\(cpu\), "):
        tj(lambda a, b: a + b)(e, x)
    h = nx.tensor([1.0, 2.0], backend="binary")
    r = tj(lambda a, b: a + b)(h, x)  # host data joins torch
    assert r.backend is x.backend and r.tolist() == [2.0, 4.0]


def test_compiled_program_takes_host_and_its_backend_refuses_others() -> None:
    host = nx.template((2,), nx.float32, backend="binary")
    x = on_torch(nx.tensor([1.0, 2.0]))
    on_binary = nx.compile(lambda v: v * 2, host, compiler="evaluator")
    with pytest.raises(
        nx.BackendMismatchError,
        match=r"^compile: arguments .*\(argument 0: f32\[2\] torch\(cpu\); the program runs on "
        r"binary\(cpu\)\)",
    ):
        on_binary(x)  # it was moved to binary and run there
    c = nx.compile(lambda v: v * 2, host, compiler="torch")
    for arg in (x, nx.tensor([1.0, 2.0], backend="binary")):
        r = c(arg)
        assert r.backend is x.backend and r.tolist() == [2.0, 4.0]


def test_torch_compiler_deallocated_arguments_and_is_cached() -> None:
    x = on_torch(t(F))
    dead = on_torch(t(F))
    nx.backend_deallocate(dead)
    assert repr(dead) == "Tensor<f32[3][4] deallocated>"
    with pytest.raises(nx.DeallocatedError, match=r"^jit: argument 1 \(f32\[3\]\[4\]\) was deal"):
        tj(lambda a, b: a + b)(x, dead)
    with pytest.raises(nx.DeallocatedError, match=r"^add: operand 1 \(f32\[3\]\[4\]\) was deal"):
        x + dead  # it suggested backend_transfer(t, 'deallocated')
    inner = nx.defn(lambda v: v * 2)
    inner(x)  # compiled by the default compiler
    g = tj(inner)
    assert not g.is_cached(x) and g.trace_count == 0  # it said True: the inner's cache
    same(g(x), x * 2)
    assert g.is_cached(x) and g.trace_count == 1
    h = tj(nx.defn(lambda v: v + 1))
    assert not h.is_cached(x)
    h(x)
    assert h.is_cached(x) and h.trace_count == 1  # it said False after the call


_INDUCTOR_TWICE = """
import json, sys
import numpy as np
import numerix as nx
x = nx.tensor(np.arange(4, dtype=np.float32), backend="torch")
w = nx.tensor(np.full(4, 2.0, np.float32), backend="torch")
f = nx.jit(lambda x: nx.softmax(x * w, axis=-1), compiler="torch", mode="inductor")
out = f(x).to_numpy().tolist()
imported = sorted(m for m in ("torch._inductor", "torch._dynamo") if m in sys.modules)
print(json.dumps({"out": out, "imported": imported}))
"""


def test_inductor_keeps_a_package_the_next_process_loads_without_inductor(tmp_path) -> None:
    import json
    import os
    import shutil
    import subprocess
    import sys

    from numerix_torch.compiler import _load_package, package_file

    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMERIX_", "TORCHINDUCTOR"))}
    env["NUMERIX_COMPILE__CACHE_DIR"] = str(tmp_path / "programs")
    runs = []
    for _ in range(2):
        run = subprocess.run([sys.executable, "-c", _INDUCTOR_TWICE], env=env,
                             capture_output=True, text=True, timeout=600)  # fmt: skip
        assert run.returncode == 0, run.stderr[-3000:]
        assert "Warning" not in run.stderr, run.stderr[-3000:]
        runs.append(json.loads(run.stdout.strip().splitlines()[-1]))
    first, second = runs
    kept = sorted((tmp_path / "programs" / "numerix-torch").glob("*.pt2"))
    assert len(kept) == 1
    # the first process compiled (inductor imported); the second loaded the package
    assert first["imported"] == ["torch._dynamo", "torch._inductor"]
    assert second["imported"] == []
    want = np.exp(np.arange(4) * 2.0) / np.exp(np.arange(4) * 2.0).sum()
    np.testing.assert_allclose(second["out"], want, rtol=1e-6)
    assert first["out"] == second["out"]
    # a captured tensor is a constant of the package: its value is part of the key
    backend = nx.get_backend("torch")
    x = nx.template((4,), nx.float32, backend=backend)
    paths = []
    with nx.config(compile={"cache_dir": str(tmp_path / "programs")}):
        for v in (2.0, 2.0, 3.0):
            w = nx.tensor(np.full(4, v, np.float32), backend="torch")
            g = nx.trace(lambda x, w=w: nx.softmax(x * w, axis=-1), x)
            paths.append(package_file(g, [x], backend))
    assert paths[0] == paths[1] == str(kept[0]) and paths[2] != paths[0]
    # a package that is not whole is never loaded (it is machine code)
    assert _load_package(str(kept[0]), backend) is not None
    cut = tmp_path / "cut.pt2"
    shutil.copy(kept[0], cut)
    shutil.copy(str(kept[0]) + ".sha256", str(cut) + ".sha256")
    data = bytearray(cut.read_bytes())
    data[len(data) // 2] ^= 0xFF
    cut.write_bytes(bytes(data))
    assert _load_package(str(cut), backend) is None
    (tmp_path / "cut.pt2.sha256").unlink()
    shutil.copy(kept[0], cut)
    assert _load_package(str(cut), backend) is None  # no digest beside it
