"""The differentiation transforms under every compiler serving the backend.

``numerix.grad`` and friends are transforms of the traced graph, so a backend gets them
from its primitives: these cases check the parts of the transform that are not a
primitive's rule (control flow, ``stop_grad``, the custom rules, ``vjp``/``jvp``, a
block, and a backward pass run eagerly) on
the backend under test, once eagerly and once under each compiler serving it, against
closed forms computed with numpy in float64. Inputs are float32, which every backend
holds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import numerix as nx
from numerix.defn.compilers import compilers_serving

RTOL = 2e-5  # float32 against float64 closed forms, a few operations deep


def _runs(fn: Callable[..., Any]) -> list[tuple[str, Callable[..., Any]]]:
    """``fn`` eagerly, then jitted with each compiler serving the default backend."""
    out: list[tuple[str, Callable[..., Any]]] = [("eager", fn)]
    for name in compilers_serving(nx.get_default_backend()):
        out.append((name, nx.jit(fn, compiler=name)))
    return out


def _check(got: Any, want: np.ndarray, where: str) -> None:
    assert got.dtype is nx.float32 and got.shape == want.shape, f"{where}: {got.describe()}"
    np.testing.assert_allclose(
        got.to_numpy(), want, rtol=RTOL, atol=RTOL * max(1.0, float(np.abs(want).max(initial=0))),
        err_msg=where,
    )  # fmt: skip


X = np.array([0.5, -1.25, 2.0], dtype=np.float32)


def _control(steps: int) -> Callable[[nx.Tensor], nx.Tensor]:
    # both branches of a cond (chosen by the sign of the sum), then a fori_loop: a short
    # one is differentiated unrolled, a long one by a reverse loop over a tape
    def f(x: nx.Tensor) -> nx.Tensor:
        y = nx.cond(nx.sum(x) > 0, lambda a: a * a, lambda a: nx.sin(a), x)
        return nx.sum(nx.fori_loop(0, steps, lambda i, s: s * x, y))

    return f


def _control_grad(x: np.ndarray, steps: int) -> np.ndarray:
    x = x.astype(np.float64)
    if x.sum() > 0:
        return (steps + 2) * x ** (steps + 1)  # x^2 * x^steps
    return np.cos(x) * x**steps + steps * np.sin(x) * x ** (steps - 1)


def test_grad_transform_control_flow() -> None:
    for steps in (3, 10):
        for sign in (1.0, -1.0):
            x = (sign * X).astype(np.float32)
            for name, g in _runs(nx.grad(_control(steps))):
                where = f"grad of cond+fori_loop({steps} steps), {name}"
                _check(g(nx.tensor(x)), _control_grad(x, steps), where)


@nx.custom_vjp
def _scaled_identity(x: nx.Tensor) -> nx.Tensor:
    return x


_scaled_identity.defvjp(lambda x: (x, None), lambda _, g: (g * 3.0,))


def _rules(x: nx.Tensor) -> nx.Tensor:
    # x * stop_grad(x): derivative x; custom_vjp: 3; custom_grad of exp: 2
    a = nx.sum(x * nx.stop_grad(x))
    b = nx.sum(_scaled_identity(x))
    c = nx.sum(nx.custom_grad(nx.exp(x), [x], lambda g: [g * 2.0]))
    return a + b + c


def test_grad_transform_stop_grad_and_custom_rules() -> None:
    want = X.astype(np.float64) + 3.0 + 2.0
    for name, g in _runs(nx.grad(_rules)):
        _check(g(nx.tensor(X)), want, f"grad with stop_grad and custom rules, {name}")


def test_grad_transform_vjp_jvp_and_blocks() -> None:
    a = np.array([[2.0, 1.0], [0.5, 3.0]], dtype=np.float32)
    v = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    a64 = a.astype(np.float64)
    want_det = np.linalg.det(a64) * np.linalg.inv(a64).T  # d det(A) / dA
    x64 = X.astype(np.float64)

    def both(x: nx.Tensor, t: nx.Tensor, m: nx.Tensor) -> Any:
        _, f_vjp = nx.vjp(lambda y: nx.exp(y) * y, x)
        _, tangent = nx.jvp(lambda y: nx.sin(y) * y, (x,), (t,))
        return f_vjp(t)[0], tangent, nx.grad(nx.det)(m)

    for name, f in _runs(both):
        ct, tangent, g_det = f(nx.tensor(X), nx.tensor(v), nx.tensor(a))
        _check(ct, v * np.exp(x64) * (1 + x64), f"vjp, {name}")
        _check(tangent, v * (np.cos(x64) * x64 + np.sin(x64)), f"jvp, {name}")
        _check(g_det, want_det, f"grad of det (a block), {name}")


def test_grad_transform_of_a_jitted_function() -> None:
    f = nx.jit(lambda x: nx.sum(nx.tanh(x) ** 2))
    t = np.tanh(X.astype(np.float64))
    _check(nx.grad(f)(nx.tensor(X)), 2 * t * (1 - t**2), "grad of a jitted function")
