"""Conformance of :mod:`numerix.random`: the backend under test draws the same numbers
as the core's Threefry run on ``binary``, eagerly and under every compiler serving it.

The reference is itself pinned by Threefry-2x32-20's published known-answer vectors
(Random123's ``kat_vectors``). Integers, booleans and plain uniform floats (bits
under an exponent) must match bit for bit everywhere. Scaled uniforms (``minval``,
``maxval``) are bit for bit eagerly and with the evaluator; a fusing compiler may
contract ``u * span + minval`` into one fused multiply-add, so they are held to the
kit's float tolerance there, as the samplers that go through ``erf_inv``, ``log`` or
``erf`` are everywhere (each backend rounds those functions its own way).

A backend may run Threefry as one kernel (block ``threefry2x32``):
``test_random_threefry_block_matches_core`` holds it to the core's composite of
primitives, bit for bit, and every other test runs through it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import dtypes, random
from numerix.defn.compilers import compilers_serving
from numerix.random import _erf_inv, _erf_inv_xla, _threefry2x32_core
from numerix.testing.tolerances import tolerance

# Random123 kat_vectors, threefry2x32_20: (key words, counter words) -> output words
THREEFRY_KAT = [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
]


@dataclass(frozen=True)
class Case:
    name: str
    fn: Callable[[nx.Tensor], Any]
    kind: str  # "bits": exact everywhere; "scaled": exact unless fused; "math": tolerance
    op: str | None = None  # the tolerance's op for "math"

    def __str__(self) -> str:
        return self.name


F16, BF16, F32, F64 = dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64
P = np.asarray([0.1, 0.0, 0.6, 0.3], np.float32)
LOGITS = np.log(np.asarray([[0.2, 0.3, 0.5], [0.7, 0.2, 0.1]], np.float32))
# one shape for most draws: on backends that compile a kernel per shape (xla's eager
# kernels), the cases share them
S = (2, 3)


def _arange12(k: nx.Tensor) -> nx.Tensor:
    return nx.reshape(nx.arange(6, backend=k.backend), S)


CASES = [
    Case("key", lambda k: random.key(2**40 + 7, backend=k.backend), "bits"),
    Case("split", lambda k: [random.split(k), random.split(k, S), random.split(k, 0)], "bits"),
    Case("fold_in", lambda k: random.fold_in(k, 2**32 + 9), "bits"),
    Case(
        "bits",
        lambda k: (
            [random.bits(k), random.bits(k, (0, 3))]
            + [
                random.bits(k, S, d)
                for d in (dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64)
            ]
        ),
        "bits",
    ),
    Case(
        "uniform",
        lambda k: (
            [random.uniform(k), random.uniform(k, (0,))]
            + [random.uniform(k, S, d) for d in (F16, BF16, F32, F64)]
        ),
        "bits",
    ),
    Case(
        "uniform_bounds",
        lambda k: (
            [random.uniform(k, S, d, -2.0, 3.0) for d in (F16, F64)]
            + [random.uniform(k, S, F32, nx.tensor([[0.0], [1.0]], backend=k.backend), 4.0)]
        ),
        "scaled",
    ),
    Case(
        "randint",
        lambda k: (
            [random.randint(k, S, -5, 300, d) for d in (dtypes.int8, dtypes.uint32, dtypes.int64)]
            + [
                random.randint(k, S, -(2**31), 2**31, dtypes.int32),
                random.randint(k, S, 0, 2**64 - 1, dtypes.uint64),
                random.randint(k, S, 3, 3),
                random.randint(k, (), 0, 10),
            ]
        ),
        "bits",
    ),
    Case(
        "permutation",
        lambda k: [
            random.permutation(k, 6),
            random.permutation(k, 0),
            random.permutation(k, 1),
            random.permutation(k, _arange12(k), 1),
            random.permutation(k, _arange12(k), 1, independent=True),
        ],
        "bits",
    ),
    Case(
        "choice",
        lambda k: [
            random.choice(k, 10, S),
            random.choice(k, 10, (2,), replace=False),
            random.choice(k, 5, (0,)),
            random.choice(k, 4, S, p=nx.tensor(P, backend=k.backend)),
            random.choice(k, 4, (2,), False, nx.tensor(P, backend=k.backend)),
        ],
        "bits",
    ),
    Case(
        "bernoulli",
        lambda k: [
            random.bernoulli(k, 0.3, S),
            random.bernoulli(k, nx.tensor(P, backend=k.backend)),
        ],
        "bits",
    ),
    Case(
        "categorical",
        lambda k: random.categorical(k, nx.tensor(LOGITS, backend=k.backend), -1, (3, 2)),
        "bits",
    ),
    Case(
        "normal",
        lambda k: (
            [random.normal(k), random.normal(k, (0,))]
            + [random.normal(k, S, d) for d in (F16, F32, F64)]
        ),
        "math",
        "erf_inv",
    ),
    Case("truncated_normal", lambda k: random.truncated_normal(k, -1.0, 2.0, S), "math", "erf_inv"),
    Case(
        "gumbel_exponential",
        lambda k: [random.gumbel(k, S), random.exponential(k, S, F64)],
        "math",
        "log",
    ),
]


def _leaves(x: Any) -> list[nx.Tensor]:
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _compare(got: Any, want: Any, *, exact: bool, op: str | None, where: str) -> None:
    gl, wl = _leaves(got), _leaves(want)
    assert len(gl) == len(wl), where
    for g, w in zip(gl, wl):
        assert type(g) is nx.Tensor, where
        assert g.dtype is w.dtype and g.shape == w.shape, (where, g.describe(), w.describe())
        a, b = g.to_numpy(), w.to_numpy()
        assert a.dtype == w.dtype.numpy_dtype and a.shape == w.shape, where
        if exact or g.dtype.kind not in "fc":
            np.testing.assert_array_equal(a, b, strict=True, err_msg=where)
        else:
            if g.dtype is dtypes.bfloat16:
                a, b = a.astype(np.float32), b.astype(np.float32)
            rt, at = tolerance(op, g.dtype)
            np.testing.assert_allclose(a, b, rtol=rt, atol=at, err_msg=where)


_REFERENCE: dict[str, Any] = {}


def _reference(case: Case) -> Any:
    # the core's Threefry on binary, once per case for the session
    if case.name not in _REFERENCE:
        _REFERENCE[case.name] = case.fn(random.key(20261124, backend="binary"))
    return _REFERENCE[case.name]


def test_random_threefry_known_answers() -> None:
    for (k1, k2), (x1, x2), want in THREEFRY_KAT:
        words = [nx.tensor(v, dtype=nx.uint32) for v in (k1, k2, x1, x2)]
        y1, y2 = random.threefry2x32(*words)
        assert y1.dtype is nx.uint32 and y1.shape == ()
        assert (y1.item(), y2.item()) == want
    # element-wise over broadcast counters, eagerly and compiled
    keys = [nx.tensor(np.asarray([k[0][i] for k in THREEFRY_KAT], np.uint32)) for i in (0, 1)]
    ctrs = [nx.tensor(np.asarray([k[1][i] for k in THREEFRY_KAT], np.uint32)) for i in (0, 1)]
    want = [[k[2][i] for k in THREEFRY_KAT] for i in (0, 1)]
    for name in ["eager", *compilers_serving(nx.get_default_backend())]:
        fn = random.threefry2x32 if name == "eager" else nx.jit(random.threefry2x32, compiler=name)
        got = fn(*keys, *ctrs)
        assert [g.to_numpy().tolist() for g in got] == want, name


THREEFRY_SHAPES = [
    ((), (), (), ()),
    ((), (), (), (0,)),
    ((), (), (1, 4), (3, 1)),
    ((3,), (3,), (3,), (3,)),
    ((), (2, 3), (), (2, 3)),
]


def test_random_threefry_block_matches_core() -> None:
    # the backend's block_threefry2x32, when it has one, against the core's composite of
    # primitives, over broadcast shapes, eagerly and under every serving compiler
    rng = np.random.default_rng(5)
    names = compilers_serving(nx.get_default_backend())
    for shapes in THREEFRY_SHAPES:
        words = [nx.tensor(rng.integers(0, 2**32, s, dtype=np.uint32)) for s in shapes]
        want = list(_threefry2x32_core(*words))
        _compare(list(random.threefry2x32(*words)), want, exact=True, op=None, where=f"{shapes}")
        for name in names:
            got = nx.jit(random.threefry2x32, compiler=name)(*words)
            _compare(list(got), want, exact=True, op=None, where=f"{shapes} {name}")


def test_random_xla_erf_inv_block_matches_core() -> None:
    # the backend's block_xla_erf_inv, when it has one, against the core's composite on
    # binary, bit for bit: 0, the ends and their neighbours, tiny and a spread, in
    # every float dtype the backend claims, over 0-d, empty and 2-d shapes
    claimed = type(nx.get_default_backend()).supported_dtypes
    names = compilers_serving(nx.get_default_backend())
    rng = np.random.default_rng(7)
    for d in (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64):
        if claimed is not None and d not in claimed:
            continue
        npd = d.numpy_dtype
        edge = [0.0, -0.0, 1.0, -1.0, 0.5, -0.999, 1e-30]
        edge += [
            float(np.nextafter(npd.type(1), npd.type(0))),
            float(np.nextafter(npd.type(-1), npd.type(0))),
        ]
        for host in (np.asarray(0.25, npd), np.zeros((0, 3), npd), np.asarray(edge, npd),
                     rng.uniform(-1, 1, (4, 5)).astype(npd)):  # fmt: skip
            want = _erf_inv_xla(nx.tensor(host, backend="binary"))
            x = nx.tensor(host)
            _compare(_erf_inv(x), want, exact=True, op=None, where=f"{d} {host.shape}")
            for name in names:
                got = nx.jit(_erf_inv, compiler=name)(x)
                _compare(got, want, exact=True, op=None, where=f"{d} {host.shape} {name}")


@pytest.mark.parametrize("case", CASES, ids=str)
def test_random_same_numbers_as_binary(case: Case) -> None:
    want = _reference(case)
    backend = nx.get_default_backend()
    key = random.key(20261124)
    assert key.backend is backend
    got = case.fn(key)
    for g in _leaves(got):
        assert g.backend is backend, g.describe()
    _compare(got, want, exact=case.kind != "math", op=case.op, where=f"{case} eager")
    for name in compilers_serving(backend):
        fused = name != "evaluator"
        exact = case.kind == "bits" or (case.kind == "scaled" and not fused)
        jitted = nx.jit(case.fn, compiler=name)
        out = jitted(key)
        for g in _leaves(out):
            assert g.backend is backend, (name, g.describe())
        _compare(out, want, exact=exact, op=case.op, where=f"{case} {name}")


def test_random_traced_seed_and_fold_in() -> None:
    # seeds and fold_in data that are traced values, in a loop of steps
    def draws(seed: nx.Tensor, step: nx.Tensor) -> nx.Tensor:
        k = random.fold_in(random.key(seed), step)
        return random.uniform(random.split(k)[1], (3,))

    want = draws(nx.tensor(7, backend="binary"), nx.tensor(3, backend="binary"))
    eager = draws(nx.tensor(7), nx.tensor(3))
    _compare(eager, want, exact=True, op=None, where="eager")
    for name in compilers_serving(nx.get_default_backend()):
        f = nx.jit(draws, compiler=name)
        _compare(f(nx.tensor(7), nx.tensor(3)), want, exact=True, op=None, where=name)
        # a new step reuses the program and gives new numbers
        other = f(nx.tensor(7), nx.tensor(4))
        assert f.trace_count == 1, name
        assert not np.array_equal(other.to_numpy(), want.to_numpy()), name


def test_random_outputs_follow_the_key() -> None:
    backend = nx.get_default_backend()
    k = random.key(1, backend="binary")
    on_host = random.uniform(k, (2,))
    assert on_host.backend.name == "binary"
    moved = random.uniform(k, (2,), backend=backend)
    assert moved.backend is backend
    np.testing.assert_array_equal(moved.to_numpy(), on_host.to_numpy(), strict=True)
