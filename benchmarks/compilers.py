"""numerix's compilers beside what they replace (issue 7's targets), in one run.

    python benchmarks/compilers.py            # everything installed
    python benchmarks/compilers.py --quick    # a smoke test

- xla compiler vs raw ``jax.jit`` of the same softmax (``exp(x - max(x)) / sum(...)``):
  the cached call on f32[4] (target <= 1.15x) and f32[1000][1000] (<= 1.05x), and the
  first call, trace + compile (<= 1.3x; each side a fresh function per sample).
- the evaluator on binary: the seeds' MLP predict (dense 32 -> relu -> dense 1 ->
  softmax on a f32[2][18] input) vs the same written by hand in numpy (<= 1.3x).
- the torch compiler (default mode), when numerix-torch registers one, vs numerix's
  eager torch on softmax f32[256][256] (target: faster).
- the xla compiler called with host (``binary``) arguments vs raw ``jax.jit`` called
  with the same numpy arrays (issue 13 item 4: target <= 1.2x), softmax f32[4] and
  f32[256][256], with the spread (min-max over the rounds) of each side.
- the xla compiler's flat programs (issue 17 item 3) vs ``jax.jit`` of the same function
  written with ``jax.numpy``: trace + compile of chains of 20, 2,000 and 10,000
  element-wise ops (target <= 1.1x at each size), the first call in a fresh process
  (<= 1.2x) and the cached call on softmax f32[4] and the seeds' MLP (<= 1.1x); each
  with the median and spread (min-max over the interleaved rounds).
- the torch compiler (replay and ``mode="inductor"``) vs the same function written by
  hand in torch: the cached call on the seeds' MLP and softmax f32[4] (<= 1.1x).

    python benchmarks/compilers.py --only flat    # the xla compiler's flat-program rows
    python benchmarks/compilers.py --only first   # their first-call rows
    python benchmarks/compilers.py --only cached  # their cached-call rows
    python benchmarks/compilers.py --only torch   # the torch compiler's rows
    python benchmarks/compilers.py --json         # any of these as JSON

Every result is checked against the other side before it is timed. Cached calls are
timeit medians with the two sides' loops alternating, except the flat programs' cached
calls, which alternate call by call (each round's figure the median of its calls: a
call of a few µs on XLA's CPU client is bimodal, see ``numerix.benchmarking``); results
are synchronised before the clock stops. First calls are medians over fresh functions.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np

import numerix as nx
from numerix import plugins
from numerix.benchmarking import alternate_calls

# the timing helpers of benchmarks/run.py (this folder is on sys.path when run as a script)
from run import _calibrate
from run import compare as _compare


def compare(a: Callable[[], Any], b: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """Median seconds per call of ``a`` and of ``b`` (run.py's alternating loops, 50 ms each)."""
    return _compare(a, b, repeat, min_time=0.05)


def compare_spread(
    a: Callable[[], Any], b: Callable[[], Any], repeat: int, min_time: float = 0.02
) -> tuple[list[float], list[float]]:
    """Seconds per call of ``a`` and of ``b`` in each of ``repeat`` rounds, the two sides'
    timeit loops alternating (a, b, a, b ...), for the median and the spread."""
    ta, tb = timeit.Timer(a), timeit.Timer(b)
    na, nb = _calibrate(ta, min_time), _calibrate(tb, min_time)
    ra: list[float] = []
    rb: list[float] = []
    for _ in range(repeat):
        ra.append(ta.timeit(na) / na)
        rb.append(tb.timeit(nb) / nb)
    return ra, rb


def first_calls(a: Callable[[], Any], b: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """Median seconds of ``a()`` and ``b()``, each building and calling a fresh function."""
    ra: list[float] = []
    rb: list[float] = []
    for _ in range(repeat):
        for f, r in ((a, ra), (b, rb)):
            t0 = time.perf_counter()
            f()
            r.append(time.perf_counter() - t0)
    return statistics.median(ra), statistics.median(rb)


def _row(name: str, other: str, t_nx: float, t_other: float, target: str) -> dict[str, Any]:
    return {"name": name, "other": other, "numerix_s": t_nx, "other_s": t_other,
            "ratio": t_nx / t_other, "target": target}  # fmt: skip


def nx_softmax(x: Any) -> Any:
    e = nx.exp(x - nx.max(x))
    return e / nx.sum(e)


def _synced(fn: Callable[[Any], Any], x: Any, tensor: bool) -> Callable[[], Any]:
    if tensor:
        return lambda: fn(x).data.block_until_ready()
    return lambda: fn(x).block_until_ready()


def bench_xla(repeat: int) -> list[dict[str, Any]]:
    import jax
    from jax import lax

    def jax_softmax(x: Any) -> Any:
        e = lax.exp(x - lax.reduce_max(x, tuple(range(x.ndim))))
        return e / lax.reduce_sum(e, tuple(range(x.ndim)))

    rows = []
    for shape, target in (((4,), "<= 1.15x"), ((1000, 1000), "<= 1.05x")):
        a_np = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        x = nx.tensor(a_np, backend="xla")
        jx = x.data  # the same device buffer
        f = nx.jit(nx_softmax, compiler="xla")
        g = jax.jit(jax_softmax)
        np.testing.assert_allclose(f(x).to_numpy(), np.asarray(g(jx)), rtol=1e-6, atol=1e-9)
        t_nx, t_jax = compare(_synced(f, x, True), _synced(g, jx, False), repeat)
        label = "x".join(map(str, shape))
        rows.append(_row(f"xla compiler, softmax f32[{label}], cached call", "raw jax.jit",
                         t_nx, t_jax, target))  # fmt: skip

    x = nx.tensor(np.arange(4, dtype=np.float32), backend="xla")
    jx = x.data

    def nx_first() -> None:
        # a fresh function: numerix traces, lowers and compiles again
        nx.jit(lambda v: nx_softmax(v), compiler="xla")(x).data.block_until_ready()

    def jax_first() -> None:
        jax.jit(lambda v: jax_softmax(v))(jx).block_until_ready()

    nx_first()
    jax_first()  # the xla backend's kernels and jax itself warmed once
    t_nx, t_jax = first_calls(nx_first, jax_first, max(5, repeat))
    rows.append(_row("xla compiler, softmax f32[4], first call (trace + compile)",
                     "raw jax.jit first call", t_nx, t_jax, "<= 1.3x"))  # fmt: skip
    return rows


def bench_xla_host_arguments(repeat: int) -> list[dict[str, Any]]:
    """The xla compiler called with binary tensors: their numpy payloads go to the
    ``jax.jit`` program as they are, as raw JAX code passes numpy arrays."""
    import jax
    from jax import lax

    def jax_softmax(x: Any) -> Any:
        e = lax.exp(x - lax.reduce_max(x, tuple(range(x.ndim))))
        return e / lax.reduce_sum(e, tuple(range(x.ndim)))

    rows = []
    for shape in ((4,), (256, 256)):
        a_np = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        h = nx.tensor(a_np, backend="binary")
        f = nx.jit(nx_softmax, compiler="xla")
        g = jax.jit(jax_softmax)
        np.testing.assert_allclose(f(h).to_numpy(), np.asarray(g(a_np)), rtol=1e-6, atol=1e-9)
        ra, rb = compare_spread(
            lambda f=f, h=h: f(h).data.block_until_ready(),
            lambda g=g, a=a_np: g(a).block_until_ready(),
            max(repeat, 21),
        )
        label = "x".join(map(str, shape))
        row = _row(f"xla compiler, softmax f32[{label}], binary argument", "raw jax.jit(numpy)",
                   statistics.median(ra), statistics.median(rb), "<= 1.2x")  # fmt: skip
        row["spread"] = (min(ra), max(ra), min(rb), max(rb))
        rows.append(row)
    return rows


def bench_evaluator(repeat: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((2, 18)).astype(np.float32)
    w1_np = rng.standard_normal((18, 32)).astype(np.float32)
    b1_np = rng.standard_normal((32,)).astype(np.float32)
    w2_np = rng.standard_normal((32, 1)).astype(np.float32)
    b2_np = rng.standard_normal((1,)).astype(np.float32)
    x, w1, b1, w2, b2 = (nx.tensor(a, backend="binary") for a in (x_np, w1_np, b1_np, w2_np, b2_np))

    def predict(x: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
        h = nx.maximum(nx.dot(x, w1) + b1, 0.0)
        return nx_softmax(nx.dot(h, w2) + b2)

    def np_predict(x: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
        h = np.maximum(x @ w1 + b1, np.float32(0))
        z = h @ w2 + b2
        e = np.exp(z - np.max(z))
        return e / np.sum(e)

    f = nx.jit(predict, compiler="evaluator")
    np.testing.assert_allclose(
        f(x, w1, b1, w2, b2).to_numpy(), np_predict(x_np, w1_np, b1_np, w2_np, b2_np), rtol=1e-6
    )
    t_nx, t_np = compare(
        lambda: f(x, w1, b1, w2, b2), lambda: np_predict(x_np, w1_np, b1_np, w2_np, b2_np), repeat
    )
    return [_row("evaluator on binary, MLP predict f32[2][18]", "numpy by hand", t_nx, t_np,
                 "<= 1.3x")]  # fmt: skip


def bench_torch(repeat: int) -> list[dict[str, Any]]:
    a_np = np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32)
    x = nx.tensor(a_np, backend="torch")
    f = nx.jit(nx_softmax, compiler="torch")
    np.testing.assert_allclose(f(x).to_numpy(), nx_softmax(x).to_numpy(), rtol=1e-6, atol=1e-9)
    t_c, t_e = compare(lambda: f(x), lambda: nx_softmax(x), repeat)
    return [_row("torch compiler (replay), softmax f32[256][256]", "numerix eager torch",
                 t_c, t_e, "< 1x")]  # fmt: skip


# ---------------------------------------------------------------- the xla compiler's flat programs
def _chain_ops(m: Any) -> tuple[Callable[[Any, Any], Any], ...]:
    """The chain's six ops written with the module ``m``'s ``sin`` and ``tanh`` (numerix
    or jax.numpy): the same function on each side."""
    return (
        lambda v, a: v + a,
        lambda v, a: v * a,
        lambda v, a: m.sin(v),
        lambda v, a: v - a,
        lambda v, a: m.tanh(v),
        lambda v, a: v * 0.5,
    )


def _chain(ops: tuple[Callable[[Any, Any], Any], ...], n: int) -> Callable[[Any, Any], Any]:
    """A fresh function of ``n`` element-wise ops (so jit traces and compiles it anew)."""

    def f(v: Any, a: Any) -> Any:
        for k in range(n):
            v = ops[k % len(ops)](v, a)
        return v

    return f


def _spread_row(
    name: str, other: str, ra: list[float], rb: list[float], target: str
) -> dict[str, Any]:
    row = _row(name, other, statistics.median(ra), statistics.median(rb), target)
    row["spread"] = (min(ra), max(ra), min(rb), max(rb))
    return row


def bench_xla_trace_compile(sizes: tuple[int, ...], rounds: int) -> list[dict[str, Any]]:
    """Trace + compile + one call of an n-op chain, a fresh function per sample on each
    side, the sides alternating (numerix, jax, numerix, jax ...)."""
    import jax
    import jax.numpy as jnp

    a_np = np.linspace(-1, 1, 8, dtype=np.float32)
    x, a = nx.tensor(a_np, backend="xla"), nx.tensor(a_np[::-1].copy(), backend="xla")
    jx, ja = x.data, a.data
    nx_ops, jnp_ops = _chain_ops(nx), _chain_ops(jnp)
    rows = []
    for n in sizes:
        got = nx.jit(_chain(nx_ops, n), compiler="xla")(x, a).to_numpy()
        np.testing.assert_allclose(got, np.asarray(jax.jit(_chain(jnp_ops, n))(jx, ja)),
                                   rtol=1e-5, atol=1e-6)  # fmt: skip
        ra: list[float] = []
        rb: list[float] = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            nx.jit(_chain(nx_ops, n), compiler="xla")(x, a).data.block_until_ready()
            t1 = time.perf_counter()
            jax.jit(_chain(jnp_ops, n))(jx, ja).block_until_ready()
            t2 = time.perf_counter()
            ra.append(t1 - t0)
            rb.append(t2 - t1)
        rows.append(_spread_row(f"xla compiler, {n}-op chain f32[8], trace + compile",
                                "jax.jit(jax.numpy)", ra, rb, "<= 1.1x"))  # fmt: skip
    return rows


def _mlp_data() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [
        rng.standard_normal(s).astype(np.float32) for s in ((2, 18), (18, 32), (32,), (32, 1), (1,))
    ]


def nx_mlp(x: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
    h = nx.maximum(nx.dot(x, w1) + b1, 0.0)
    return nx_softmax(nx.dot(h, w2) + b2)


def jnp_mlp(x: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
    import jax.numpy as jnp

    h = jnp.maximum(jnp.dot(x, w1) + b1, 0.0)
    z = jnp.dot(h, w2) + b2
    e = jnp.exp(z - jnp.max(z))
    return e / jnp.sum(e)


def jnp_softmax(x: Any) -> Any:
    import jax.numpy as jnp

    e = jnp.exp(x - jnp.max(x))
    return e / jnp.sum(e)


def bench_xla_cached(repeat: int, calls: int = 2000) -> list[dict[str, Any]]:
    """Cached calls of the xla compiler's program vs jax.jit of the jax.numpy version,
    the two sides taking turns call by call (:func:`numerix.benchmarking.alternate_calls`):
    per round, the median of ``calls`` calls of each side."""
    import jax

    rows = []
    soft = [np.random.default_rng(0).standard_normal(4).astype(np.float32)]
    for name, nxf, jf, data in (
        ("softmax f32[4]", nx_softmax, jnp_softmax, soft),
        ("MLP predict f32[2][18]", nx_mlp, jnp_mlp, _mlp_data()),
    ):
        ts = [nx.tensor(d, backend="xla") for d in data]
        js = [t.data for t in ts]
        f, g = nx.jit(nxf, compiler="xla"), jax.jit(jf)
        np.testing.assert_allclose(f(*ts).to_numpy(), np.asarray(g(*js)), rtol=1e-5, atol=1e-7)
        # call by call: a call of a few µs waits for XLA's worker thread, awake or
        # asleep, and a timeit loop's mean counts how many slow wake-ups fell in it
        ra, rb = alternate_calls(
            [lambda f=f, ts=ts: f(*ts).data.block_until_ready(),
             lambda g=g, js=js: g(*js).block_until_ready()],
            max(repeat, 11), calls,
        )  # fmt: skip
        rows.append(_spread_row(f"xla compiler, {name}, cached call", "jax.jit(jax.numpy)",
                                ra, rb, "<= 1.1x"))  # fmt: skip
    return rows


_FIRST_CALL = """
import sys, time, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, BENCH)
import numpy as np
import jax
import numerix as nx
import compilers as c

side, case, warm = sys.argv[1], sys.argv[2], sys.argv[3] == "warm"
data = [np.random.default_rng(0).standard_normal(4).astype(np.float32)] if case == "softmax" else c._mlp_data()
# each side's arguments as numerix's xla backend makes them: jax.device_put, which
# compiles nothing (jax.numpy.asarray compiles a conversion per argument, setting up
# XLA's compiler before the clock on that side alone)
if side == "numerix":
    args = [nx.tensor(d, backend="xla") for d in data]
    for a in args:
        a.data.block_until_ready()
else:
    args = [jax.device_put(d) for d in data]
    for a in args:
        a.block_until_ready()
if warm:  # the process's one-time XLA and MLIR set-up done, the same on both sides
    jax.jit(lambda v: v + 1)(jax.device_put(np.zeros(1, np.float32))).block_until_ready()
t, cpu = time.perf_counter(), time.process_time()
if side == "numerix":  # making the jitted function is timed: numerix loads numerix.defn then
    f = nx.jit(c.nx_softmax if case == "softmax" else c.nx_mlp, compiler="xla")
    f(*args).data.block_until_ready()
else:
    f = jax.jit(c.jnp_softmax if case == "softmax" else c.jnp_mlp)
    f(*args).block_until_ready()
print(time.perf_counter() - t, time.process_time() - cpu)
"""


def bench_xla_first_call(rounds: int) -> list[dict[str, Any]]:
    """The first call of a jitted softmax f32[4] and MLP, each sample a fresh process,
    the sides alternating. The clock runs from making the jitted function to its first
    result (after the imports and the arguments' creation, ``jax.device_put`` on both
    sides). Two set-ups: ``cold``, that call is the process's first XLA compile on both
    sides; ``warm``, both first compiled one unrelated ``jax.jit`` function, so XLA's and
    MLIR's one-time set-up is outside the clock and the rows compare numerix's own work
    (its defn machinery's first load included) with jax's. Each set-up gives a row of
    wall-clock time and one of the child's CPU time over the same interval (all its
    threads), which other processes on the machine disturb far less.

    Modules are read from their cached bytecode, as from an installed package (jax's
    are): the children write it under a private ``PYTHONPYCACHEPREFIX`` even where
    ``PYTHONDONTWRITEBYTECODE`` is set, and one unmeasured run per side fills it.
    Otherwise every module numerix imports on its first jit (the defn machinery, the
    compiler's plugin module) would be compiled from source in each sample."""
    import os
    import subprocess
    import tempfile

    bench = os.path.dirname(os.path.abspath(__file__))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "first_call.py")  # a file: the xla plugin loads from __main__
        with open(script, "w") as fh:
            fh.write(f"BENCH = {bench!r}\n" + _FIRST_CALL)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pycache")

        def run(side: str, case: str, setup: str) -> tuple[float, float]:
            out = subprocess.run([sys.executable, "-W", "ignore", script, side, case, setup],
                                 capture_output=True, text=True, check=True, env=env)  # fmt: skip
            wall, cpu = out.stdout.strip().splitlines()[-1].split()
            return float(wall), float(cpu)

        for case, label in (("softmax", "softmax f32[4]"), ("mlp", "MLP predict f32[2][18]")):
            for setup in ("cold", "warm"):
                times: dict[str, list[tuple[float, float]]] = {"numerix": [], "jax": []}
                for side in times:
                    run(side, case, setup)  # the bytecode cache filled
                for _ in range(rounds):
                    for side in ("numerix", "jax"):
                        times[side].append(run(side, case, setup))
                name = f"xla compiler, {label}, first call in a fresh process ({setup})"
                for k, clock in ((0, ""), (1, ", CPU time")):
                    # CPU time (every thread of the child) holds still where other
                    # processes share the cores and the wall clock swings with them
                    rows.append(_spread_row(
                        name + clock, "jax.jit(jax.numpy)", [t[k] for t in times["numerix"]],
                        [t[k] for t in times["jax"]], "<= 1.2x"))  # fmt: skip
    return rows


def torch_mlp(zero: Any) -> Callable[..., Any]:
    """The seeds' MLP written by hand in torch: ``maximum`` with a 0-d zero made once,
    as numerix's program holds its constant (``torch.relu`` is the other row)."""
    import torch

    def mlp(x: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
        h = torch.maximum(x @ w1 + b1, zero)
        z = h @ w2 + b2
        e = torch.exp(z - torch.max(z))
        return e / torch.sum(e)

    return mlp


def torch_mlp_relu(x: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
    import torch

    z = torch.relu(x @ w1 + b1) @ w2 + b2
    e = torch.exp(z - torch.max(z))
    return e / torch.sum(e)


def torch_softmax(x: Any) -> Any:
    import torch

    e = torch.exp(x - torch.max(x))
    return e / torch.sum(e)


def bench_torch_compiler(repeat: int, inductor: bool = True) -> list[dict[str, Any]]:
    """Cached calls of the torch compiler (replay, and ``mode="inductor"``) vs the same
    function written by hand in torch, on the seeds' MLP and softmax f32[4]; the two
    sides' loops alternating, median and spread over the rounds. torch runs on one
    thread here: on a loaded machine its thread pool's wake-ups turn these
    microsecond calls into milliseconds, on either side."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _torch_compiler_rows(repeat, inductor)
    finally:
        torch.set_num_threads(threads)


def _torch_compiler_rows(repeat: int, inductor: bool) -> list[dict[str, Any]]:
    import warnings

    import torch

    from numerix_torch.compiler import InductorFallbackWarning

    mlp_data = _mlp_data()
    soft_data = [np.random.default_rng(0).standard_normal(4).astype(np.float32)]
    zero = torch.tensor(0.0)
    cases = [
        ("MLP predict f32[2][18]", nx_mlp, torch_mlp(zero), mlp_data, "torch by hand (maximum)"),
        ("MLP predict f32[2][18]", nx_mlp, torch_mlp_relu, mlp_data, "torch by hand (relu)"),
        ("softmax f32[4]", nx_softmax, torch_softmax, soft_data, "torch by hand"),
    ]
    rows = []
    for mode in ("replay", "inductor") if inductor else ("replay",):
        for name, nxf, tf, data, other in cases:
            if mode == "inductor" and "relu" in other:
                continue
            ts = [nx.tensor(d, backend="torch") for d in data]
            raw = [t.data for t in ts]
            f = nx.jit(nxf, compiler="torch", mode=mode)
            with warnings.catch_warnings():
                warnings.simplefilter("error", InductorFallbackWarning)  # compiled, or no row
                got = f(*ts).to_numpy()
            np.testing.assert_allclose(got, tf(*raw).numpy(), rtol=1e-5, atol=1e-7)
            ra, rb = compare_spread(
                lambda f=f, ts=ts: f(*ts), lambda tf=tf, raw=raw: tf(*raw), max(repeat, 11)
            )
            rows.append(_spread_row(f"torch compiler ({mode}), {name}, cached call", other,
                                    ra, rb, "<= 1.1x"))  # fmt: skip
    return rows


def bench_flat(quick: bool) -> list[dict[str, Any]]:
    rows = bench_xla_trace_compile((20, 2000) if quick else (20, 2000, 10000), 3 if quick else 7)
    rows += bench_xla_first_call(3 if quick else 9)
    rows += bench_xla_cached(3 if quick else 11, 200 if quick else 2000)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer loops: a smoke test")
    p.add_argument("--repeat", type=int, default=11, help="timeit loops per side")
    p.add_argument(
        "--only",
        choices=("flat", "first", "cached", "torch"),
        help="the xla compiler's flat-program rows alone, their first-call rows, their "
        "cached-call rows, or the torch compiler's rows against torch by hand",
    )
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = p.parse_args(argv)
    repeat = 3 if args.quick else args.repeat
    names = set(plugins.compiler_entries())
    rows = []
    out = _json if args.json else _print
    if args.only == "flat":
        return out(bench_flat(args.quick))
    if args.only == "first":
        return out(bench_xla_first_call(3 if args.quick else 9))
    if args.only == "cached":
        return out(bench_xla_cached(repeat, 200 if args.quick else 2000))
    if args.only == "torch":
        return out(bench_torch_compiler(repeat, inductor=not args.quick))
    rows += bench_evaluator(repeat)
    rows += bench_xla(repeat)
    rows += bench_xla_host_arguments(repeat)
    if "torch" in names:
        rows += bench_torch(repeat)
        rows += bench_torch_compiler(repeat, inductor=not args.quick)
    else:
        print("(numerix-torch's compiler is not installed: no torch row)")
    rows += bench_flat(args.quick)
    return out(rows)


def _json(rows: list[dict[str, Any]]) -> int:
    import json

    print(json.dumps(rows, indent=2))
    return 0


def _print(rows: list[dict[str, Any]]) -> int:
    w = max(len(r["name"]) for r in rows)
    for r in rows:
        print(
            f"{r['name']:<{w}}  {r['numerix_s'] * 1e6:10.1f} us  vs {r['other']}: "
            f"{r['other_s'] * 1e6:10.1f} us  ratio {r['ratio']:.3f}  (target {r['target']})"
        )
        if "spread" in r:
            a0, a1, b0, b1 = (v * 1e6 for v in r["spread"])
            print(f"{'':<{w}}  min-max {a0:.1f}-{a1:.1f} us  vs {b0:.1f}-{b1:.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
