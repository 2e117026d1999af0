"""numerix.random on the default backend: what it refuses, with which error and message,
and the parts of its derivation the kit cannot reach (counters past 2**32 elements).
The numbers themselves are checked by the kit (``numerix.testing.suite.random``) on
every backend and by the xla package against jax.random."""

from __future__ import annotations

import math

import numpy as np
import pytest

import numerix as nx
from numerix import _log_table
from numerix import random as R
from numerix.random import _counters, _erf_inv, _log_c64

K = R.key(0)


@pytest.mark.parametrize(
    ("key", "error", "match"),
    [
        (nx.tensor([0.0, 1.0]), nx.DTypeError, r"random.uniform: the key must be a uint32\[2\] "
         r"tensor, got f32\[2\] binary\(cpu\): make one with numerix.random.key\(seed\)"),
        (nx.tensor([0, 1]), nx.DTypeError, r"got s64\[2\]"),
        (nx.tensor(np.zeros(3, np.uint32)), nx.ShapeError,
         r"random.uniform: the key must have shape \(2,\), got u32\[3\]"),
        (R.split(K, 4), nx.ShapeError, r"holds several keys: pass one of them, e\.g\. keys\[0\]"),
        (nx.tensor(np.uint32(5)), nx.ShapeError, r"shape \(2,\), got u32"),
    ],
)  # fmt: skip
def test_bad_keys_are_refused(key, error, match):
    with pytest.raises(error, match=match):
        R.uniform(key, (2,))


def test_every_sampler_checks_its_key():
    bad = nx.tensor([1.0, 2.0])
    calls = [
        lambda: R.split(bad), lambda: R.fold_in(bad, 1), lambda: R.bits(bad),
        lambda: R.normal(bad), lambda: R.truncated_normal(bad, -1.0, 1.0),
        lambda: R.randint(bad, (), 0, 3), lambda: R.bernoulli(bad), lambda: R.gumbel(bad),
        lambda: R.exponential(bad), lambda: R.permutation(bad, 3), lambda: R.choice(bad, 3),
        lambda: R.categorical(bad, nx.zeros((3,))),
    ]  # fmt: skip
    for call in calls:
        with pytest.raises(nx.DTypeError, match=r"the key must be a uint32\[2\] tensor"):
            call()


@pytest.mark.parametrize("dtype", [nx.int32, nx.uint8, nx.bool_])
def test_uniform_and_normal_refuse_integer_dtypes(dtype):
    with pytest.raises(nx.DTypeError, match=rf"random.uniform: dtype must be a floating dtype, "
                       rf"got {dtype}: sample floats and convert"):  # fmt: skip
        R.uniform(K, (2,), dtype)
    with pytest.raises(nx.DTypeError, match=r"random.normal: dtype must be a floating or complex"):
        R.normal(K, (2,), dtype)
    for sampler in (R.gumbel, R.exponential):
        with pytest.raises(nx.DTypeError, match="dtype must be a floating dtype"):
            sampler(K, (2,), dtype)


def test_randint_refuses_float_bounds_and_dtypes():
    with pytest.raises(nx.DTypeError, match=r"random.randint: minval must be an integer, got "
                       r"float 0.5: pass int\(minval\)"):  # fmt: skip
        R.randint(K, (2,), 0.5, 3)
    with pytest.raises(nx.DTypeError, match=r"maxval must be an integer or integer tensor, got "
                       r"f32\[2\] binary\(cpu\): convert it with astype"):  # fmt: skip
        R.randint(K, (2,), 0, nx.tensor([1.0, 2.0]))
    with pytest.raises(nx.DTypeError, match="dtype must be an integer dtype, got float32"):
        R.randint(K, (2,), 0, 3, nx.float32)
    with pytest.raises(nx.ShapeError, match=r"random.randint: shapes \(2,\) and \(\) and \(3,\) "
                       r"cannot be broadcast"):  # fmt: skip
        R.randint(K, (2,), 0, nx.tensor([1, 2, 3]))


@pytest.mark.parametrize("p", [-0.1, 1.5, float("nan"), float("inf")])
def test_bernoulli_refuses_python_p_outside_0_1(p):
    with pytest.raises(nx.ArgumentError, match=r"random.bernoulli: p must be a probability in "
                       r"\[0, 1\], got"):  # fmt: skip
        R.bernoulli(K, p)
    assert R.bernoulli(K, 0.0, (3,)).tolist() == [False] * 3
    assert R.bernoulli(K, 1.0, (3,)).tolist() == [True] * 3


def test_choice_without_replacement_of_more_than_the_population():
    with pytest.raises(nx.ArgumentError, match=r"random.choice: cannot take 6 samples from a "
                       r"population of 5 without replacement: draw at most 5, or pass "
                       r"replace=True"):  # fmt: skip
        R.choice(K, 5, (2, 3), replace=False)
    with pytest.raises(nx.ArgumentError, match="population of 2"):
        R.choice(K, nx.zeros((4, 2)), (3,), replace=False, axis=1)
    assert sorted(R.choice(K, 5, (5,), replace=False).tolist()) == [0, 1, 2, 3, 4]
    with pytest.raises(nx.ShapeError, match=r"p must be None or a 1-d tensor of a.shape\[axis\]"):
        R.choice(K, 5, (2,), p=nx.tensor([0.5, 0.5]))


