"""numerix.random against jax.random itself, for the same keys: bits, uniform, randint,
permutation, choice, split, fold_in and normal bit for bit; the other samplers built
on log, erf and erf_inv the same within the float tolerance, and sane as
distributions. On the xla backend, eagerly and under the evaluator and xla compilers;
JAX's own default (threefry2x32, jax_threefry_partitionable on) is what it is checked
against, and the test says so if that default changes."""

from __future__ import annotations

import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numerix as nx
from numerix import random as R
from numerix_xla.backend import X64Warning

with warnings.catch_warnings():
    warnings.simplefilter("ignore", X64Warning)
    nx.tensor(0, backend="xla")  # numerix's 64-bit mode, so jax's int64 / uint64 draws exist

MODES = [None, "xla"]  # eager, then compiled by XLA (the kit runs the evaluator too)
SEEDS = [0, 42, -1, 2**40 + 3, -(2**63)]
SHAPES = [(), (0,), (1,), (3, 4), (2, 0, 3)]
UINTS = ["uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


_JITTED = {}


def run(fn, mode, *args):
    """``fn(*args)`` eagerly (mode None) or jitted with the compiler ``mode`` (one jit per
    function and compiler: a function called again with new keys reuses its program)."""
    if mode is None:
        return fn(*args)
    if (fn, mode) not in _JITTED:
        _JITTED[fn, mode] = nx.jit(fn, compiler=mode)
    return _JITTED[fn, mode](*args)


def same(got, want, *, ulp=0, backend="xla"):
    want = np.asarray(want)
    assert got.backend.name == backend, got.describe()
    a = got.to_numpy()
    assert a.dtype == want.dtype and a.shape == want.shape, (got.describe(), want.dtype, want.shape)
    if ulp == 0 or a.dtype.kind not in "fc":
        np.testing.assert_array_equal(a, want, strict=True)
        return
    i = np.dtype(f"i{a.dtype.itemsize}")
    diff = np.abs(a.view(i).astype(np.int64) - want.view(i).astype(np.int64))
    assert diff.size == 0 or diff.max() <= ulp, (diff.max(), a, want)


def test_jax_default_is_partitionable_threefry():
    # the derivation numerix implements; if JAX changes its default, this says so first
    assert jax.config.jax_default_prng_impl == "threefry2x32"
    assert jax.config.jax_threefry_partitionable is True


def test_key_split_fold_in():
    data = (0, 7, 2**32 - 1)

    def derived(k):
        return [R.split(k), R.split(k, (2, 3)), R.split(k, 0)] + [R.fold_in(k, d) for d in data]

    for seed in SEEDS:
        k = R.key(seed, backend="xla")
        jk = jax.random.PRNGKey(seed)
        same(k, jk)
        want = [jax.random.split(jk), jax.random.split(jk, (2, 3)), jax.random.split(jk, 0)]
        want += [jax.random.fold_in(jk, d) for d in data]
        for mode in MODES:
            for g, w in zip(run(derived, mode, k), want, strict=True):
                same(g, w)
    same(R.key(np.uint64(2**64 - 1), backend="xla"), jax.random.PRNGKey(np.uint64(2**64 - 1)))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_bits(shape):
    k, jk = R.key(7, backend="xla"), jax.random.PRNGKey(7)
    for mode in MODES:
        got = run(lambda k: [R.bits(k, shape, getattr(nx, d)) for d in UINTS], mode, k)
        for g, d in zip(got, UINTS):
            same(g, jax.random.bits(jk, shape, d))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_uniform(shape):
    k, jk = R.key(11, backend="xla"), jax.random.PRNGKey(11)
    for mode in MODES:
        got = run(lambda k: [R.uniform(k, shape, getattr(nx, d)) for d in FLOATS], mode, k)
        for g, d in zip(got, FLOATS):
            same(g, jax.random.uniform(jk, shape, d))
        # JAX fuses u * span + minval into one multiply-add: numerix does as well
        got = run(lambda k: [R.uniform(k, shape, getattr(nx, d), -2.0, 3.0) for d in FLOATS],
                  mode, k)  # fmt: skip
        for g, d in zip(got, FLOATS):
            same(g, jax.random.uniform(jk, shape, d, -2.0, 3.0))


@pytest.mark.parametrize("dtype", INTS)
def test_randint(dtype):
    k, jk = R.key(3, backend="xla"), jax.random.PRNGKey(3)
    info = np.iinfo(dtype)
    lo64, hi64 = max(int(info.min), -(2**63)), min(int(info.max), 2**63 - 1)
    ranges = [(0, 10), (lo64, hi64), (5, 5), (9, 2)]
    if info.max < 2**63 - 1:
        ranges.append((0, int(info.max) + 1))  # past the dtype: one more than its maximum
    if info.min < 0:
        ranges.append((-100, 100))
    shapes = [(), (0,), (2, 3)]
    cases = [(shape, lo, hi) for shape in shapes for lo, hi in ranges]
    for mode in MODES:
        got = run(lambda k: [R.randint(k, s, lo, hi, getattr(nx, dtype)) for s, lo, hi in cases],
                  mode, k)  # fmt: skip
        for g, (s, lo, hi) in zip(got, cases):
            same(g, jax.random.randint(jk, s, lo, hi, dtype))


def test_randint_tensor_bounds():
    k, jk = R.key(5, backend="xla"), jax.random.PRNGKey(5)
    lo = np.asarray([[0], [100]], np.int64)
    for mode in MODES:
        got = run(
            lambda k, lo: R.randint(k, (2, 3), lo, 1000), mode, k, nx.tensor(lo, backend="xla")
        )
        same(got, jax.random.randint(jk, (2, 3), lo, 1000))


def test_permutation():
    k, jk = R.key(9, backend="xla"), jax.random.PRNGKey(9)
    x = np.arange(24.0, dtype=np.float32).reshape(4, 6)
    ns = [0, 1, 2, 10, 1700]  # 1700: two rounds of sorting keys
    for mode in MODES:
        got = run(lambda k: [R.permutation(k, n) for n in ns], mode, k)
        for g, n in zip(got, ns):
            same(g, jax.random.permutation(jk, n))
    for mode in MODES:
        for axis, independent in [(0, False), (1, False), (1, True), (-1, True)]:
            got = run(lambda k, x, a=axis, i=independent: R.permutation(k, x, a, i), mode, k,
                      nx.tensor(x, backend="xla"))  # fmt: skip
            same(got, jax.random.permutation(jk, x, axis, independent))


def test_choice():
    k, jk = R.key(13, backend="xla"), jax.random.PRNGKey(13)
    x = np.arange(24, dtype=np.int32).reshape(4, 6)
    p = np.asarray([0.1, 0.0, 0.6, 0.3], np.float32)
    cases = [
        (lambda k: R.choice(k, 10, (4,)), lambda: jax.random.choice(jk, 10, (4,))),
        (lambda k: R.choice(k, 10, (2, 3), False), lambda: jax.random.choice(jk, 10, (2, 3), False)),
        (lambda k: R.choice(k, 10, ()), lambda: jax.random.choice(jk, 10, ())),
        (lambda k: R.choice(k, 10, (0,)), lambda: jax.random.choice(jk, 10, (0,))),
        (lambda k: R.choice(k, nx.tensor(x, backend="xla"), (2, 3), True, None, 1),
         lambda: jax.random.choice(jk, x, (2, 3), True, None, 1)),
        (lambda k: R.choice(k, nx.tensor(x, backend="xla"), (3,), False, None, 1),
         lambda: jax.random.choice(jk, x, (3,), False, None, 1)),
        (lambda k: R.choice(k, 4, (6,), True, nx.tensor(p, backend="xla")),
         lambda: jax.random.choice(jk, 4, (6,), True, p)),
    ]  # fmt: skip
    wants = [theirs() for _, theirs in cases]
    for mode in MODES:  # one program for all the cases
        for got, want in zip(run(lambda k: [ours(k) for ours, _ in cases], mode, k), wants):
            same(got, want)
    # without replacement, JAX's top_k gives int32 indices, numerix's int64: same values
    got = R.choice(k, 4, (3,), False, nx.tensor(p, backend="xla"))
    same(got, np.asarray(jax.random.choice(jk, 4, (3,), False, p)).astype(np.int64))


# normal's erf_inv is XLA's approximation (with XLA's log1p, its float32 log, glibc's
# float64 log and fused multiply-adds) written with numerix ops, so every backend draws
# JAX's numbers bit for bit, in every float dtype. Key 103's 2,000 float64 draws include
# some that numpy's and torch's own log (and torch's float64 sqrt) round differently.
# (backend, compiler) pairs, eager first
NORMAL_RUNS = [("xla", None), ("xla", "xla"), ("binary", None), ("torch", None)]


@pytest.mark.parametrize("shape", [(), (0,), (2000,)], ids=str)
@pytest.mark.parametrize(("backend", "mode"), NORMAL_RUNS, ids=str)
def test_normal(shape, backend, mode):
    k, jk = R.key(103, backend=backend), jax.random.PRNGKey(103)
    dtypes = [*FLOATS, "complex64"]
    got = run(lambda k: [R.normal(k, shape, getattr(nx, d)) for d in dtypes], mode, k)
    for g, d in zip(got, dtypes):
        want = np.asarray(jax.random.normal(jk, shape, d))
        if d != "complex64":
            same(g, want, backend=backend)
        else:  # (re + 1j * im) / sqrt(2) as a complex division: XLA's, fused or not
            assert g.dtype is nx.complex64 and g.shape == want.shape
            np.testing.assert_allclose(g.to_numpy(), want, rtol=2e-6, atol=2e-7)


@pytest.mark.parametrize("backend", ["binary", "torch", "xla"])
def test_normal_float64_log_and_sqrt_are_xlas(backend):
    # the two float64 functions normal takes from the platform, on each backend: the log
    # is XLA's on CPU (glibc's, as Python's math.log), the square root correctly rounded
    # (torch's own is an ulp off in about 1% of these)
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(0.0, 0.586, 20_000), 2.0 ** rng.uniform(-53, -1, 5_000)])
    x = np.concatenate([x, [0.0, 2.0**-53, 0.5]])
    # one length for both (xla's eager kernels are compiled per shape: they share them)
    w = np.concatenate([rng.uniform(0.0, 40.0, x.size - 6), [0.0, 1.0, 4.0, 6.25, 16.0, np.inf]])
    want_log = np.asarray(jax.jit(jnp.log)(x))
    assert np.array_equal(want_log[:-3], [math.log(v) for v in x[:-3]])
    for got, want in [
        (R._log_c64(nx.tensor(x, backend=backend)), want_log),
        (R._sqrt64(nx.tensor(w, backend=backend)), np.sqrt(w)),
    ]:
        same(got, want, backend=backend)


