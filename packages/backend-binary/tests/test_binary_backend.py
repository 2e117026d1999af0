"""numerix-binary's own tests: what is particular to host memory and numpy kernels."""

from __future__ import annotations

import threading

import ml_dtypes
import numpy as np
import pytest

import numerix as nx
from numerix_binary import backend as binary
from numerix_binary.backend import BinaryBackend


def test_registered_as_binary_and_default():
    b = nx.get_backend("binary")
    assert type(b) is BinaryBackend
    assert b.is_host and b.device == "cpu"
    assert nx.get_default_backend() is b


@pytest.mark.parametrize("dtype", nx.dtypes.ALL_DTYPES, ids=str)
def test_every_dtype_is_held_exactly(dtype):
    a = np.arange(6).reshape(2, 3).astype(dtype.numpy_dtype)
    t = nx.tensor(a)
    assert t.dtype is dtype
    assert t.data.dtype == dtype.numpy_dtype
    assert np.shares_memory(t.data, a)


def test_bfloat16_is_ml_dtypes():
    t = nx.ones((3,), dtype=nx.bfloat16)
    assert t.data.dtype == np.dtype(ml_dtypes.bfloat16)
    r = nx.exp(t)
    assert r.dtype is nx.bfloat16 and r.data.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_allclose(r.data.astype(np.float32), np.e, rtol=1e-2)


def test_zero_d_results_are_arrays_not_numpy_scalars():
    x = nx.tensor(2.0)
    for r in (x + x, nx.sum(nx.ones((3,))), nx.exp(x), x > 1):
        assert type(r.data) is np.ndarray and r.data.shape == ()


def test_float_to_int_cast_saturates_and_zeroes_nan():
    t = nx.tensor([np.nan, np.inf, -np.inf, 300.7, -300.7, 2.9, -2.9], dtype=nx.float32)
    r = t.astype(nx.int8)
    assert r.tolist() == [0, 127, -128, 127, -128, 2, -2]


def test_integer_pow_with_negative_exponent_is_defined():
    base = nx.tensor([1, -1, -1, 2, 0, 3], dtype=nx.int32)
    exp = nx.tensor([-1, -1, -2, -1, 2, 2], dtype=nx.int32)
    assert (base**exp).tolist() == [1, -1, 1, 0, 0, 9]


def test_sigmoid_does_not_overflow():
    t = nx.tensor([-1000.0, 0.0, 1000.0])
    with np.errstate(over="raise"):
        r = nx.sigmoid(t)
    assert r.tolist() == [0.0, 0.5, 1.0]


def test_device_option():
    with pytest.raises(nx.BackendOptionError, match="device must be 'cpu'"):
        nx.tensor([1], backend="binary:cuda")
    assert BinaryBackend.devices() == ["cpu"]


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.uint32, np.int64, np.uint64])
def test_shift_by_one_amount_matches_python_ints(dtype):
    # one 0-d amount takes the kernels' fast path; out of range it is XLA's 0 / sign fill
    info = np.iinfo(dtype)
    bits = info.bits
    a = np.asarray([info.min, info.max, 0, 1, 5] + ([-7] if info.min else []), dtype)
    for s in (0, 1, 7, bits - 1, bits, bits + 3) + ((-1,) if info.min else ()):
        left = nx.bitwise_left_shift(nx.tensor(a), nx.tensor(np.asarray(s, dtype))).to_numpy()
        right = nx.bitwise_right_shift(nx.tensor(a), nx.tensor(np.asarray(s, dtype))).to_numpy()
        ok = 0 <= s < bits
        want_l = [((int(x) << s) & (2**bits - 1)) if ok else 0 for x in a]
        want_l = [v - 2**bits if info.min and v >= 2 ** (bits - 1) else v for v in want_l]
        want_r = [int(x) >> s if ok else (-1 if x < 0 else 0) for x in a]
        assert left.dtype == dtype and right.dtype == dtype
        assert left.tolist() == want_l, (s, left, want_l)
        assert right.tolist() == want_r, (s, right, want_r)


def test_kernels_in_several_threads_keep_numpy_quiet():
    # one kernel context serves the process; a thread that finds it in use (here held
    # by another thread) takes a context of its own, so its kernels still run with
    # numpy's floating-point errors off, whatever the thread itself set
    entered, release = threading.Event(), threading.Event()

    def hold() -> None:
        binary._run_in_kernel_context(lambda: (entered.set(), release.wait(10)))

    holder = threading.Thread(target=hold)
    holder.start()
    assert entered.wait(10)
    x = nx.tensor(np.array([1.0, 0.0, -1.0], np.float32))
    failures: list[BaseException] = []
    # compiled programs run in the same context (program_context): the evaluator's too
    divide_log = nx.jit(lambda v: (nx.divide(v, 0.0), nx.log(v)), compiler="evaluator")

    def worker() -> None:
        np.seterr(all="raise")  # numpy's error state is per thread
        try:
            for _ in range(3):
                got = nx.divide(x, 0.0).to_numpy()
                np.testing.assert_array_equal(got, np.array([np.inf, np.nan, -np.inf], np.float32))
                assert nx.log(x).to_numpy()[1] == -np.inf
                q, lg = divide_log(x)
                np.testing.assert_array_equal(q.to_numpy(), got)
                assert lg.to_numpy()[1] == -np.inf
            assert np.geterr()["divide"] == "raise"  # the thread's own state is its own
        except BaseException as e:  # reported in the main thread
            failures.append(e)

    try:
        threads = [threading.Thread(target=worker) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        release.set()
        holder.join()
    assert failures == []
