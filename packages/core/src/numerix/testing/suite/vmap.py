"""Conformance of :func:`numerix.vmap`: each primitive's batching rule against a Python
loop over the batch, on the backend under test.

Each case is a function of public ops and a batch of ``B`` examples per argument (the
batch as axis 0 of each array). The oracle is the loop: the function called eagerly
once per example (numerix on the backend under test; the other families check the
unbatched ops against numpy, here only the batching is checked), its outputs stacked.
The vmapped function must give the same values, with the batch moved to axis 0, 1 and
-1 of its inputs (and of its outputs), with each input in turn unbatched
(``in_axes=None``: every example sees one value, as the oracle does), and, with the
batch at axis 0, under every compiler serving the backend. Integer, boolean, shape,
indexing, comparison and selection cases must match bit for bit; floating math whose
batched form may run in another order (a dot, a conv, an fft, a factorisation, or a
vectorised kernel's other path) is held to a tight tolerance.

``test_vmap_reaches_every_rule`` traces every case and requires each primitive with a
tensor input and each block to be reached from the cases' arguments: a new primitive
without a case here fails it, naming the primitive.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import random
from numerix.defn.compilers import compilers_serving
from numerix.defn.expr import BLOCK, PARAMETER, Node
from numerix.primitives import BLOCKS, REGISTRY

#: the batch size of every case: no example has an axis of this size, so that a rule
#: taking another axis for the batch fails on shapes as well as values
B = 5

# float32 against float32 computed one example at a time: a few ulps of a reordered sum
RTOL = 2e-6
# a factorisation or a solve of float32 matrices, batched by another kernel's path
RTOL_LINALG = 5e-5


@dataclass(frozen=True)
class Case:
    name: str
    fn: Callable[..., Any]
    #: each argument's batch (the batch as axis 0), or a function making it (for keys)
    args: tuple[Any, ...]
    #: integers, booleans, moved or selected elements: bit for bit
    exact: bool = False
    rtol: float = RTOL

    def __str__(self) -> str:
        return self.name


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _f(*shape: int, lo: float = -2.0, hi: float = 2.0, seed: int = 0) -> np.ndarray:
    """A float32 batch of ``B`` examples of ``shape``, uniform in ``[lo, hi)``."""
    return _rng(seed).uniform(lo, hi, (B, *shape)).astype(np.float32)


def _i(*shape: int, lo: int = -7, hi: int = 8, seed: int = 0) -> np.ndarray:
    """An int32 batch of ``B`` examples of ``shape``, in ``[lo, hi)``."""
    return _rng(seed).integers(lo, hi, (B, *shape)).astype(np.int32)


def _bool(*shape: int, seed: int = 0) -> np.ndarray:
    return _rng(seed).integers(0, 2, (B, *shape)).astype(np.bool_)


def _c(*shape: int, seed: int = 0) -> np.ndarray:
    r = _rng(seed)
    return (r.uniform(-2, 2, (B, *shape)) + 1j * r.uniform(-2, 2, (B, *shape))).astype(np.complex64)


def _spd(n: int, seed: int = 0) -> np.ndarray:
    """``B`` symmetric positive-definite float32 matrices, well conditioned."""
    a = _rng(seed).uniform(-1, 1, (B, n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(np.float32)


def _wellcond(n: int, seed: int = 0) -> np.ndarray:
    """``B`` float32 matrices dominated by their diagonal (invertible, and with distinct
    pivots, so that lu's row choice is the same in any order of work)."""
    a = _rng(seed).uniform(-1, 1, (B, n, n))
    return (a + np.diag(np.arange(n, 0, -1) + 3.0)).astype(np.float32)


@functools.cache
def _keys() -> np.ndarray:
    """``B`` keys of :mod:`numerix.random` (``split`` of one), as uint32 words."""
    return random.split(random.key(20240531, backend="binary"), B).to_numpy()


# ---------------------------------------------------------------- the cases


def _unary_float(x: nx.Tensor) -> tuple[nx.Tensor, ...]:
    # x in (-1, 1): every function defined; the shifted ones where they need more
    p = nx.abs(x) + 1.5  # > 1
    return (
        nx.abs(x), nx.acos(x), nx.asin(x), nx.atan(x), nx.atanh(x), nx.asinh(x), nx.acosh(p),
        nx.cbrt(x), nx.ceil(x * 3), nx.floor(x * 3), nx.round(x * 3), nx.cos(x), nx.cosh(x),
        nx.sin(x), nx.sinh(x), nx.tan(x), nx.tanh(x), nx.erf(x), nx.erfc(x), nx.erf_inv(x),
        nx.exp(x), nx.exp2(x), nx.expm1(x), nx.log(p), nx.log1p(x), nx.sqrt(p), nx.rsqrt(p),
        nx.sigmoid(x), nx.sign(x), nx.negative(x),
    )  # fmt: skip


def _binary_float(x: nx.Tensor, y: nx.Tensor) -> tuple[nx.Tensor, ...]:
    p = nx.abs(x) + 0.5
    return (
        x + y, x - y, x * y, x / (nx.abs(y) + 1), nx.atan2(x, y), nx.pow(p, y),
        nx.maximum(x, y), nx.minimum(x, y), nx.remainder(x, nx.abs(y) + 0.5),
        nx.floor_divide(x, nx.abs(y) + 0.5),
    )  # fmt: skip


def _classify(x: nx.Tensor) -> tuple[nx.Tensor, ...]:
    # inf and nan made from the values, so that the classifiers see them batched
    z = nx.where(x > 1, x / 0.0, nx.where(x < -1, nx.log(x), x))
    return nx.isfinite(z), nx.isinf(z), nx.isnan(z)


def _comparisons(x: nx.Tensor, y: nx.Tensor) -> tuple[nx.Tensor, ...]:
    return x == y, x != y, x < y, x <= y, x > y, x >= y


def _integer(a: nx.Tensor, b: nx.Tensor) -> tuple[nx.Tensor, ...]:
    s = nx.remainder(nx.abs(b), 5)  # shift counts in [0, 5)
    d = nx.where(b == 0, 1, b)
    return (
        a + b, a - b, a * b, nx.floor_divide(a, d), nx.remainder(a, d), nx.pow(a, s),
        a & b, a | b, a ^ b, ~a, a << s, a >> s, nx.abs(a), nx.sign(a), -a,
        nx.maximum(a, b), nx.minimum(a, b), nx.population_count(a),
        nx.count_leading_zeros(a),
    )  # fmt: skip


def _convert(x: nx.Tensor) -> tuple[nx.Tensor, ...]:
    return nx.astype(x * 10, nx.int32), nx.bitcast(x, nx.int32), nx.astype(x, nx.bool_)


def _complex(z: nx.Tensor) -> tuple[nx.Tensor, ...]:
    return nx.real(z), nx.imag(z), nx.conj(z)


def _cond(s: nx.Tensor, x: nx.Tensor) -> nx.Tensor:
    # a batched predicate selects per example; an unbatched one (s unmapped) stays a cond
    return nx.cond(s > 0, lambda a: a * a + s, lambda a: nx.sin(a) - s, x)


def _while(n: nx.Tensor, x: nx.Tensor) -> tuple[nx.Tensor, nx.Tensor]:
    # each example stops at its own count (a batched predicate)
    def body(st: tuple[nx.Tensor, nx.Tensor]) -> tuple[nx.Tensor, nx.Tensor]:
        return st[0] + 1, st[1] * 1.5 + 1.0

    return nx.while_loop(lambda st: st[0] < n, body, (nx.zeros((), dtype=nx.int32), x))


def _fori(n: nx.Tensor, x: nx.Tensor) -> nx.Tensor:
    return nx.fori_loop(0, n, lambda i, s: s * 0.5 + nx.astype(i, nx.float32), x)


def _nested(x: nx.Tensor, y: nx.Tensor) -> nx.Tensor:
    # a vmap inside the vmapped function: each row against y
    return nx.vmap(lambda r: nx.sum(r * y) + nx.max(r), in_axes=0)(x)


def _eigh(x: nx.Tensor) -> tuple[nx.Tensor, nx.Tensor]:
    # the eigenvalues and the reconstruction: unique where the vectors' signs are not
    w, v = nx.eigh(x)
    return w, (v * w[None, :]) @ nx.matrix_transpose(v)


def _svd(x: nx.Tensor) -> tuple[nx.Tensor, nx.Tensor]:
    u, s, vh = nx.svd(x, full_matrices=False)
    return s, (u * s[None, :]) @ vh


def _qr(x: nx.Tensor) -> tuple[nx.Tensor, nx.Tensor]:
    q, r = nx.qr(x)
    return q @ r, nx.abs(nx.diagonal(r))


def _random(k: nx.Tensor, x: nx.Tensor) -> tuple[nx.Tensor, ...]:
    # an unmapped key (k unmapped): the same draws for every example
    k1, k2 = random.split(k)
    return (
        random.uniform(k1, (4,)) + x, random.normal(k2, (2, 2)),
        random.randint(random.fold_in(k, 3), (3,), 0, 10), random.bits(k2, (2,)),
    )  # fmt: skip


_IDX = np.array([2, 0, 2], dtype=np.int32)
_ROWS = np.array([[2], [0], [2], [1]], dtype=np.int32)  # a repeated row: adds, last put wins

CASES: list[Case] = [
    # element-wise
    Case("unary-float", _unary_float, (_f(3, 4, lo=-0.9, hi=0.9),)),
    Case("binary-float", _binary_float, (_f(3, 4), _f(3, 4, seed=1))),
    Case("binary-broadcast", lambda x, y: x * y + 1.0, (_f(3, 4), _f(4, seed=1))),
    Case("binary-scalar", lambda x, y: (x - y, nx.maximum(y, x)), (_f(3), _f(seed=1))),
    Case("classify", _classify, (_f(3, 4, lo=-3, hi=3),), exact=True),
    Case("compare", _comparisons, (_i(3, 4, lo=-2, hi=3), _i(3, 4, lo=-2, hi=3, seed=1)),
         exact=True),
    Case("compare-float", _comparisons, (_f(4).round(), _f(4, seed=1).round()), exact=True),
    Case("integer", _integer, (_i(3, 4, lo=-100, hi=100), _i(3, 4, seed=1)), exact=True),
    Case("logical", lambda a, b: (a & b, a | ~b, a ^ b), (_bool(6), _bool(6, seed=1)),
         exact=True),
    Case("where", lambda c, x, y: nx.where(c, x, y), (_bool(3, 4), _f(3, 4), _f(4, seed=1)),
         exact=True),
    Case("convert", _convert, (_f(3, 4),), exact=True),
    Case("complex", _complex, (_c(3),), exact=True),
    # reductions
    Case("reduce", lambda x: (nx.sum(x, axis=1), nx.max(x), nx.min(x, axis=0, keepdims=True),
                              nx.prod(x, axis=(0, 1))), (_f(3, 4),)),
    Case("reduce-bool", lambda x: (nx.all(x, axis=1), nx.any(x)), (_bool(3, 4),), exact=True),
    Case("reduce-int", lambda x: (nx.sum(x, axis=0), nx.max(x, axis=1, keepdims=True)),
         (_i(3, 4),), exact=True),
    Case("argreduce", lambda x: (nx.argmax(x), nx.argmin(x, axis=0),
                                 nx.argmax(x, axis=1, keepdims=True)), (_f(3, 4),), exact=True),
    # shapes
    Case("reshape", lambda x: nx.reshape(x, (2, 6)), (_f(3, 4),), exact=True),
    Case("transpose", lambda x: nx.permute_dims(x, (2, 0, 1)), (_f(2, 3, 4),), exact=True),
    Case("broadcast_to", lambda x: nx.broadcast_to(x, (2, 3, 4)), (_f(3, 1),), exact=True),
    Case("concatenate", lambda x, y: nx.concatenate([x, y, x], axis=1),
         (_f(3, 2), _f(3, 4, seed=1)), exact=True),
    Case("slice-steps", lambda x: x[::2, 3:0:-2], (_f(3, 4),), exact=True),
    Case("flip", lambda x: (nx.flip(x, axis=1), nx.flip(x)), (_f(3, 4),), exact=True),
    Case("pad", lambda x, v: nx.pad(x, [(1, 0), (0, 2)], constant_values=v),
         (_f(3, 4), _f(seed=1)), exact=True),
    Case("pad-int", lambda x: nx.pad(x, [(2, 1)], constant_values=7), (_i(3),), exact=True),
    Case("dynamic_slice", lambda x, i, j: nx.dynamic_slice(x, [i, j], (2, 2)),
         (_f(3, 4), _i(lo=0, hi=2), _i(lo=-1, hi=4, seed=1)), exact=True),
    Case("put_slice", lambda x, i, u: nx.put_slice(x, [i, 1], u),
         (_f(3, 4), _i(lo=0, hi=3), _f(2, 2, seed=1)), exact=True),
    # indexing
    Case("gather", lambda x, i: (x[i], x[:, i]), (_f(3, 4), _i(2, lo=0, hi=3)), exact=True),
    Case("gather-constant", lambda x: (x[_IDX], x[1, 2], x[_IDX, 1:]), (_f(3, 4),),
         exact=True),
    Case("take", lambda x, i: (nx.take(x, i, axis=1), nx.take(x, _IDX)),
         (_f(3, 4), _i(2, 2, lo=0, hi=4)), exact=True),
    Case("take_along_axis", lambda x, i: nx.take_along_axis(x, i, axis=1),
         (_f(3, 4), _i(3, 2, lo=0, hi=4)), exact=True),
    Case("indexed_add", lambda x, i, u: nx.indexed_add(x, i, u),
         (_f(3, 2), _i(4, 1, lo=0, hi=3), _f(4, 2, seed=1))),
    Case("indexed_add-constant", lambda x, u: nx.indexed_add(x, _ROWS, u, axes=[0]),
         (_i(3, 2), _i(4, 2, seed=1)), exact=True),
    Case("indexed_put", lambda x, i, u: nx.indexed_put(x, i, u),
         (_f(3, 2), _i(2, 1, lo=0, hi=3), _f(2, 2, seed=1)), exact=True),
    # contractions
    Case("matmul", lambda x, y: x @ y, (_f(3, 4), _f(4, 2, seed=1))),
    Case("dot-vector", lambda x, y: (nx.vecdot(x, y), nx.tensordot(x, y, axes=1)),
         (_f(4), _f(4, seed=1))),
    Case("einsum", lambda x, y: nx.einsum("ij,kj->ki", x, y), (_f(3, 4), _f(2, 4, seed=1))),
    Case("conv", lambda x, k: nx.conv(x, k, strides=2, padding="same"),
         (_f(2, 3, 7), _f(4, 3, 3, seed=1))),
    Case("conv-groups", lambda x, k: nx.conv(x, k, feature_group_count=2, kernel_dilation=2),
         (_f(1, 4, 6), _f(2, 2, 2, seed=1))),
    # sort, cumulative, fft
    Case("sort", lambda x: (nx.sort(x), nx.sort(x, axis=0, descending=True)), (_f(3, 4),),
         exact=True),
    Case("argsort", lambda x: nx.argsort(x, axis=0), (_f(3, 4),), exact=True),
    Case("cumulative", lambda x: (nx.cumulative_sum(x, axis=1), nx.cumulative_max(x, axis=0)),
         (_f(3, 4),)),
    Case("cumulative-int", lambda x: nx.cumulative_sum(x, axis=0, reverse=True), (_i(3, 4),),
         exact=True),
    Case("top_k", lambda x: nx.top_k(x, 2), (_f(3, 4),), exact=True),
    Case("fft", lambda x: (nx.fft.fft(x), nx.fft.ifft(x, n=6)), (_c(2, 4),)),
    # windows
    Case("window", lambda x: (nx.window_max(x, (2, 2), strides=(1, 2), padding="same"),
                              nx.window_sum(x, (2, 2), padding=[(1, 0), (0, 1)])),
         (_f(3, 4),)),
    Case("window_scatter", lambda x, s: nx.window_scatter_max(x, s, 0.0, (2, 2), strides=2),
         (_f(4, 4), _f(2, 2, seed=1))),
    # linear algebra
    Case("cholesky", lambda x: nx.cholesky(x), (_spd(3),), rtol=RTOL_LINALG),
    Case("solve", lambda a, b: nx.solve(a, b), (_wellcond(3), _f(3, 2, seed=1)),
         rtol=RTOL_LINALG),
    Case("triangular_solve", lambda a, b: nx.triangular_solve(a, b, transform_a="transpose"),
         (_wellcond(3), _f(3, 2, seed=1)), rtol=RTOL_LINALG),
    Case("inv-det", lambda x: (nx.inv(x), nx.det(x)), (_wellcond(3),), rtol=RTOL_LINALG),
    Case("lu", lambda x: nx.lu(x), (_wellcond(3),), rtol=RTOL_LINALG),
    Case("eigh", _eigh, (_spd(3),), rtol=RTOL_LINALG),
    Case("svd", _svd, (_f(4, 3),), rtol=RTOL_LINALG),
    Case("qr", _qr, (_f(4, 3),), rtol=RTOL_LINALG),
    Case("softmax", lambda x: (nx.softmax(x), nx.log_softmax(x, axis=0)), (_f(3, 4),)),
    # the trace-only blocks of the activations (relu, the stability shift), and grad
    Case("activations", lambda x: (nx.relu(x), nx.logsumexp(x, axis=1), nx.gelu(x),
                                   nx.grad(lambda v: nx.sum(nx.relu(v) * nx.softmax(v)))(x)),
         (_f(3, 4),)),
    # random: a batch of keys draws as the loop does
    Case("random", _random, (_keys, _f(4, seed=1))),
    # control flow and composition
    Case("cond", _cond, (np.array([1.0, -1.0, 0.5, -2.0, 0.0], np.float32), _f(3))),
    Case("while_loop", _while, (np.array([0, 3, 1, 4, 1], np.int32), _f(2))),
    Case("fori_loop", _fori, (np.array([2, 0, 3, 1, 4], np.int32), _f(2))),
    Case("nested-vmap", _nested, (_f(3, 4), _f(4, seed=1))),
]  # fmt: skip


# ---------------------------------------------------------------- the oracle and the runs


def _flat(out: Any) -> list[nx.Tensor]:
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    assert isinstance(out, nx.Tensor), f"a case returned {type(out).__name__}"
    return [out]


def _batches(case: Case) -> list[np.ndarray]:
    return [np.asarray(a() if callable(a) else a) for a in case.args]


def _loop(case: Case, batches: Sequence[np.ndarray], mapped: Sequence[bool]) -> list[Any]:
    """The oracle: ``case.fn`` once per example, eagerly; an unmapped argument is its
    first example every time. Per output: (stacked values, dtype)."""
    per: list[list[nx.Tensor]] = []
    for i in range(B):
        args = [nx.tensor(a[i] if m else a[0]) for a, m in zip(batches, mapped)]
        per.append(_flat(case.fn(*args)))
    return [(np.stack([p[j].to_numpy() for p in per]), per[0][j].dtype)
            for j in range(len(per[0]))]  # fmt: skip


def _compare(case: Case, got: Any, want: list[Any], out_axes: Sequence[int], where: str) -> None:
    gots = _flat(got)
    assert len(gots) == len(want), f"{where}: {len(gots)} outputs, the loop has {len(want)}"
    for j, (g, (w, dt), ax) in enumerate(zip(gots, want, out_axes)):
        at = f"{where}, output {j}"
        w = np.moveaxis(w, 0, ax)
        assert g.dtype is dt and g.shape == w.shape, (
            f"{at}: got {g.describe()}, the loop gives {dt}{list(w.shape)}"
        )
        h = g.to_numpy()
        if case.exact or dt.kind not in "fc":
            np.testing.assert_array_equal(h, w, err_msg=at, strict=True)
        else:
            scale = max(1.0, float(np.abs(w).max(initial=0)))
            np.testing.assert_allclose(h, w, rtol=case.rtol, atol=case.rtol * scale, err_msg=at)


def _moved(batches: Sequence[np.ndarray], axes: Sequence[int | None]) -> list[nx.Tensor]:
    return [nx.tensor(a[0] if ax is None else np.moveaxis(a, 0, ax))
            for a, ax in zip(batches, axes)]  # fmt: skip


def _structured(out: Any, axes: list[int]) -> Any:
    """``out_axes`` with the structure of the case's output."""
    if isinstance(out, tuple):
        return tuple(axes)
    return axes[0]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_vmap(case: Case) -> None:
    batches = _batches(case)
    n = len(batches)
    want = _loop(case, batches, [True] * n)
    ranks = [a.ndim - 1 for a in batches]
    out_ranks = [w.ndim - 1 for w, _ in want]
    shape_of = case.fn(*[nx.tensor(a[0]) for a in batches])  # the output's structure

    def run(in_axes: Any, out_list: list[int], what: str, loop: list[Any]) -> None:
        f = nx.vmap(case.fn, in_axes=in_axes, out_axes=_structured(shape_of, out_list))
        got = f(*_moved(batches, in_axes))
        _compare(case, got, loop, out_list, f"{case.name}, {what}")

    # the batch at axis 0, 1 (axis 0 of a 0-d example) and -1, of inputs and outputs
    run([0] * n, [0] * len(want), "in_axes 0", want)
    run([1 if r >= 1 else 0 for r in ranks], [1 if r >= 1 else 0 for r in out_ranks],
        "in_axes 1, out_axes 1", want)  # fmt: skip
    run([-1] * n, [-1] * len(want), "in_axes -1, out_axes -1", want)
    # each input in turn unmapped: every example sees its first value
    if n > 1:
        for j in range(n):
            axes: list[int | None] = [0] * n
            axes[j] = None
            mapped = [a is not None for a in axes]
            run(axes, [0] * len(want), f"argument {j} unmapped", _loop(case, batches, mapped))
    # compiled, the batch at axis 0
    for name in compilers_serving(nx.get_default_backend()):
        got = nx.jit(nx.vmap(case.fn), compiler=name)(*_moved(batches, [0] * n))
        _compare(case, got, want, [0] * len(want), f"{case.name}, jit({name})")


# ---------------------------------------------------------------- coverage

#: the primitives with no tensor input: vmap never batches them (their output depends
#: on no argument)
NO_TENSOR_INPUTS = frozenset(p.name for p in REGISTRY if p.family == "creation")


def _reached(nodes: Sequence[Node]) -> set[str]:
    """The primitives and blocks of ``nodes`` (a graph's walk) that take a value computed
    from an argument: the ones a vmap of the case batches."""
    live: set[int] = set()
    names: set[str] = set()
    for node in nodes:
        if node.op == PARAMETER:  # an argument, or a subgraph's (conservatively live)
            live.add(node.id)
            continue
        if any(isinstance(i, Node) and i.id in live for i in node.inputs):
            live.add(node.id)
            names.add(node.value.name if node.op == BLOCK else node.op)
    return names


def test_vmap_reaches_every_rule() -> None:
    reached: set[str] = set()
    for case in CASES:
        args = [nx.tensor(a[0]) for a in _batches(case)]
        reached |= _reached(nx.trace(case.fn, *args).walk())
    primitives = {p.name for p in REGISTRY} - NO_TENSOR_INPUTS
    missing = sorted((primitives | set(BLOCKS)) - reached)
    assert not missing, (
        "primitives or blocks no vmap case of the kit batches (add a case to "
        f"numerix/testing/suite/vmap.py): {', '.join(missing)}"
    )
