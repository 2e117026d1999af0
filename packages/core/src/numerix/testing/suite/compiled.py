"""Compiled mode: ops traced and compiled by every compiler that serves the backend,
compared with the same ops run eagerly on it.

A compiler serves a backend when its programs return that backend's tensors: the
``evaluator`` serves every backend (it runs the graph with the backend's own kernels,
or with their lowerings, :meth:`numerix.Backend.lower`); a compiler that declares
``backend = "xla"`` serves ``xla``. The evaluator must reproduce eager results bit
for bit; other compilers fuse, so floating-point results are held to the kit's
tolerance for the dtype.

The element-wise ops, reductions, products and shape ops run over every dtype and
the edge shapes (0-d, empty, size-1 broadcasting); every public op of the core runs
once through the shared op table (:mod:`numerix.testing.defn_cases`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import optree
import pytest

import numerix as nx
from numerix import dtypes
from numerix.defn.compilers import compilers_serving
from numerix.testing.oracle import ALL, ids, sample, shape_id
from numerix.testing.suite.elementwise import BINARY, UNARY, BinOp, UnOp, draw
from numerix.testing.tolerances import tolerance

COMPILED_BINARY_SHAPES = [((), ()), ((0,), (0,)), ((3, 1), (1, 4)), ((2, 3), ())]
COMPILED_UNARY_SHAPES = [(), (0,), (2, 3)]


def close(got: Any, want: Any, *, exact: bool, op: str | None = None) -> None:
    """Equal trees of tensors: the same dtype, shape and backend; values bit for bit when
    ``exact`` (NaN equal to NaN), else within the kit's tolerance for floats."""
    gl, gt = optree.tree_flatten(got)
    wl, wt = optree.tree_flatten(want)
    assert gt == wt, (gt, wt)
    for g, w in zip(gl, wl):
        assert type(g) is nx.Tensor and type(w) is nx.Tensor
        assert g.dtype is w.dtype, (g.describe(), w.describe())
        assert g.shape == w.shape, (g.describe(), w.describe())
        assert g.backend is w.backend, (g.describe(), w.describe())
        a, b = g.to_numpy(), w.to_numpy()
        assert a.dtype == g.dtype.numpy_dtype and a.shape == g.shape, (a.dtype, a.shape)
        if g.dtype is dtypes.bfloat16:
            a, b = a.astype(np.float32), b.astype(np.float32)
        if exact or g.dtype.kind not in "fc":
            np.testing.assert_array_equal(a, b, strict=True)
        else:
            rt, at = tolerance(op, g.dtype)
            np.testing.assert_allclose(a, b, rtol=rt, atol=at, equal_nan=True)


def run_compiled(fn: Callable[..., Any], *args: Any, op: str | None = None) -> None:
    """``fn(*args)`` through ``jit`` with every serving compiler equals ``fn(*args)``; a
    second call reuses the program."""
    want = fn(*args)
    names = compilers_serving(nx.get_default_backend())
    assert "evaluator" in names
    for name in names:
        jitted = nx.jit(fn, compiler=name)
        close(jitted(*args), want, exact=name == "evaluator", op=op)
        close(jitted(*args), want, exact=name == "evaluator", op=op)
        assert jitted.trace_count == 1, name


# ---------------------------------------------------------------- element-wise


# only the dtypes each op accepts (test_binary_one_dtype checks the refusals)
@pytest.mark.parametrize("shapes", COMPILED_BINARY_SHAPES, ids=shape_id)
@pytest.mark.parametrize(
    ("op", "dtype"), [(o, d) for o in BINARY for d in ALL if o.rule(d)], ids=lambda x: str(x)
)
def test_compiled_binary(op: BinOp, dtype: dtypes.DType, shapes: Any) -> None:
    a = nx.tensor(draw(dtype, shapes[0], 1, op.lhs))
    b = nx.tensor(draw(dtype, shapes[1], 2, op.rhs))
    run_compiled(op.fn, a, b, op=op.name)


@pytest.mark.parametrize("shape", COMPILED_UNARY_SHAPES, ids=shape_id)
@pytest.mark.parametrize(
    ("op", "dtype"), [(o, d) for o in UNARY for d in ALL if o.rule(d)], ids=lambda x: str(x)
)
def test_compiled_unary(op: UnOp, dtype: dtypes.DType, shape: tuple[int, ...]) -> None:
    run_compiled(op.fn, nx.tensor(draw(dtype, shape, 1, op.kw)), op=op.name)


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_compiled_weak_scalars_and_chains(dtype: dtypes.DType) -> None:
    # a chain of nodes: scalars become constants of the program, results feed results
    def f(x: Any) -> Any:
        y = nx.maximum(x, x) if dtype.kind in "iuf" else x
        return y + 1, nx.equal(y, x), nx.where(nx.equal(x, x), y, x)

    for shape in COMPILED_UNARY_SHAPES:
        run_compiled(f, nx.tensor(sample(dtype, shape, 3)))


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_compiled_astype(dtype: dtypes.DType) -> None:
    a = nx.tensor(sample(dtype, (2, 3), 4))
    for to in ALL:
        if dtype.kind == "c" and to.kind not in "cb":
            continue  # refused (test_astype checks the error)
        run_compiled(lambda x, to=to: x.astype(to), a, op="astype")