def test_other_refusals():
    with pytest.raises(nx.DTypeError, match=r"random.key: the seed must be an integer, got float"):
        R.key(1.5)
    with pytest.raises(nx.ArgumentError, match="outside the int64 and uint64 ranges"):
        R.key(2**64)
    with pytest.raises(nx.DTypeError, match=r"random.fold_in: data must be an integer"):
        R.fold_in(K, 1.0)
    with pytest.raises(nx.DTypeError, match=r"random.bits: dtype must be unsigned"):
        R.bits(K, (2,), nx.int32)
    with pytest.raises(nx.ShapeError, match=r"random.permutation: x must be an int or a tensor of "
                       r"at least one dimension"):  # fmt: skip
        R.permutation(K, nx.tensor(3.0))
    with pytest.raises(nx.ShapeError, match=r"random.uniform: parameters .* must broadcast to the "
                       r"shape argument \(2,\), but broadcasting gives \(2, 2\)"):  # fmt: skip
        R.uniform(K, (2,), nx.float32, nx.zeros((2, 2)))
    with pytest.raises(nx.ArgumentError, match="cannot take 4 samples without replacement"):
        R.categorical(K, nx.zeros((3,)), shape=(4,), replace=False)
    with pytest.raises(nx.ShapeError, match=r"random.categorical: shape \(4,\) must end with the "
                       r"batch shape \(2,\)"):  # fmt: skip
        R.categorical(K, nx.zeros((2, 3)), shape=(4,))


def test_keys_are_values_not_state():
    # the same key gives the same numbers; split keys give other numbers
    a = R.uniform(K, (4,)).tolist()
    assert R.uniform(K, (4,)).tolist() == a
    k1, k2 = R.split(K)
    assert R.uniform(k1, (4,)).tolist() != a
    assert R.uniform(k1, (4,)).tolist() != R.uniform(k2, (4,)).tolist()
    assert R.key(np.int64(5)).tolist() == R.key(5).tolist() == [0, 5]
    assert R.key(nx.tensor(-2)).tolist() == R.key(-2).tolist() == [2**32 - 1, 2**32 - 2]
    assert R.key(2**63 + 1).tolist() == [2**31, 1]


@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 5)])
def test_wide_counters_match_narrow_ones(shape):
    # past 2**32 elements the counters' high words come from a uint64 iota; the two
    # derivations agree wherever both apply
    backend = nx.get_default_backend()
    hi_n, lo_n = _counters(shape, backend)
    hi_w, lo_w = _counters(shape, backend, wide=True)
    assert hi_w.dtype is lo_w.dtype is nx.uint32 and hi_w.shape == lo_w.shape == shape
    np.testing.assert_array_equal(lo_w.to_numpy(), lo_n.to_numpy(), strict=True)
    np.testing.assert_array_equal(hi_w.to_numpy(), np.broadcast_to(hi_n.to_numpy(), shape))
    assert not hi_w.to_numpy().any()


@pytest.mark.parametrize("i", [0, 79, 80, 127])  # both ends of z < 1 and of z >= 1
def test_log_table_is_its_documented_construction(i):
    # the search of numerix._log_table regenerates the stored entry, bit for bit
    assert _log_table.entry(i) == _log_table.TABLE[i]
    invc, logc = _log_table.TABLE[i]
    assert logc == round(logc * 2**43) / 2**43 and abs(math.log(invc) + logc) < 2**-66


def test_float64_log_inside_normal_is_the_c_librarys():
    # normal's float64 log (XLA's on CPU, glibc's) against Python's math.log (glibc's
    # too), over its arguments: (0, 0.586], every table entry and exponent; numpy's own
    # log differs from it in about 0.05% of these
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(0.0, 0.586, 40_000), 2.0 ** rng.uniform(-53, -1, 20_000)])
    x = np.concatenate([x[x > 0], [2.0**-53, 2.0**-1022, 0.5, 0.586, 0.0]])
    want = np.array([math.log(v) if v > 0 else -math.inf for v in x])
    got = _log_c64(nx.tensor(x))
    assert got.dtype is nx.float64 and got.shape == x.shape
    np.testing.assert_array_equal(got.to_numpy(), want, strict=True)


def test_xla_erf_inv_block_gradient_is_erf_invs() -> None:
    # d/dx erfinv(x) = sqrt(pi) / 2 * exp(erfinv(x) ** 2), checked against a central
    # difference of the core's composite in float64
    x = nx.tensor(np.array([-0.9, -0.3, 0.0, 0.2, 0.75]), dtype=nx.float64)
    got = nx.grad(lambda a: _erf_inv(a).sum())(x)
    h = 1e-6
    want = (_erf_inv(x + h).to_numpy() - _erf_inv(x - h).to_numpy()) / (2 * h)
    assert got.dtype is nx.float64 and got.shape == (5,)
    np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-6)
