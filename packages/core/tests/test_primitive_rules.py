"""Every primitive declares its shape and dtype rules, and the rules agree with numpy.

The registry is the contract: ``Primitive.bind`` runs the rules to build each output,
so a primitive without them could not be bound. The rules of the shape, creation and
gather primitives are checked here against numpy's own results (shape and dtype
exactly) on edge shapes: 0-d, empty and size-1 axes.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import numerix as nx
import numerix.ops.linalg_blocks
from numerix import dtypes
from numerix.primitives import BLOCKS, REGISTRY
from numerix.primitives import creation as creation_primitives
from numerix.primitives import indexing as indexing_primitives
from numerix.primitives import reduction as reduction_primitives
from numerix.primitives import shape as shape_primitives
from numerix.primitives import sort as sort_primitives
from numerix.primitives import window as window_primitives
from numerix.primitives._registry import Primitive


def test_every_primitive_has_both_rules() -> None:
    missing = [
        f"{p.name} ({', '.join(k for k in ('shape_rule', 'dtype_rule') if getattr(p, k) is None)})"
        for p in REGISTRY
        if p.shape_rule is None or p.dtype_rule is None
    ]
    assert not missing, "primitives without a shape or dtype rule: " + "; ".join(missing)


def test_out_params_are_not_kernel_params() -> None:
    # a parameter is read by the kernel or by the rules alone, never declared as both
    both = [p.name for p in REGISTRY if set(p.out_params) & set(p.params)]
    assert not both, f"parameters declared both for the kernel and for the rules: {both}"


def _dtypes() -> list[dtypes.DType]:
    return list(dtypes.ALL_DTYPES)


SHAPES = [(), (0,), (1,), (3,), (2, 0), (1, 3), (2, 3, 1)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", _dtypes(), ids=str)
def test_shape_primitive_rules_against_numpy(shape: tuple[int, ...], dtype: dtypes.DType) -> None:
    a = np.zeros(shape, dtype.numpy_dtype)
    n = a.ndim
    dt = shape_primitives.same_dtype_rule
    # reshape: numpy's reshape to the flat size
    flat = (a.size,)
    assert shape_primitives.reshape.shape_rule(a.shape, shape=flat) == np.reshape(a, flat).shape
    # transpose: the reversed permutation and a rotation
    for axes in (tuple(range(n - 1, -1, -1)), tuple(range(1, n)) + (0,) if n else ()):
        assert (
            shape_primitives.transpose.shape_rule(a.shape, axes=axes) == np.transpose(a, axes).shape
        )
    # broadcast: a new leading axis of 2
    big = (2, *shape)
    rule = shape_primitives.broadcast.shape_rule(a.shape, axes=tuple(range(1, n + 1)), shape=big)
    assert rule == np.broadcast_to(a, big).shape
    # reverse
    assert shape_primitives.reverse.shape_rule(a.shape, axes=tuple(range(n))) == np.flip(a).shape
    for p in (
        shape_primitives.reshape,
        shape_primitives.transpose,
        shape_primitives.broadcast,
        shape_primitives.reverse,
    ):
        assert p.dtype_rule(dtype) is dtype
    assert dt(dtype) is dtype
    if n:
        # concatenate along each axis, with itself and with a copy one longer there
        for ax in range(n):
            longer = list(shape)
            longer[ax] += 1
            b = np.zeros(longer, dtype.numpy_dtype)
            want = np.concatenate([a, b, a], axis=ax).shape
            assert (
                shape_primitives.concatenate.shape_rule(a.shape, b.shape, a.shape, axis=ax) == want
            )
        assert shape_primitives.concatenate.dtype_rule(dtype, dtype, axis=0) is dtype


@pytest.mark.parametrize(
    "dim,start,stop,stride",
    [(0, 0, 0, 1), (1, 0, 1, 1), (5, 0, 5, 2), (5, 1, 4, 3), (7, 2, 2, 1), (7, 0, 7, 7),
     (7, 6, 7, 5), (10, 1, 10, 4)],
)  # fmt: skip
def test_slice_rule_against_numpy(dim: int, start: int, stop: int, stride: int) -> None:
    a = np.zeros((2, dim))
    want = a[:, start:stop:stride].shape
    assert (
        shape_primitives.slice.shape_rule(
            a.shape, start=(0, start), stop=(2, stop), strides=(1, stride)
        )
        == want
    )


@pytest.mark.parametrize(
    "xshape,ishape,axes",
    [((4,), (3, 1), (0,)), ((4, 5), (0, 1), (1,)), ((4, 5, 6), (2, 3, 2), (0, 2)),
     ((4, 5), (2,), (0, 1)), ((1, 2), (1, 1), (0,))],
)  # fmt: skip
def test_gather_rule_against_public_gather(
    xshape: tuple[int, ...], ishape: tuple[int, ...], axes: tuple[int, ...]
) -> None:
    # numpy's advanced indexing with the index columns on the gathered axes (moved first)
    x = np.zeros(xshape, np.float32)
    idx = np.zeros(ishape, np.int64)
    rest = [a for a in range(x.ndim) if a not in axes]
    xt = np.transpose(x, [*axes, *rest])
    want = xt[tuple(idx[..., j] for j in range(len(axes)))].shape
    assert indexing_primitives.gather.shape_rule(xshape, ishape, axes=axes) == want
    assert (
        indexing_primitives.gather.dtype_rule(dtypes.float32, dtypes.int64, axes=axes)
        is dtypes.float32
    )


@pytest.mark.parametrize("dtype", _dtypes(), ids=str)
def test_creation_rules(dtype: dtypes.DType) -> None:
    for p, params in (
        (creation_primitives.iota, {"axis": None}),
        (creation_primitives.full, {"value": 0}),
        (creation_primitives.eye, {"k": 0}),
        (creation_primitives.arange, {"start": 0, "step": 1}),
        (creation_primitives.linspace, {"start": 0, "stop": 1, "endpoint": True}),
    ):
        for shape in ((), (0,), (3,), (2, 1)):
            assert p.shape_rule(shape=shape, dtype=dtype, **params) == shape
            assert p.dtype_rule(shape=shape, dtype=dtype, **params) is dtype
    a = np.zeros((2, 0, 1), dtype.numpy_dtype)
    assert creation_primitives.from_numpy.shape_rule(a.shape) == (2, 0, 1)
    assert creation_primitives.from_numpy.dtype_rule(a.dtype) is dtype
    assert nx.from_numpy(a).dtype is dtype


def test_from_numpy_rule_refuses_an_unknown_dtype() -> None:
    with pytest.raises(nx.DTypeError, match="from_numpy: numpy dtype <U1"):
        creation_primitives.from_numpy.dtype_rule(np.dtype("<U1"))


def test_rules_take_the_declared_inputs_and_params() -> None:
    # bind calls rule(*one_per_input, **params, **out_params): each rule must accept it
    wrong = []
    for p in [*REGISTRY, *BLOCKS.values()]:
        n = sum(2 if i.startswith("*") else 1 for i in p.inputs)
        kw = dict.fromkeys(p.params + getattr(p, "out_params", ()))
        for rule in (p.shape_rule, p.dtype_rule):
            try:
                inspect.signature(rule).bind(*([None] * n), **kw)
            except TypeError as e:
                wrong.append(f"{p.name}: {getattr(rule, '__name__', rule)} ({e})")
    assert not wrong, "rules that bind cannot call: " + "; ".join(wrong)


def _block_rules(name: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    b = BLOCKS[name]
    assert b.shape_rule is not None and b.dtype_rule is not None, name
    return b.shape_rule, b.dtype_rule


def test_every_block_has_both_rules() -> None:
    missing = [b.name for b in BLOCKS.values() if b.shape_rule is None or b.dtype_rule is None]
    assert not missing, f"blocks without a shape or dtype rule: {missing}"


@pytest.mark.parametrize(
    "dtype", [dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128], ids=str
)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 2, 2), (1, 1)], ids=str)
def test_square_linalg_block_rules_against_numpy(
    shape: tuple[int, ...], dtype: dtypes.DType
) -> None:
    a = np.eye(shape[-1], dtype=dtype.numpy_dtype) * np.ones(shape, dtype.numpy_dtype) * 2
    checks: dict[str, tuple[Any, ...]] = {
        "cholesky": ((a,), {"upper": False}, np.linalg.cholesky(a)),
        "inv": ((a,), {}, np.linalg.inv(a)),
        "det": ((a,), {}, np.linalg.det(a)),
        "solve": ((a, a), {}, np.linalg.solve(a, a)),
        "triangular_solve": (
            (a, a), {"lower": True, "left_side": True, "transform_a": "none"},
            np.linalg.solve(a, a),
        ),
        "eigh": ((a,), {}, tuple(np.linalg.eigh(a))),
        "lu": ((a,), {}, (a, a, a)),  # numpy has no lu: p, l and u have x's shape and dtype
    }  # fmt: skip
    for name, (ins, params, want) in checks.items():
        shape_rule, dtype_rule = _block_rules(name)
        shapes = shape_rule(*(x.shape for x in ins), **params)
        out_dtypes = dtype_rule(*(dtypes.from_numpy_dtype(x.dtype) for x in ins), **params)
        if isinstance(want, tuple):
            assert shapes == tuple(w.shape for w in want), name
            assert out_dtypes == tuple(dtypes.from_numpy_dtype(w.dtype) for w in want), name
        else:
            assert (shapes, out_dtypes) == (want.shape, dtypes.from_numpy_dtype(want.dtype)), name


@pytest.mark.parametrize("shape", [(3, 2), (2, 3), (4, 1, 5), (0, 3), (1, 1)], ids=str)
@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.complex128], ids=str)
def test_qr_svd_block_rules_against_numpy(shape: tuple[int, ...], dtype: dtypes.DType) -> None:
    a = np.ones(shape, dtype.numpy_dtype)
    for mode in ("reduced", "complete"):
        want = np.linalg.qr(a, mode=mode)
        assert _block_rules("qr")[0](shape, mode=mode) == (want.Q.shape, want.R.shape)
        assert _block_rules("qr")[1](dtype, mode=mode) == (dtype, dtype)
    for full in (True, False):
        u, s, vh = np.linalg.svd(a, full_matrices=full)
        assert _block_rules("svd")[0](shape, full_matrices=full) == (u.shape, s.shape, vh.shape)
        got = _block_rules("svd")[1](dtype, full_matrices=full)
        assert got == tuple(dtypes.from_numpy_dtype(x.dtype) for x in (u, s, vh))


@pytest.mark.parametrize(
    "shape,axis,k", [((5,), 0, 2), ((3, 4), 1, 0), ((3, 4), 0, 3), ((0, 2), 1, 1)]
)
def test_top_k_and_threefry_block_rules(shape: tuple[int, ...], axis: int, k: int) -> None:
    x = np.zeros(shape, np.float32)
    vals = np.take(x, np.arange(k), axis=axis)
    assert _block_rules("top_k")[0](shape, k=k, axis=axis) == (vals.shape, vals.shape)
    assert _block_rules("top_k")[1](dtypes.float32, k=k, axis=axis) == (
        dtypes.float32,
        dtypes.int64,
    )
    words = (shape, (), (1,) * len(shape), shape)
    want = np.broadcast_shapes(*words)
    assert _block_rules("threefry2x32")[0](*words) == (want, want)
    assert _block_rules("threefry2x32")[1](*[dtypes.uint32] * 4) == (dtypes.uint32, dtypes.uint32)


#: Each family with a kind: the primitive, its kinds, and the dtypes each kind refuses
#: ("c": complex, "b": bool) and gives (None: x's own, else that dtype).
KIND_FAMILIES = [
    (reduction_primitives.reduce, {"sum": ("", None), "prod": ("", None), "max": ("c", None),
                        "min": ("c", None), "all": ("", dtypes.bool_), "any": ("", dtypes.bool_)},
     {"axes": (0,), "keepdims": False}),
    (reduction_primitives.argreduce, {"max": ("c", dtypes.int64), "min": ("c", dtypes.int64)},
     {"axis": 0, "keepdims": False}),
    (sort_primitives.cumulative, {"sum": ("", None), "prod": ("", None), "max": ("c", None),
                       "min": ("c", None)}, {"axis": 0, "reverse": False}),
    (window_primitives.window_reduce, {"sum": ("b", None), "prod": ("b", None), "max": ("c", None),
                            "min": ("c", None)},
     {"window_dimensions": (1,), "strides": (1,), "padding": ((0, 0),),
      "window_dilations": (1,)}),
]  # fmt: skip

DECLARED_KINDS = {
    "reduce": reduction_primitives.REDUCE_KINDS,
    "argreduce": reduction_primitives.ARGREDUCE_KINDS,
    "cumulative": sort_primitives.CUMULATIVE_KINDS,
    "window_reduce": window_primitives.WINDOW_REDUCE_KINDS,
}


@pytest.mark.parametrize("prim,kinds,params", KIND_FAMILIES, ids=lambda v: getattr(v, "name", ""))
def test_each_kind_keeps_its_dtype_rule(
    prim: Primitive, kinds: dict[str, tuple[str, Any]], params: dict[str, Any]
) -> None:
    # one primitive per family, the dtype rule of each kind as strict as its own was
    assert tuple(kinds) == DECLARED_KINDS[prim.name]  # every kind is tried
    for kind, (refused, gives) in kinds.items():
        for d in dtypes.ALL_DTYPES:
            if d.kind in refused:
                with pytest.raises(nx.DTypeError, match=r"no order|bool has no sum"):
                    prim.dtype_rule(d, kind=kind, **params)
            else:
                assert prim.dtype_rule(d, kind=kind, **params) is (gives or d), (kind, d)
            assert prim.shape_rule((3,), kind=kind, **params) == prim.shape_rule((3,), **params)


def test_each_window_scatter_kind_refuses_complex() -> None:
    scatter, f = window_primitives.window_scatter, dtypes.float32
    geometry = {"window_dimensions": (1,), "strides": (1,), "padding": ((0, 0),)}
    assert window_primitives.WINDOW_SCATTER_KINDS == ("max", "min")
    for kind in ("max", "min"):
        for d in dtypes.ALL_DTYPES:
            if d.kind == "c":
                with pytest.raises(nx.DTypeError, match="no order"):
                    scatter.dtype_rule(d, f, f, kind=kind, **geometry)
            else:
                assert scatter.dtype_rule(d, f, f, kind=kind, **geometry) is f


@pytest.mark.parametrize(
    "op,bind",
    [
        ("reduce", lambda x: reduction_primitives.reduce.bind(x, kind="mean", axes=(0,), keepdims=False)),
        ("argreduce", lambda x: reduction_primitives.argreduce.bind(x, kind="sum", axis=0, keepdims=False)),
        ("cumulative", lambda x: sort_primitives.cumulative.bind(x, kind="all", axis=0, reverse=False)),
        ("window_reduce", lambda x: window_primitives.window_reduce.bind(
            x, kind="mean", window_dimensions=(1,), strides=(1,), padding=((0, 0),),
            window_dilations=(1,))),
        ("window_scatter", lambda x: window_primitives.window_scatter.bind(
            x, x, x[0], kind="sum", window_dimensions=(1,), strides=(1,), padding=((0, 0),))),
    ],
)  # fmt: skip
def test_an_unknown_kind_is_refused_by_name(op: str, bind: Callable[[Any], Any]) -> None:
    x = nx.tensor([1.0, 2.0])
    with pytest.raises(nx.ArgumentError, match=rf"^{op}: unknown kind '\w+'; the kinds are "):
        bind(x)