def test_samplers_on_erf_and_log_match_jax():
    k, jk = R.key(19, backend="xla"), jax.random.PRNGKey(19)
    f32 = jnp.float32
    lg = np.log(np.asarray([[0.2, 0.3, 0.5], [0.7, 0.2, 0.1]], np.float32))
    cases = [
        (lambda k: R.truncated_normal(k, -1.0, 2.0, (50,)),
         lambda: jax.random.truncated_normal(jk, f32(-1), f32(2), (50,), "float32")),
        (lambda k: R.truncated_normal(k, -1.0, 2.0, (), nx.float64),
         lambda: jax.random.truncated_normal(jk, -1.0, 2.0, (), "float64")),
        (lambda k: R.gumbel(k, (50,)), lambda: jax.random.gumbel(jk, (50,), "float32")),
        (lambda k: R.gumbel(k, (0,), nx.float64), lambda: jax.random.gumbel(jk, (0,), "float64")),
        (lambda k: R.exponential(k, (50,)), lambda: jax.random.exponential(jk, (50,), "float32")),
        (lambda k: R.exponential(k, (), nx.float64),
         lambda: jax.random.exponential(jk, (), "float64")),
        (lambda k: R.bernoulli(k, 0.3, (50,)), lambda: jax.random.bernoulli(jk, f32(0.3), (50,))),
        (lambda k: R.bernoulli(k, nx.tensor([0.1, 0.9], backend="xla")),
         lambda: jax.random.bernoulli(jk, jnp.asarray([0.1, 0.9], f32))),
        (lambda k: R.categorical(k, nx.tensor(lg, backend="xla")),
         lambda: jax.random.categorical(jk, lg)),
        (lambda k: R.categorical(k, nx.tensor(lg, backend="xla"), 0, (5, 3)),
         lambda: jax.random.categorical(jk, lg, 0, (5, 3))),
    ]  # fmt: skip
    wants = [np.asarray(theirs()) for _, theirs in cases]
    for mode in MODES:  # one program for all the cases
        for got, want in zip(run(lambda k: [ours(k) for ours, _ in cases], mode, k), wants):
            assert got.backend.name == "xla" and got.shape == want.shape
            a = got.to_numpy()
            assert a.dtype == want.dtype, (a.dtype, want.dtype)
            if a.dtype.kind == "f":
                # the bounded uniforms inside: fused multiply-add in JAX, not eagerly here
                tol = 2e-6 if a.dtype == np.float32 else 1e-12
                np.testing.assert_allclose(a, want, rtol=tol, atol=tol)
            else:
                np.testing.assert_array_equal(a, want)
    got = R.categorical(k, nx.tensor(lg, backend="xla"), -1, (2, 2), False)
    same(got, np.asarray(jax.random.categorical(jk, lg, -1, (2, 2), False)).astype(np.int64))


