"""Every primitive declares its shape and dtype rules, and the rules agree with numpy.

The registry is the contract: ``Primitive.bind`` runs the rules to build each output,
so a primitive without them could not be bound. The rules of the shape, creation and
gather primitives are checked here against numpy's own results (shape and dtype
exactly) on edge shapes: 0-d, empty and size-1 axes.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import numerix as nx
from numerix import dtypes as D
from numerix.primitives import REGISTRY
from numerix.primitives import creation as PC
from numerix.primitives import indexing as PI
from numerix.primitives import shape as PS


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


def _dtypes() -> list[D.DType]:
    return list(D.ALL_DTYPES)


SHAPES = [(), (0,), (1,), (3,), (2, 0), (1, 3), (2, 3, 1)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", _dtypes(), ids=str)
def test_shape_primitive_rules_against_numpy(shape: tuple[int, ...], dtype: D.DType) -> None:
    a = np.zeros(shape, dtype.numpy_dtype)
    n = a.ndim
    dt = PS.same_dtype_rule
    # reshape: numpy's reshape to the flat size
    flat = (a.size,)
    assert PS.reshape.shape_rule(a.shape, shape=flat) == np.reshape(a, flat).shape
    # transpose: the reversed permutation and a rotation
    for axes in (tuple(range(n - 1, -1, -1)), tuple(range(1, n)) + (0,) if n else ()):
        assert PS.transpose.shape_rule(a.shape, axes=axes) == np.transpose(a, axes).shape
    # broadcast: a new leading axis of 2
    big = (2, *shape)
    rule = PS.broadcast.shape_rule(a.shape, axes=tuple(range(1, n + 1)), shape=big)
    assert rule == np.broadcast_to(a, big).shape
    # reverse
    assert PS.reverse.shape_rule(a.shape, axes=tuple(range(n))) == np.flip(a).shape
    for p in (PS.reshape, PS.transpose, PS.broadcast, PS.reverse):
        assert p.dtype_rule(dtype) is dtype
    assert dt(dtype) is dtype
    if n:
        # concatenate along each axis, with itself and with a copy one longer there
        for ax in range(n):
            longer = list(shape)
            longer[ax] += 1
            b = np.zeros(longer, dtype.numpy_dtype)
            want = np.concatenate([a, b, a], axis=ax).shape
            assert PS.concatenate.shape_rule(a.shape, b.shape, a.shape, axis=ax) == want
        assert PS.concatenate.dtype_rule(dtype, dtype, axis=0) is dtype


@pytest.mark.parametrize(
    "dim,start,stop,stride",
    [(0, 0, 0, 1), (1, 0, 1, 1), (5, 0, 5, 2), (5, 1, 4, 3), (7, 2, 2, 1), (7, 0, 7, 7),
     (7, 6, 7, 5), (10, 1, 10, 4)],
)  # fmt: skip
def test_slice_rule_against_numpy(dim: int, start: int, stop: int, stride: int) -> None:
    a = np.zeros((2, dim))
    want = a[:, start:stop:stride].shape
    assert (
        PS.slice.shape_rule(a.shape, start=(0, start), stop=(2, stop), strides=(1, stride)) == want
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
    assert PI.gather.shape_rule(xshape, ishape, axes=axes) == want
    assert PI.gather.dtype_rule(D.float32, D.int64, axes=axes) is D.float32


@pytest.mark.parametrize("dtype", _dtypes(), ids=str)
def test_creation_rules(dtype: D.DType) -> None:
    for p, params in (
        (PC.iota, {"axis": None}),
        (PC.full, {"value": 0}),
        (PC.eye, {"k": 0}),
        (PC.arange, {"start": 0, "step": 1}),
        (PC.linspace, {"start": 0, "stop": 1, "endpoint": True}),
    ):
        for shape in ((), (0,), (3,), (2, 1)):
            assert p.shape_rule(shape=shape, dtype=dtype, **params) == shape
            assert p.dtype_rule(shape=shape, dtype=dtype, **params) is dtype
    a = np.zeros((2, 0, 1), dtype.numpy_dtype)
    assert PC.from_numpy.shape_rule(a.shape) == (2, 0, 1)
    assert PC.from_numpy.dtype_rule(a.dtype) is dtype
    assert nx.from_numpy(a).dtype is dtype


def test_from_numpy_rule_refuses_an_unknown_dtype() -> None:
    with pytest.raises(nx.DTypeError, match="from_numpy: numpy dtype <U1"):
        PC.from_numpy.dtype_rule(np.dtype("<U1"))


def test_rules_take_the_declared_inputs_and_params() -> None:
    # bind calls rule(*one_per_input, **params, **out_params): each rule must accept it
    wrong = []
    for p in REGISTRY:
        n = sum(2 if i.startswith("*") else 1 for i in p.inputs)
        kw = dict.fromkeys(p.params + p.out_params)
        for rule in (p.shape_rule, p.dtype_rule):
            try:
                inspect.signature(rule).bind(*([None] * n), **kw)
            except TypeError as e:
                wrong.append(f"{p.name}: {getattr(rule, '__name__', rule)} ({e})")
    assert not wrong, "rules that bind cannot call: " + "; ".join(wrong)
