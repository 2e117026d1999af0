"""value_and_grad of the seeds' MLP beside each backend's own way of differentiating,
and the cost of tracing and differentiating long op chains.

    python benchmarks/grad.py            # every installed backend
    python benchmarks/grad.py --quick    # a smoke test
    python benchmarks/grad.py --only torch --threads 1   # part a, torch alone

On a shared machine pin one thread per library, or thread pools stalling on a busy
core swamp the figures (torch's medians moved 20x between runs here):

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/grad.py --threads 1

a. value_and_grad of a 784 -> 128 -> 10 MLP (relu, softmax cross-entropy) on a batch of
   64, float32, cached calls:
   - xla compiler (``nx.jit(nx.value_and_grad(loss), compiler="xla")``) beside raw
     ``jax.jit(jax.value_and_grad(loss))``;
   - evaluator on binary beside a hand-written numpy forward and backward pass;
   - torch compiler beside torch eager autograd (forward, ``loss.backward()``).
   The two sides' timeit loops alternate; each side's median and spread (min-max over
   the rounds) are printed, with the ratio of medians. Results are checked against each
   other first and synchronised before the clock stops.
b. the first call (trace, differentiate, compile, run) of the xla and torch sides, each
   in fresh interpreters (median of a few).
c. ``numerix.trace(numerix.grad(f))`` of chains of n element-wise ops: seconds per op
   should stay flat as n grows (linear cost).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np

import numerix as nx

SIZES = (784, 128, 10)
BATCH = 64


def compare(
    fn_a: Callable[[], Any], fn_b: Callable[[], Any], repeat: int, min_time: float = 0.05
) -> tuple[list[float], list[float]]:
    """Seconds per call of each, one figure per round; the rounds alternate a, b, a, b."""
    ta, tb = timeit.Timer(fn_a), timeit.Timer(fn_b)
    na = nb = 1
    while ta.timeit(na) < min_time:
        na *= 2
    while tb.timeit(nb) < min_time:
        nb *= 2
    ra: list[float] = []
    rb: list[float] = []
    for _ in range(repeat):
        ra.append(ta.timeit(na) / na)
        rb.append(tb.timeit(nb) / nb)
    return ra, rb


def _fmt(xs: list[float]) -> str:
    us = [x * 1e6 for x in xs]
    return f"{statistics.median(us):9.1f} us ({min(us):.1f}-{max(us):.1f})"


def report(name: str, ours: list[float], theirs: list[float], raw: str) -> None:
    ratio = statistics.median(ours) / statistics.median(theirs)
    print(f"{name:34s} numerix {_fmt(ours)}   {raw:28s} {_fmt(theirs)}   ratio {ratio:5.2f}")


def data() -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    n_in, hidden, n_out = SIZES
    params = [
        (rng.standard_normal((n_in, hidden)) * np.sqrt(2 / n_in)).astype(np.float32),
        np.zeros(hidden, np.float32),
        (rng.standard_normal((hidden, n_out)) * np.sqrt(2 / hidden)).astype(np.float32),
        np.zeros(n_out, np.float32),
    ]
    x = rng.random((BATCH, n_in), dtype=np.float32)
    y = np.eye(n_out, dtype=np.float32)[rng.integers(0, n_out, BATCH)]
    return params, x, y


def nx_loss(params: list[Any], x: Any, y: Any) -> Any:
    w1, b1, w2, b2 = params
    h = nx.relu(nx.dot(x, w1) + b1)
    return -nx.mean(nx.sum(y * nx.log_softmax(nx.dot(h, w2) + b2, axis=-1), axis=-1))


def numpy_value_and_grad(params: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> Any:
    w1, b1, w2, b2 = params
    z1 = x @ w1 + b1
    h = np.maximum(z1, 0)
    z2 = h @ w2 + b2
    z2 = z2 - z2.max(axis=-1, keepdims=True)
    logp = z2 - np.log(np.exp(z2).sum(axis=-1, keepdims=True))
    loss = -(y * logp).sum(axis=-1).mean()
    dz2 = (np.exp(logp) - y) / x.shape[0]
    dz1 = (dz2 @ w2.T) * (z1 > 0)
    return loss, [x.T @ dz1, dz1.sum(0), h.T @ dz2, dz2.sum(0)]


def bench_binary(repeat: int) -> None:
    params, x, y = data()
    step = nx.jit(nx.value_and_grad(nx_loss), compiler="evaluator")
    ps, tx, ty = [nx.tensor(p) for p in params], nx.tensor(x), nx.tensor(y)
    loss, grads = step(ps, tx, ty)
    want_loss, want = numpy_value_and_grad(params, x, y)
    np.testing.assert_allclose(loss.item(), want_loss, rtol=1e-5)
    for g, w in zip(grads, want):
        np.testing.assert_allclose(g.to_numpy(), w, rtol=1e-4, atol=1e-6)
    ours, theirs = compare(
        lambda: step(ps, tx, ty), lambda: numpy_value_and_grad(params, x, y), repeat
    )
    report("binary: evaluator", ours, theirs, "hand-written numpy")


def bench_xla(repeat: int) -> None:
    import jax
    import jax.numpy as jnp

    params, x, y = data()

    def jax_loss(params: list[Any], x: Any, y: Any) -> Any:
        w1, b1, w2, b2 = params
        h = jax.nn.relu(x @ w1 + b1)
        return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(h @ w2 + b2, axis=-1), axis=-1))

    raw = jax.jit(jax.value_and_grad(jax_loss))
    jp, jx, jy = [jnp.asarray(p) for p in params], jnp.asarray(x), jnp.asarray(y)
    step = nx.jit(nx.value_and_grad(nx_loss), compiler="xla")
    ps = [nx.tensor(p, backend="xla") for p in params]
    tx, ty = nx.tensor(x, backend="xla"), nx.tensor(y, backend="xla")
    loss, grads = step(ps, tx, ty)
    j_loss, j_grads = raw(jp, jx, jy)
    np.testing.assert_allclose(loss.item(), float(j_loss), rtol=1e-6)
    for g, w in zip(grads, j_grads):
        np.testing.assert_allclose(g.to_numpy(), np.asarray(w), rtol=1e-5, atol=1e-7)

    def ours() -> Any:
        value, gs = step(ps, tx, ty)
        return [t.data.block_until_ready() for t in [value, *gs]]

    def theirs() -> Any:
        return jax.block_until_ready(raw(jp, jx, jy))

    report("xla: xla compiler", *compare(ours, theirs, repeat), "jax.jit(value_and_grad)")


def bench_torch(repeat: int) -> None:
    import torch

    params, x, y = data()
    step = nx.jit(nx.value_and_grad(nx_loss), compiler="torch")
    ps = [nx.tensor(p, backend="torch") for p in params]
    tx, ty = nx.tensor(x, backend="torch"), nx.tensor(y, backend="torch")
    tp = [torch.tensor(p, requires_grad=True) for p in params]
    txx, tyy = torch.tensor(x), torch.tensor(y)

    def autograd() -> Any:
        for p in tp:
            p.grad = None
        w1, b1, w2, b2 = tp
        h = torch.relu(txx @ w1 + b1)
        loss = -(tyy * torch.log_softmax(h @ w2 + b2, dim=-1)).sum(-1).mean()
        loss.backward()
        return loss.detach(), [p.grad for p in tp]

    loss, grads = step(ps, tx, ty)
    t_loss, t_grads = autograd()
    np.testing.assert_allclose(loss.item(), float(t_loss), rtol=1e-5)
    for g, w in zip(grads, t_grads):
        np.testing.assert_allclose(g.to_numpy(), w.numpy(), rtol=1e-4, atol=1e-6)
    ours, theirs = compare(lambda: step(ps, tx, ty), autograd, repeat)
    report("torch: torch compiler", ours, theirs, "torch eager loss.backward()")


FIRST_CALL = {
    "xla numerix": """