def test_distributions_are_sane():
    k = R.key(23, backend="xla")
    n = 20000
    u = R.uniform(k, (n,)).to_numpy()
    assert 0.0 <= u.min() and u.max() < 1.0 and abs(u.mean() - 0.5) < 0.01
    z = R.normal(k, (n,)).to_numpy()
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1.0) < 0.03
    t = R.truncated_normal(k, -0.5, 1.5, (n,)).to_numpy()
    assert t.min() > -0.5 and t.max() < 1.5
    e = R.exponential(k, (n,)).to_numpy()
    assert e.min() >= 0 and abs(e.mean() - 1.0) < 0.03
    g = R.gumbel(k, (n,)).to_numpy()
    assert abs(g.mean() - np.euler_gamma) < 0.03
    b = R.bernoulli(k, 0.25, (n,)).to_numpy()
    assert b.dtype == np.bool_ and abs(b.mean() - 0.25) < 0.01
    c = R.categorical(k, nx.log(nx.tensor([0.1, 0.2, 0.7], backend="xla")), shape=(n,))
    freq = np.bincount(c.to_numpy(), minlength=3) / n
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.7], atol=0.015)
    r = R.randint(k, (n,), 0, 6).to_numpy()
    assert r.min() == 0 and r.max() == 5
    np.testing.assert_allclose(np.bincount(r) / n, np.full(6, 1 / 6), atol=0.01)
