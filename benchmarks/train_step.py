"""A training step of the seeds' MLP as one compiled function, beside each backend's own
way of writing it.

    python benchmarks/train_step.py                    # every installed backend, 15 rounds
    python benchmarks/train_step.py --quick            # 3 short rounds: a smoke test
    python benchmarks/train_step.py --backend torch --threads 1 --json

On a shared machine pin one thread per library (thread pools stalling on a busy core
swamp the figures):

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/train_step.py --threads 1

The step: a 784 -> 128 -> 10 MLP (tanh hidden layer, log_softmax cross-entropy against
one-hot labels) on a batch of 64, float32; the loss's value and gradient
(``numerix.value_and_grad``) and an SGD update of the four parameters (w1, b1, w2, b2;
learning rate 0.1), as ONE ``numerix.jit`` function returning ``(loss, new_params)``.
Each call takes the parameters the previous call returned, as a training loop does.
Rows:

- xla: the xla backend and compiler beside ``jax.jit`` of the same step written in JAX
  (``jax.value_and_grad`` and the update, one jitted function);
- torch: the torch backend and compiler beside torch eager autograd written as the
  PyTorch tutorials write it: the forward pass, ``loss.backward()``, the update in
  place under ``torch.no_grad()`` (``p -= p.grad * lr``) and the gradients set to None;
- binary: the binary backend and the evaluator beside a hand-written numpy forward
  pass, backward pass and update in place.

Before anything is timed, one step of each side from the same parameters is checked
against the other's (the loss and the four updated parameters). The rounds interleave
the two sides of a row (a load that comes and goes falls on both); each round is a
timeit loop of at least ``--min-time`` seconds, except on xla, whose sides take turns
call by call (``alternate_calls``, 200 calls a round, the round's figure the median of
its calls: a call of XLA's CPU client is bimodal, and a timeit loop's mean follows how
many slow calls fell into it, as in ``vmap.py``), and the clock stops after the results
are ready (``block_until_ready`` on xla; torch and numpy on the CPU return finished
tensors). Printed: each side's median time per step and its min-max over the rounds,
and the median of the per-round ratios (numerix / raw) with their min-max. Nothing
here is asserted anywhere.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable
from typing import Any

import numpy as np

import numerix as nx
from numerix.benchmarking import alternate_calls, interleave

SIZES = (784, 128, 10)
BATCH = 64
LR = 0.1


def data() -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """The parameters (w1, b1, w2, b2), a batch of inputs and its one-hot labels."""
    rng = np.random.default_rng(0)
    n_in, hidden, n_out = SIZES
    params = [
        (rng.standard_normal((n_in, hidden)) * np.sqrt(1 / n_in)).astype(np.float32),
        np.zeros(hidden, np.float32),
        (rng.standard_normal((hidden, n_out)) * np.sqrt(1 / hidden)).astype(np.float32),
        np.zeros(n_out, np.float32),
    ]
    x = rng.random((BATCH, n_in), dtype=np.float32)
    y = np.eye(n_out, dtype=np.float32)[rng.integers(0, n_out, BATCH)]
    return params, x, y


# ---------------------------------------------------------------- numerix


def nx_loss(params: list[Any], x: Any, y: Any) -> Any:
    w1, b1, w2, b2 = params
    h = nx.tanh(nx.dot(x, w1) + b1)
    return -nx.mean(nx.sum(y * nx.log_softmax(nx.dot(h, w2) + b2, axis=-1), axis=-1))


_nx_value_and_grad = nx.value_and_grad(nx_loss)


def nx_step(params: list[Any], x: Any, y: Any) -> tuple[Any, list[Any]]:
    loss, grads = _nx_value_and_grad(params, x, y)
    return loss, [p - LR * g for p, g in zip(params, grads)]


# ---------------------------------------------------------------- the raw sides


def numpy_step(params: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> np.float32:
    """One step by hand, the parameters updated in place; returns the loss."""
    w1, b1, w2, b2 = params
    h = np.tanh(x @ w1 + b1)
    z2 = h @ w2 + b2
    z2 = z2 - z2.max(axis=-1, keepdims=True)
    logp = z2 - np.log(np.exp(z2).sum(axis=-1, keepdims=True))
    loss = -(y * logp).sum(axis=-1).mean()
    dz2 = (np.exp(logp) - y) / np.float32(x.shape[0])
    dz1 = (dz2 @ w2.T) * (1 - h * h)
    lr = np.float32(LR)
    w1 -= lr * (x.T @ dz1)
    b1 -= lr * dz1.sum(0)
    w2 -= lr * (h.T @ dz2)
    b2 -= lr * dz2.sum(0)
    return loss


def jax_step() -> Callable[..., Any]:
    import jax
    import jax.numpy as jnp

    def loss(params: list[Any], x: Any, y: Any) -> Any:
        w1, b1, w2, b2 = params
        h = jnp.tanh(x @ w1 + b1)
        return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(h @ w2 + b2, axis=-1), axis=-1))

    def step(params: list[Any], x: Any, y: Any) -> Any:
        value, grads = jax.value_and_grad(loss)(params, x, y)
        return value, [p - LR * g for p, g in zip(params, grads)]

    return jax.jit(step)


def torch_step(params: list[Any], x: Any, y: Any) -> Any:
    """One step of eager autograd, the parameters (leaves requiring grad) updated in
    place; returns the loss."""
    import torch

    w1, b1, w2, b2 = params
    h = torch.tanh(x @ w1 + b1)
    loss = -(y * torch.log_softmax(h @ w2 + b2, dim=-1)).sum(-1).mean()
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= p.grad * LR
            p.grad = None
    return loss.detach()


# ---------------------------------------------------------------- rows


def _check(name: str, loss: Any, new: list[Any], want_loss: Any, want: list[Any]) -> None:
    np.testing.assert_allclose(float(loss), float(want_loss), rtol=1e-5, err_msg=name)
    for a, b in zip(new, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-6, err_msg=name)


def _numerix_side(backend: str, compiler: str) -> tuple[Callable[[], Any], Any, list[Any]]:
    """The timed numerix call (each call continues from the last one's parameters), and
    one step's loss and new parameters (as numpy arrays) from the initial parameters."""
    params, x, y = data()
    step = nx.jit(nx_step, compiler=compiler)
    ps = [nx.tensor(p, backend=backend) for p in params]
    tx, ty = nx.tensor(x, backend=backend), nx.tensor(y, backend=backend)
    loss, new = step(ps, tx, ty)
    first = (loss.item(), [t.to_numpy() for t in new])
    state = [new]

    def ours() -> Any:
        loss, state[0] = step(state[0], tx, ty)
        for t in (loss, *state[0]):  # every output ready before the clock stops
            t.backend.synchronize(t)
        return loss

    return ours, *first


def row_binary() -> tuple[Callable[[], Any], Callable[[], Any]]:
    ours, loss, new = _numerix_side("binary", "evaluator")
    params, x, y = data()
    _check("binary", loss, new, numpy_step(params, x, y), params)
    params, x, y = data()
    return ours, lambda: numpy_step(params, x, y)


def row_xla() -> tuple[Callable[[], Any], Callable[[], Any]]:
    import jax
    import jax.numpy as jnp

    ours, loss, new = _numerix_side("xla", "xla")
    params, x, y = data()
    raw = jax_step()
    jp, jx, jy = [jnp.asarray(p) for p in params], jnp.asarray(x), jnp.asarray(y)
    want_loss, want = raw(jp, jx, jy)
    _check("xla", loss, new, want_loss, want)
    state = [want]

    def theirs() -> Any:
        value, state[0] = raw(state[0], jx, jy)
        return jax.block_until_ready((value, state[0]))

    return ours, theirs


def row_torch() -> tuple[Callable[[], Any], Callable[[], Any]]:
    import torch

    ours, loss, new = _numerix_side("torch", "torch")
    params, x, y = data()
    tp = [torch.tensor(p, requires_grad=True) for p in params]
    tx, ty = torch.tensor(x), torch.tensor(y)
    want_loss = torch_step(tp, tx, ty)
    _check("torch", loss, new, want_loss, [p.detach().numpy() for p in tp])
    return ours, lambda: torch_step(tp, tx, ty)


ROWS: dict[str, tuple[str, str, Callable[[], tuple[Callable[[], Any], Callable[[], Any]]]]] = {
    "xla": ("xla compiler", "jax.jit", row_xla),
    "torch": ("torch compiler", "torch eager autograd", row_torch),
    "binary": ("evaluator", "hand-written numpy", row_binary),
}


def run(backend: str, rounds: int, min_time: float) -> dict[str, Any]:
    ours_name, raw_name, make = ROWS[backend]
    ours, theirs = make()
    if backend == "xla":
        calls = 20 if min_time < 0.05 else 200
        t_ours, t_raw = alternate_calls([ours, theirs], rounds, calls)
    else:
        t_ours, t_raw = interleave([ours, theirs], rounds, min_time=min_time, warmup=1)
    ratios = [p / q for p, q in zip(t_ours, t_raw)]
    return {
        "backend": backend,
        "numerix": ours_name,
        "raw": raw_name,
        "numerix_us": statistics.median(t_ours) * 1e6,
        "numerix_spread_us": (min(t_ours) * 1e6, max(t_ours) * 1e6),
        "raw_us": statistics.median(t_raw) * 1e6,
        "raw_spread_us": (min(t_raw) * 1e6, max(t_raw) * 1e6),
        "ratio": statistics.median(ratios),
        "ratio_spread": (min(ratios), max(ratios)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", action="append", help="xla, torch, binary (default: all)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--min-time", type=float, default=0.05, help="seconds per timeit loop")
    parser.add_argument("--quick", action="store_true", help="3 rounds of 10 ms loops")
    parser.add_argument("--threads", type=int, default=0, help="torch's intra-op threads")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rounds, min_time = (3, 0.01) if args.quick else (args.rounds, args.min_time)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    rows = []
    for backend in args.backend or list(ROWS):
        try:
            nx.get_backend(backend)
        except nx.NumerixError:
            continue
        row = run(backend, rounds, min_time)
        rows.append(row)
        if not args.json:
            lo, hi = row["ratio_spread"]
            (a, b), (c, d) = row["numerix_spread_us"], row["raw_spread_us"]
            print(
                f"{backend:6s} {row['numerix']:14s} {row['numerix_us']:8.1f} µs ({a:.1f}–{b:.1f})"
                f"   {row['raw']:20s} {row['raw_us']:8.1f} µs ({c:.1f}–{d:.1f})"
                f"   ratio {row['ratio']:.2f} ({lo:.2f}–{hi:.2f})",
                flush=True,
            )
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