import numpy as np, numerix as nx, time, sys
sys.path.insert(0, BENCH); import grad as b
params, x, y = b.data()
ps = [nx.tensor(p, backend="xla") for p in params]
tx, ty = nx.tensor(x, backend="xla"), nx.tensor(y, backend="xla")
t = time.perf_counter()
v, g = nx.jit(nx.value_and_grad(b.nx_loss), compiler="xla")(ps, tx, ty)
v.data.block_until_ready()
print(time.perf_counter() - t)
""",
    "xla jax.jit(value_and_grad)": """
import numpy as np, jax, jax.numpy as jnp, time, sys
sys.path.insert(0, BENCH); import grad as b
params, x, y = b.data()
jp, jx, jy = [jnp.asarray(p) for p in params], jnp.asarray(x), jnp.asarray(y)
def loss(params, x, y):
    w1, b1, w2, b2 = params
    h = jax.nn.relu(x @ w1 + b1)
    return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(h @ w2 + b2, axis=-1), axis=-1))
t = time.perf_counter()
jax.block_until_ready(jax.jit(jax.value_and_grad(loss))(jp, jx, jy))
print(time.perf_counter() - t)
""",
    "binary evaluator": """
import numpy as np, numerix as nx, time, sys
sys.path.insert(0, BENCH); import grad as b
params, x, y = b.data()
ps, tx, ty = [nx.tensor(p) for p in params], nx.tensor(x), nx.tensor(y)
t = time.perf_counter()
nx.jit(nx.value_and_grad(b.nx_loss), compiler="evaluator")(ps, tx, ty)
print(time.perf_counter() - t)
""",
}


def bench_first_calls(runs: int) -> None:
    bench = os.path.dirname(os.path.abspath(__file__))
    for name, src in FIRST_CALL.items():
        src = f"BENCH = {bench!r}\n" + src
        times = []
        # a file, not -c: the xla plugin's loading needs a __main__ file
        script = os.path.join(bench, f".first_call_{os.getpid()}.py")
        with open(script, "w") as f:
            f.write(src)
        for _ in range(runs):
            out = subprocess.run(
                [sys.executable, "-W", "ignore", script], capture_output=True, text=True
            )
            if out.returncode != 0:
                print(f"first call, {name}: failed: {out.stderr.strip().splitlines()[-1]}")
                break
            times.append(float(out.stdout.strip().splitlines()[-1]))
        os.remove(script)
        if times:
            ms = [t * 1e3 for t in times]
            print(
                f"first call, {name:28s} {statistics.median(ms):8.1f} ms "
                f"({min(ms):.1f}-{max(ms):.1f}, {len(ms)} fresh processes)"
            )


def bench_chain(sizes: tuple[int, ...]) -> None:
    def chain(n: int) -> Callable[[Any], Any]:
        def f(x: Any) -> Any:
            for k in range(n):
                x = nx.sin(x) * 1.01 if k % 2 else x + nx.tanh(x)
            return nx.sum(x)

        return f

    template = nx.template((16,))
    for n in sizes:
        f = chain(n)
        times = []
        for _ in range(3):
            t = time.perf_counter()
            g = nx.trace(nx.grad(f), template)
            times.append(time.perf_counter() - t)
        best = min(times)
        print(
            f"trace + grad of a {n:5d}-op chain: {best * 1e3:8.1f} ms, "
            f"{best / n * 1e6:6.1f} us per op, {len(g.nodes):6d} nodes"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--threads", type=int, default=0, help="torch's intra-op threads")
    parser.add_argument(
        "--only", choices=("binary", "xla", "torch"), help="part a on this backend alone"
    )
    args = parser.parse_args()
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    repeat = 3 if args.quick else 15
    from numerix import plugins

    installed = set(plugins.backend_entries())
    if args.only:
        {"binary": bench_binary, "xla": bench_xla, "torch": bench_torch}[args.only](repeat)
        return
    bench_binary(repeat)
    if "xla" in installed:
        bench_xla(repeat)
    if "torch" in installed:
        bench_torch(repeat)
    bench_first_calls(1 if args.quick else 5)
    bench_chain((250, 500, 1000) if args.quick else (250, 500, 1000, 2000, 4000))


if __name__ == "__main__":
    main()
