"""Train the seeds' MLP (dense -> relu -> dense -> softmax, cross-entropy) with plain SGD
on scikit-learn's bundled handwritten digits (8x8 images, no download). It needs
scikit-learn for that data (``pip install scikit-learn``); numerix does not.

The same script runs on every backend and compiler: pick them with the environment,

    NUMERIX_DEFAULT_BACKEND=xla NUMERIX_DEFAULT_COMPILER=xla python examples/mlp_digits.py

One training step is ``numerix.jit`` of ``numerix.value_and_grad``: traced and compiled
once, then each batch runs the cached program (forward and backward pass in one).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

import numerix as nx
from numerix.defn.compilers import default_compiler


def load(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Digits as float32 pixels in [0, 1] and int labels, split 80/20 at random."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise SystemExit(
            "examples/mlp_digits.py reads scikit-learn's bundled digits: "
            "install it with `pip install scikit-learn`"
        ) from None

    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    x, y = x[order], y[order]
    cut = int(0.8 * len(x))
    return x[:cut], y[:cut], x[cut:], y[cut:]


def init_params(sizes: tuple[int, int, int], seed: int = 0) -> list[Any]:
    """He-initialised weights (``numerix.random``: the same numbers on every backend)
    and zero biases of the two dense layers."""
    k1, k2 = nx.random.split(nx.random.key(seed))
    n_in, hidden, n_out = sizes
    return [
        nx.random.normal(k1, (n_in, hidden)) * float(np.sqrt(2.0 / n_in)),
        nx.zeros((hidden,)),
        nx.random.normal(k2, (hidden, n_out)) * float(np.sqrt(2.0 / hidden)),
        nx.zeros((n_out,)),
    ]


def predict(params: list[Any], x: Any) -> Any:
    """Class probabilities: dense -> relu -> dense -> softmax."""
    w1, b1, w2, b2 = params
    h = nx.relu(nx.dot(x, w1) + b1)
    return nx.softmax(nx.dot(h, w2) + b2, axis=-1)


def loss(params: list[Any], x: Any, labels: Any) -> Any:
    """Mean cross-entropy of the predictions against one-hot labels."""
    probs = predict(params, x)
    one_hot = nx.astype(labels[:, None] == nx.arange(probs.shape[-1]), probs.dtype)
    return -nx.mean(nx.sum(one_hot * nx.log(probs + 1e-7), axis=-1))


@nx.jit
def sgd_step(params: list[Any], x: Any, labels: Any, lr: float) -> tuple[Any, list[Any]]:
    """One step of plain SGD: the batch's loss, and the updated parameters."""
    value, grads = nx.value_and_grad(loss)(params, x, labels)
    return value, [p - lr * g for p, g in zip(params, grads)]


@nx.jit
def accuracy(params: list[Any], x: Any, labels: Any) -> Any:
    """The fraction of ``x`` whose most probable class is its label."""
    return nx.mean(nx.astype(nx.argmax(predict(params, x), axis=-1) == labels, nx.float32))


def train(
    epochs: int = 30, batch: int = 32, lr: float = 0.2, hidden: int = 64, seed: int = 0,
    verbose: bool = True,
) -> float:  # fmt: skip
    """Train and return the test accuracy."""
    x_train, y_train, x_test, y_test = load(seed)
    params = init_params((x_train.shape[1], hidden, 10), seed)
    rng = np.random.default_rng(seed + 1)
    steps = len(x_train) // batch  # whole batches only: one shape, one compiled program
    start = time.perf_counter()
    for epoch in range(epochs):
        order = rng.permutation(len(x_train))
        total = 0.0
        for k in range(steps):
            idx = order[k * batch : (k + 1) * batch]
            value, params = sgd_step(params, nx.tensor(x_train[idx]), nx.tensor(y_train[idx]), lr)
            total += float(value)
        if verbose and (epoch % 5 == 4 or epoch == epochs - 1):
            acc = float(accuracy(params, nx.tensor(x_test), nx.tensor(y_test)))
            print(f"epoch {epoch + 1:3d}  loss {total / steps:.4f}  test accuracy {acc:.4f}")
    acc = float(accuracy(params, nx.tensor(x_test), nx.tensor(y_test)))
    if verbose:
        backend, compiler = nx.get_default_backend().name, default_compiler()[0]
        print(
            f"{backend}/{compiler}: test accuracy {acc:.4f} after {epochs} epochs "
            f"({time.perf_counter() - start:.1f} s)"
        )
    return acc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.2)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    train(args.epochs, args.batch, args.lr, args.hidden, args.seed)


if __name__ == "__main__":
    main()
