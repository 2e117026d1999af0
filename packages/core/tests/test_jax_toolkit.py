"""The rest of a JAX user's toolkit on binary: ``x.at[...]`` updates, ``numerix.tree``,
``scan``, ``checkpoint`` and ``jit(static_argnums=, donate_argnums=)``, each eagerly,
under jit, under grad and under vmap, against numpy or a Python loop."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import numerix as nx

# ---------------------------------------------------------------- x.at[...]

IDX = np.array([1, 3, 1, 0, 1])
VALS = np.array([2.0, -1.0, 3.0, 0.5, -4.0], np.float32)


def _numpy_at(a: np.ndarray, how: str, idx: Any, vals: np.ndarray) -> np.ndarray:
    out = a.copy()
    ufunc = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}
    if how == "set":
        out[idx] = vals
    elif how == "subtract":
        np.subtract.at(out, idx, vals)
    elif how == "divide":
        np.multiply.at(out, idx, (1 / vals).astype(a.dtype))
    else:
        ufunc[how].at(out, idx, vals)
    return out


@pytest.mark.parametrize("how", ["set", "add", "subtract", "multiply", "divide", "min", "max"])
def test_at_updates_match_numpy_with_repeated_positions(how: str) -> None:
    a = np.array([1.0, -2.0, 3.0, 0.25], np.float32)
    run = lambda x, v: getattr(x.at[nx.tensor(IDX)], how)(v)  # noqa: E731
    want = _numpy_at(a, "set" if how == "set" else how, IDX, VALS)
    if how == "set":  # numpy's fancy assignment: the last of repeated positions wins
        want = a.copy()
        want[IDX] = VALS
    for f in (run, nx.jit(run)):
        got = f(nx.tensor(a), nx.tensor(VALS))
        assert got.dtype is nx.float32 and got.shape == (4,)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_at_with_basic_keys_dtypes_and_get() -> None:
    x = nx.tensor(np.arange(12, dtype=np.int32).reshape(3, 4))
    np.testing.assert_array_equal(np.asarray(x.at[1:, ::2].add(10)),
                                  np.arange(12).reshape(3, 4) + np.array(
                                      [[0, 0, 0, 0], [10, 0, 10, 0], [10, 0, 10, 0]]))  # fmt: skip
    y = x.at[0].set(7.9)  # cast to x's dtype, as numpy's assignment casts
    assert y.dtype is nx.int32 and y.tolist()[0] == [7, 7, 7, 7]
    assert x.tolist()[0] == [0, 1, 2, 3]  # x keeps its values
    assert x.at[2, 1].get().item() == 9
    assert x.at[nx.tensor([], dtype=nx.int64)].max(5).tolist() == x.tolist()  # no position
    with pytest.raises(nx.ShapeError, match=r"^at\[\]\.add: value .* cannot be broadcast"):
        x.at[0].add(nx.ones(3, dtype=nx.int32))
    with pytest.raises(nx.DTypeError, match=r"^at\[\]\.divide: .* is not floating"):
        x.at[0].divide(2)


def test_at_is_differentiable_and_batched() -> None:
    x = nx.tensor([1.0, 2.0, 3.0])
    g = nx.grad(lambda x: nx.sum(x.at[nx.tensor([0, 0, 2])].multiply(nx.tensor([2.0, 3.0, 4.0]))))
    np.testing.assert_allclose(np.asarray(g(x)), [6.0, 1.0, 4.0])
    b = nx.vmap(lambda r: r.at[1].add(10.0))(nx.tensor(np.ones((2, 3), np.float32)))
    np.testing.assert_array_equal(np.asarray(b), [[1, 11, 1], [1, 11, 1]])


# ---------------------------------------------------------------- numerix.tree


def test_tree_utilities() -> None:
    params = {"w": nx.ones((2, 2)), "b": [nx.zeros(2), None, 3.0]}
    leaves, s = nx.tree.flatten(params)
    assert len(leaves) == 3 and leaves[0].shape == (2,)  # sorted keys, None empty
    doubled = nx.tree.unflatten(s, [x * 2 for x in leaves])
    assert doubled["b"][2] == 6.0 and doubled["b"][1] is None
    assert nx.tree.structure(doubled) == s
    summed = nx.tree.map(lambda a, b: a + b, params, doubled)
    assert summed["w"].tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert nx.tree.reduce(lambda a, b: a + nx.sum(b), params, 0.0).item() == 7.0
    assert nx.tree.all([True, (1, 2)]) and not nx.tree.all({"a": 0})
    with pytest.raises(ValueError, match=r"^tree.unflatten: the structure has 3 leaves, got 2"):
        nx.tree.unflatten(s, [1, 2])
    with pytest.raises(TypeError, match=r"^tree.unflatten: structure must be"):
        nx.tree.unflatten([1], [1])
    # the same trees grad takes
    g = nx.grad(lambda p: nx.sum(p["w"]) + nx.sum(p["b"][0]))({"w": nx.ones((2, 2)),
                                                             "b": [nx.zeros(2)]})  # fmt: skip
    assert nx.tree.structure(g) == nx.tree.structure({"w": 0, "b": [0]})


# ---------------------------------------------------------------- scan

XS = np.arange(12, dtype=np.float32).reshape(4, 3) / 4


def _step(c: Any, x: Any) -> tuple[Any, Any]:
    return c * 0.5 + x, nx.sum(c * x)


def _loop(xs: np.ndarray, reverse: bool = False) -> tuple[np.ndarray, np.ndarray]:
    c = np.zeros(3, np.float32)
    ys = [np.float32(0)] * len(xs)
    order = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
    for i in order:
        c, ys[i] = c * np.float32(0.5) + xs[i], np.sum(c * xs[i], dtype=np.float32)
    return c, np.array(ys, np.float32)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("unroll", [1, 3, True])
def test_scan_matches_a_loop(reverse: bool, unroll: Any) -> None:
    want_c, want_y = _loop(XS, reverse)
    run = lambda xs: nx.scan(_step, nx.zeros(3), xs, reverse=reverse, unroll=unroll)  # noqa: E731
    for f in (run, nx.jit(run)):
        c, y = f(nx.tensor(XS))
        np.testing.assert_allclose(np.asarray(c), want_c, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(y), want_y, rtol=1e-6)
        assert y.dtype is nx.float32 and y.shape == (4,)


def test_scan_is_one_loop_whatever_its_length() -> None:
    for n in (10, 1000):
        g = nx.trace(lambda xs: nx.scan(_step, nx.zeros(3), xs), nx.template((n, 3)))
        assert [node.op for node in g.nodes].count("while") == 1
        assert len(g.nodes) < 20  # the body is traced once, not per step


def test_scan_grad_vmap_trees_and_length() -> None:
    loss = lambda xs: nx.sum(nx.scan(_step, nx.zeros(3), xs)[1])  # noqa: E731
    eager = nx.grad(lambda xs: sum(_step_unrolled(xs)))(nx.tensor(XS))
    np.testing.assert_allclose(np.asarray(nx.grad(loss)(nx.tensor(XS))), np.asarray(eager),
                               rtol=1e-5)  # fmt: skip
    np.testing.assert_allclose(np.asarray(nx.jit(nx.grad(loss))(nx.tensor(XS))),
                               np.asarray(eager), rtol=1e-5)  # fmt: skip
    batched = nx.vmap(lambda xs: nx.scan(_step, nx.zeros(3), xs)[1])(
        nx.tensor(np.stack([XS, XS * 2]))
    )
    np.testing.assert_allclose(np.asarray(batched)[1], _loop(XS * 2)[1], rtol=1e-5)
    # trees in the carry and in xs; no xs at all
    c, ys = nx.jit(lambda a, b: nx.scan(
        lambda c, x: ({"n": c["n"] + 1, "s": c["s"] + x[0] * x[1]}, x[0] - x[1]),
        {"n": 0, "s": 0.0}, (a, b)))(nx.tensor([1.0, 2.0]), nx.tensor([3.0, 4.0]))  # fmt: skip
    assert c["n"].item() == 2 and c["s"].item() == 11.0 and ys.tolist() == [-2.0, -2.0]
    c, ys = nx.jit(lambda: nx.scan(lambda c, _: (c * 2, c), nx.tensor(1), None, length=3))()
    assert c.item() == 8 and ys.tolist() == [1, 2, 4]


def _step_unrolled(xs: nx.Tensor) -> list[nx.Tensor]:
    c, out = nx.zeros(3), []
    for i in range(xs.shape[0]):
        c, y = _step(c, xs[i])
        out.append(y)
    return out


@pytest.mark.parametrize(
    "call, err, pattern",
    [
        (lambda: nx.scan(_step, nx.zeros(3), nx.tensor(1.0)), nx.ShapeError,
         r"^scan: every leaf of xs must be a tensor with a leading axis"),
        (lambda: nx.scan(_step, nx.zeros(3), (nx.zeros((2, 3)), nx.zeros((3, 3)))),
         nx.ShapeError, r"^scan: the leaves of xs differ in leading dimension"),
        (lambda: nx.scan(_step, nx.zeros(3), nx.zeros((2, 3)), length=3), nx.ShapeError,
         r"^scan: length=3 but xs has a leading dimension of 2"),
        (lambda: nx.scan(_step, nx.zeros(3)), nx.ShapeError, r"pass length=N"),
        (lambda: nx.scan(_step, nx.zeros(3), nx.zeros((2, 3)), unroll=0), nx.ShapeError,
         r"unroll must be a positive int"),
        (lambda: nx.jit(lambda xs: nx.scan(lambda c, x: (c[:2], x), nx.zeros(3), xs))(
            nx.zeros((2, 3))), nx.TracingError,
         r"^scan: f returns a carry of f32\[2\] but init is f32\[3\]"),
        (lambda: nx.jit(lambda xs: nx.scan(lambda c, x: c, nx.zeros(3), xs))(nx.zeros((2, 3))),
         nx.TracingError, r"^scan: f must return a pair \(carry, y\)"),
    ],
)  # fmt: skip
def test_scan_errors(call: Any, err: type, pattern: str) -> None:
    with pytest.raises(err, match=pattern):
        call()


# ---------------------------------------------------------------- checkpoint

W = np.array([[0.5, -0.2], [0.1, 0.3]], np.float32)


def _net(layer: Any) -> Any:
    def loss(w: nx.Tensor) -> nx.Tensor:
        h = nx.ones((1, 2))
        for _ in range(3):
            h = layer(w, h)
        return nx.sum(h)

    return loss


def test_checkpoint_keeps_values_and_derivatives() -> None:
    plain = _net(lambda w, h: nx.tanh(h @ w))
    remat = _net(nx.checkpoint(lambda w, h: nx.tanh(h @ w)))
    w = nx.tensor(W)
    assert remat(w).item() == plain(w).item()
    for g in (nx.grad(remat), nx.jit(nx.grad(remat))):
        np.testing.assert_allclose(np.asarray(g(w)), np.asarray(nx.grad(plain)(w)), rtol=1e-6)
    batched = nx.vmap(nx.grad(remat))(nx.tensor(np.stack([W, 2 * W])))
    np.testing.assert_allclose(np.asarray(batched)[1], np.asarray(nx.grad(plain)(nx.tensor(2 * W))),
                               rtol=1e-6)  # fmt: skip


def test_checkpoint_recomputes_in_the_backward_pass() -> None:
    remat = _net(nx.checkpoint(lambda w, h: nx.tanh(h @ w)))
    g = nx.trace(nx.value_and_grad(remat), nx.template((2, 2)))
    ops = [n.op if n.op != "block" else n.value.name for n in g.nodes]
    assert ops.count("checkpoint") == 3
    # the forward's tanh values live inside the blocks: every tanh of the program is a
    # recomputation in the backward pass, after the last block
    last = max(i for i, o in enumerate(ops) if o == "checkpoint")
    assert ops.count("tanh") == 3 and all(i > last for i, o in enumerate(ops) if o == "tanh")


def test_checkpoint_differentiates_closed_over_values() -> None:
    def loss(w: nx.Tensor) -> nx.Tensor:
        f = nx.checkpoint(lambda h: nx.sin(h * w))  # w is closed over
        return nx.sum(f(nx.ones(2)))

    np.testing.assert_allclose(np.asarray(nx.grad(loss)(nx.tensor(0.5))), 2 * np.cos(0.5),
                               rtol=1e-6)  # fmt: skip


# ---------------------------------------------------------------- jit's JAX keywords


def test_static_argnums() -> None:
    def power(x: nx.Tensor, n: int, scale: float = 2.0) -> nx.Tensor:
        for _ in range(n):
            x = x * scale
        return x

    f = nx.jit(power, static_argnums=1)
    assert f(nx.tensor([1.0]), 3).tolist() == [8.0] and f(nx.tensor([1.0]), 2).tolist() == [4.0]
    assert nx.jit(power, static_argnums=(-2,))(nx.tensor([1.0]), 1).tolist() == [2.0]
    with pytest.raises(
        nx.ArgumentError, match=r"static_argnums names position 5, but 'power' has 3"
    ):
        nx.jit(power, static_argnums=5)
    with pytest.raises(nx.ArgumentError, match=r"must be an int or a tuple of ints"):
        nx.jit(power, static_argnums="n")
    with pytest.raises(nx.ArgumentError, match=r"\['n'\] are both static and donated"):
        nx.jit(power, static_argnums=1, donate_argnums=1)
    with pytest.raises(nx.ArgumentError, match=r"jit's own keywords, for every compiler: static"):
        nx.jit(power, static_argnumz=1)(nx.tensor(1.0), 1)


def test_donation_is_a_no_op_on_the_evaluator() -> None:
    f = nx.jit(lambda a, b: a + b, donate_argnums=0, compiler="evaluator")
    a = nx.tensor([1.0])
    assert f(a, nx.tensor([2.0])).tolist() == [3.0] and a.tolist() == [1.0]
    g = nx.jit(lambda a, b: a + b, donate_argnames="b")
    assert g(a, b=nx.tensor([1.0])).tolist() == [2.0]
