"""value_and_grad of a small CNN (conv, relu, 2x2 max pooling, twice, then a dense
layer and softmax cross-entropy), float32, beside each backend's own autodiff: the
cost of the conv and window derivative rules in a training step.

    python benchmarks/grad_cnn.py            # xla and torch, when installed
    python benchmarks/grad_cnn.py --quick    # a smoke test
    OMP_NUM_THREADS=1 python benchmarks/grad_cnn.py --only torch --threads 1

- xla compiler (``nx.jit(nx.value_and_grad(loss), compiler="xla")``) beside raw
  ``jax.jit(jax.value_and_grad(loss))`` (``lax.conv_general_dilated``,
  ``lax.reduce_window``);
- torch compiler beside torch eager autograd (``F.conv2d``, ``F.max_pool2d``,
  ``loss.backward()``).

Cached calls; the two sides' loops alternate (as in ``grad.py``), each side's
median and spread (min-max over the rounds) are printed with the ratio of medians.
Gradients are checked against each other first. Pin one thread per library on a
shared machine (``OMP_NUM_THREADS=1``).
"""

from __future__ import annotations

import argparse
import statistics
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np

import numerix as nx

BATCH = 32
POOL = ((1, 1, 2, 2), (1, 1, 2, 2))  # window, strides


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
    ms = [x * 1e3 for x in xs]
    return f"{statistics.median(ms):8.2f} ms ({min(ms):.2f}-{max(ms):.2f})"


def report(name: str, ours: list[float], theirs: list[float], raw: str) -> None:
    ratio = statistics.median(ours) / statistics.median(theirs)
    print(f"{name:16s} numerix {_fmt(ours)}   {raw:24s} {_fmt(theirs)}   ratio {ratio:5.2f}")


def data() -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    params = [
        (rng.standard_normal((8, 1, 3, 3)) * np.sqrt(2 / 9)).astype(np.float32),
        (rng.standard_normal((16, 8, 3, 3)) * np.sqrt(2 / 72)).astype(np.float32),
        (rng.standard_normal((16 * 7 * 7, 10)) * np.sqrt(2 / 784)).astype(np.float32),
    ]
    x = rng.random((BATCH, 1, 28, 28), dtype=np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, BATCH)]
    return params, x, y


def nx_loss(params: list[Any], x: Any, y: Any) -> Any:
    k1, k2, w = params
    h = nx.window_max(nx.relu(nx.conv(x, k1, padding="same")), POOL[0], strides=POOL[1])
    h = nx.window_max(nx.relu(nx.conv(h, k2, padding="same")), POOL[0], strides=POOL[1])
    logits = nx.dot(nx.reshape(h, (h.shape[0], -1)), w)
    return -nx.mean(nx.sum(y * nx.log_softmax(logits, axis=-1), axis=-1))


def _check(loss: Any, grads: Any, want_loss: Any, want: Any) -> None:
    np.testing.assert_allclose(float(loss.item()), float(want_loss), rtol=1e-5)
    for g, w in zip(grads, want):
        np.testing.assert_allclose(g.to_numpy(), np.asarray(w), rtol=1e-3, atol=1e-5)


def bench_xla(repeat: int) -> None:
    import jax
    import jax.numpy as jnp

    params, x, y = data()

    def pool(h: Any) -> Any:
        return jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, POOL[0], POOL[1], "VALID")

    def conv(h: Any, k: Any) -> Any:
        return jax.lax.conv_general_dilated(h, k, (1, 1), "SAME")

    def jax_loss(params: list[Any], x: Any, y: Any) -> Any:
        k1, k2, w = params
        h = pool(jax.nn.relu(conv(pool(jax.nn.relu(conv(x, k1))), k2)))
        logits = h.reshape(h.shape[0], -1) @ w
        return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(logits, axis=-1), axis=-1))

    raw = jax.jit(jax.value_and_grad(jax_loss))
    jp, jx, jy = [jnp.asarray(p) for p in params], jnp.asarray(x), jnp.asarray(y)
    step = nx.jit(nx.value_and_grad(nx_loss), compiler="xla")
    ps = [nx.tensor(p, backend="xla") for p in params]
    tx, ty = nx.tensor(x, backend="xla"), nx.tensor(y, backend="xla")
    loss, grads = step(ps, tx, ty)
    want_loss, want = raw(jp, jx, jy)
    _check(loss, grads, want_loss, want)

    def ours() -> None:
        jax.block_until_ready(step(ps, tx, ty)[0].data)

    def theirs() -> None:
        jax.block_until_ready(raw(jp, jx, jy)[0])

    a, b = compare(ours, theirs, repeat)
    report("xla compiler", a, b, "jax.jit(value_and_grad)")


def bench_torch(repeat: int) -> None:
    import torch
    import torch.nn.functional as F

    params, x, y = data()
    tp = [torch.tensor(p, requires_grad=True) for p in params]
    tx, ty = torch.tensor(x), torch.tensor(y)

    def torch_step() -> Any:
        for p in tp:
            p.grad = None
        k1, k2, w = tp
        h = F.max_pool2d(F.relu(F.conv2d(tx, k1, padding=1)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, k2, padding=1)), 2)
        logits = h.reshape(h.shape[0], -1) @ w
        loss = -(ty * F.log_softmax(logits, dim=-1)).sum(-1).mean()
        loss.backward()
        return loss.detach(), [p.grad for p in tp]

    step = nx.jit(nx.value_and_grad(nx_loss), compiler="torch")
    ps = [nx.tensor(p, backend="torch") for p in params]
    nxx, nxy = nx.tensor(x, backend="torch"), nx.tensor(y, backend="torch")
    loss, grads = step(ps, nxx, nxy)
    want_loss, want = torch_step()
    _check(loss, grads, want_loss.numpy(), [g.numpy() for g in want])
    a, b = compare(lambda: step(ps, nxx, nxy), torch_step, repeat)
    report("torch compiler", a, b, "torch eager autograd")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few rounds: a smoke test")
    parser.add_argument("--repeat", type=int, default=9, help="timing rounds per side")
    parser.add_argument("--only", choices=("xla", "torch"), help="this backend alone")
    parser.add_argument("--threads", type=int, default=0, help="torch's intra-op threads")
    args = parser.parse_args()
    repeat = 3 if args.quick else args.repeat
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    for name, bench in (("xla", bench_xla), ("torch", bench_torch)):
        if args.only and name != args.only:
            continue
        try:
            nx.configuration.resolve_backend(name)
        except nx.NumerixError as e:
            print(f"{name}: skipped ({e})")
            continue
        bench(repeat)


if __name__ == "__main__":
    main()