# ---------------------------------------------------------------- reductions


REDUCTIONS = ("sum", "prod", "max", "min", "argmax", "argmin", "all", "any", "mean")
ORDERED = ("max", "min", "argmax", "argmin")  # refuse complex and empty inputs


def _reduction_cases() -> list[Any]:
    # only what each reduction accepts (the reduction family checks the refusals)
    out = []
    for name in REDUCTIONS:
        for d in ALL:
            for shape in [(), (0,), (2, 0), (3, 4)]:
                if name in ORDERED and (d.kind == "c" or 0 in shape):
                    continue
                out.append(pytest.param(name, d, shape, id=f"{name}-{d}-{shape_id(shape)}"))
    return out


@pytest.mark.parametrize(("name", "dtype", "shape"), _reduction_cases())
def test_compiled_reductions(name: str, dtype: dtypes.DType, shape: tuple[int, ...]) -> None:
    fn = getattr(nx, name)
    a = nx.tensor(sample(dtype, shape, 5))
    axes: list[Any] = [None] + ([0, -1] if shape else [])
    for axis in axes:
        run_compiled(lambda x, axis=axis: fn(x, axis=axis), a, op=name)
        if name not in ("argmax", "argmin") or axis is not None:
            run_compiled(lambda x, axis=axis: fn(x, axis=axis, keepdims=True), a, op=name)


# ---------------------------------------------------------------- products


PRODUCT_SHAPES = [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 2)), ((3, 4), (4, 2)),
                  ((0, 4), (4, 2)), ((3, 0), (0, 2)), ((2, 3, 4), (4, 5))]  # fmt: skip


# every dtype but bool, which dot refuses (the linalg family checks the error)
@pytest.mark.parametrize("shapes", PRODUCT_SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", [d for d in ALL if d.kind != "b"], ids=ids)
def test_compiled_products(dtype: dtypes.DType, shapes: Any) -> None:
    a = nx.tensor(sample(dtype, shapes[0], 6, small=True))
    b = nx.tensor(sample(dtype, shapes[1], 7, small=True))
    run_compiled(nx.dot, a, b, op="dot")
    run_compiled(lambda x, y: nx.tensordot(x, y, axes=1), a, b, op="dot")


# ---------------------------------------------------------------- shape ops


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_compiled_shape_ops(dtype: dtypes.DType) -> None:
    a = nx.tensor(sample(dtype, (2, 3), 8))

    def f(x: Any) -> Any:
        return (x.reshape(3, 2), x.reshape(()) if x.size == 1 else x.reshape(6),
                nx.transpose(x), nx.broadcast_to(x, (4, 2, 3)), nx.expand_dims(x, 0)[0],
                x[1:, ::2], nx.concatenate([x, x]), nx.flip(x, axis=1))  # fmt: skip

    run_compiled(f, a, op="shape")
    run_compiled(lambda x: (x.reshape(1, 1), nx.broadcast_to(x, (2, 2))),
                 nx.tensor(sample(dtype, (), 9)), op="shape")  # fmt: skip
    run_compiled(lambda x: (x.reshape(0, 3), nx.transpose(x)),
                 nx.tensor(sample(dtype, (3, 0), 9)), op="shape")  # fmt: skip


# ---------------------------------------------------------------- every public op


def _op_table() -> list[Any]:
    from numerix.testing.defn_cases import OPS

    return OPS


@pytest.mark.parametrize(("fn", "args"), _op_table())
def test_compiled_every_op(fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    b = nx.get_default_backend()
    run_compiled(fn, *[nx.backend_transfer(a, b) for a in args])


# ---------------------------------------------------------------- traced indices


def _clamped(i: np.ndarray, n: int) -> np.ndarray:
    """The rule for traced indices: negative ones count from the end, then clamped."""
    return np.clip(np.where(i < 0, i + n, i), 0, n - 1)


@pytest.mark.parametrize(
    "itype", [dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint64], ids=ids
)
def test_compiled_out_of_range_indices_are_clamped(itype: dtypes.DType) -> None:
    # eagerly they raise IndexingError (the indexing family checks it); traced, their
    # values are unknown, so every backend and compiler clamps them the same way
    x_np = sample(dtypes.float32, (5, 3), 10)
    x = nx.tensor(x_np)
    raw = [7, -9, 2, 300] if itype.kind == "i" else [7, 2, 255, 4]
    raw = [v for v in raw if v <= np.iinfo(itype.numpy_dtype).max]
    i_np = np.array(raw, dtype=itype.numpy_dtype)
    k = _clamped(i_np.astype(np.int64), 5)
    i = nx.tensor(i_np)
    col = nx.tensor(i_np.reshape(-1, 1))
    cases: list[tuple[Callable[..., Any], tuple[Any, ...], Any]] = [
        (lambda a, j: a[j], (x, i), x_np[k]),
        (lambda a, j: nx.take(a, j, axis=0), (x, i), x_np[k]),
        (lambda a, j: a[j[0]], (x, i), x_np[k[0]]),
        (lambda a, j: nx.take_along_axis(a[:4].T, j.reshape(1, -1) + 0, axis=1),
         (x, i), np.take_along_axis(x_np[:4].T, _clamped(i_np.astype(np.int64), 4)[None],
                                    axis=1)),
    ]  # fmt: skip
    upd = nx.tensor(np.arange(1, len(raw) + 1, dtype=np.float32))
    added = np.zeros(5, np.float32)
    np.add.at(added, k, np.arange(1, len(raw) + 1, dtype=np.float32))
    cases.append((lambda a, j, u: nx.indexed_add(a, j, u), (nx.zeros(5), col, upd), added))
    names = compilers_serving(nx.get_default_backend())
    for fn, args, want in cases:
        for name in names:
            got = nx.jit(fn, compiler=name)(*args)
            assert got.dtype is dtypes.float32 and got.shape == want.shape, (name, got.describe())
            np.testing.assert_array_equal(got.to_numpy(), want, err_msg=name)


def test_compiled_index_into_an_empty_axis_is_refused() -> None:
    x = nx.zeros((0, 3))
    # no index at all is fine
    for name in compilers_serving(nx.get_default_backend()):
        r = nx.jit(lambda a, j: a[j], compiler=name)(x, nx.tensor(np.zeros(0, np.int64)))
        assert r.shape == (0, 3) and r.dtype is dtypes.float32, (name, r.describe())
    with pytest.raises(nx.IndexingError, match=r"getitem: axis 0 of .* is empty"):
        nx.jit(lambda a, j: a[j])(x, nx.tensor(0))
    with pytest.raises(nx.IndexingError, match=r"indexed_add: .* is empty along axis 0"):
        nx.jit(lambda a, j: nx.indexed_add(a, j, nx.ones((1, 3))))(x, nx.tensor([[0]]))


# ---------------------------------------------------------------- the seed's example


def test_compiled_seed_softmax_every_compiler() -> None:
    # "Compiler or Backend?": the seed's softmax as a defn, on this backend, with every
    # compiler serving it; its trace prints as a listing
    def softmax(x: Any) -> Any:
        return nx.exp(x - nx.max(x)) / nx.sum(nx.exp(x - nx.max(x)))

    x = nx.tensor([1, 2, 3, 4])
    e = np.exp(np.arange(1.0, 5.0) - 4)
    listing = str(nx.trace(softmax, x)).splitlines()
    assert listing[0].split() == ["parameter", "a", "s64[4]"]
    assert any(
        ln.split()[:5] == ["b", "=", "reduce", "[", "a,"] and "kind: 'max'" in ln for ln in listing
    ), listing
    assert listing[-1].split()[-1] == "f32[4]"
    for name in compilers_serving(nx.get_default_backend()):
        got = nx.defn(softmax, compiler=name)(x)
        assert got.dtype is dtypes.float32 and got.shape == (4,) and got.backend is x.backend
        np.testing.assert_allclose(got.to_numpy(), e / e.sum(), rtol=1e-6, err_msg=name)


def test_compiled_auto_chooses_among_the_serving_compilers() -> None:
    # jit(compiler="auto"): every compiler serving this backend is a candidate (a
    # backend served by one compiler is given it untimed, and one another outruns is
    # not timed); the winner's results are the
    # function's, its table is consistent, and later calls run the winner's program
    def softmax(x: Any) -> Any:
        e = nx.exp(x - nx.max(x, axis=-1, keepdims=True))
        return e / nx.sum(e, axis=-1, keepdims=True)

    backend = nx.get_default_backend()
    serving = compilers_serving(backend)
    x = nx.tensor(np.random.default_rng(0).random((4, 8), dtype=np.float32))
    a = x.to_numpy()
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    want = e / e.sum(axis=-1, keepdims=True)
    f = nx.jit(softmax, compiler="auto")
    for _ in range(2):
        got = f(x)
        assert got.dtype is dtypes.float32 and got.shape == (4, 8) and got.backend is x.backend
        np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-5, atol=1e-7)
    choice = f.explain(x)
    assert choice.compiler in serving
    assert f.cache_info().misses == 1 and f.trace_count == 1
    if len(serving) == 1:
        assert choice.rows == [], choice.table()
        return
    rows = {r["compiler"]: r for r in choice.rows}
    assert sorted(rows) == serving, choice.table()
    assert rows[choice.compiler]["status"] == "chosen"
    # a compiler another declares it outruns is not timed (xla's plugin: the evaluator)
    left = [n for n, r in rows.items() if not r["status"].startswith("not timed: ")]
    if left == [choice.compiler]:
        return
    timed = {n: r["median_s"] for n, r in rows.items() if "median_s" in r}
    assert sorted(timed) == sorted(left), choice.table()
    assert min(timed, key=timed.__getitem__) == choice.compiler, choice.table()
    assert all(r["calls"] >= 1 for n, r in rows.items() if n in timed)
