"""numerix-torch's own tests: devices, options, exact unsigned arithmetic, transfers."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import numerix as nx
from numerix_torch.backend import TorchBackend, check_target

U32 = np.iinfo(np.uint32).max
U64 = np.iinfo(np.uint64).max


def tt(a, dtype=None):
    return nx.tensor(a, dtype=dtype, backend="torch", device="cpu")


# ---------------------------------------------------------------- devices and options


def test_cpu_device_and_repr():
    b = nx.get_backend("torch", device="cpu")
    assert type(b) is TorchBackend
    assert repr(b) == "torch(cpu)" and b.device == "cpu"
    assert nx.tensor([1], backend="torch:cpu").backend is b
    x = tt([1.0, 2.0])
    assert x.backend is b and x.data.device == torch.device("cpu")
    assert x.describe() == "f32[2] torch(cpu)"


def test_devices_lists_what_torch_sees():
    devs = TorchBackend.devices()
    assert devs[0] == "cpu"
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    assert [d for d in devs if d.startswith("cuda")] == [f"cuda:{i}" for i in range(n)]


def test_unknown_device_is_refused():
    with pytest.raises(nx.BackendOptionError, match="unknown device 'tpu'; devices are cpu, cuda"):
        nx.get_backend("torch", device="tpu")


def test_cpu_has_no_device_id():
    with pytest.raises(nx.BackendOptionError, match="the cpu device has no device_id"):
        nx.get_backend("torch", device="cpu", device_id=1)


def test_bad_device_id_is_refused():
    with pytest.raises(nx.BackendOptionError, match="device_id must be a non-negative int"):
        nx.get_backend("torch", device="cpu", device_id=-1)


def test_unknown_option_is_refused():
    with pytest.raises(nx.BackendOptionError, match="does not take option"):
        nx.get_backend("torch", client="cpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks a machine without CUDA")
def test_missing_cuda_names_the_devices():
    with pytest.raises(nx.BackendOptionError, match=r"device cuda:0 is not available .*cpu"):
        nx.get_backend("torch", device="cuda")


def test_every_dtype_is_held_exactly():
    for d in nx.dtypes.ALL_DTYPES:
        a = np.arange(6).reshape(2, 3).astype(d.numpy_dtype)
        x = tt(a)
        assert x.dtype is d
        got = x.to_numpy()
        assert got.dtype == d.numpy_dtype
        np.testing.assert_array_equal(got, a)


# ---------------------------------------------------------------- uint32 / uint64 exactness


def test_uint32_arithmetic_wraps_as_numpy():
    a = np.array([0, 1, U32, U32 - 5, 2**31, 123456789], np.uint32)
    b = np.array([1, U32, U32, 7, 2**31 + 3, 987654321], np.uint32)
    s = np.array([1, 31, 4, 0, 1, 3], np.uint32)
    x, y = tt(a), tt(b)
    with np.errstate(all="ignore"):
        for got, want in (
            (x + y, a + b),
            (x - y, a - b),
            (x * y, a * b),
            (-x, -a),
            (x // y, a // b),
            (x % y, a % b),
            (x ^ y, a ^ b),
            (x & y, a & b),
            (x | y, a | b),
            (~x, ~a),
            (nx.maximum(x, y), np.maximum(a, b)),
            (nx.minimum(x, y), np.minimum(a, b)),
            (x << tt(s), a << s),
            (x >> tt(s), a >> s),
            (x**3, a**3),
        ):
            assert got.dtype is nx.uint32 and got.data.dtype == torch.uint32
            np.testing.assert_array_equal(got.to_numpy(), want, strict=True)
    assert (x < y).tolist() == (a < b).tolist()
    assert nx.max(x).tolist() == int(a.max()) and nx.argmax(x).tolist() == int(a.argmax())
    assert nx.sum(x).tolist() == int(a.sum(dtype=np.uint64))


def test_uint64_arithmetic_is_exact_above_2_63():
    a = np.array([U64, 2**63, 2**63 + 12345, 5, U64 - 1], np.uint64)
    b = np.array([3, 2**63 + 1, 7, U64, 2**40 + 3], np.uint64)
    s = np.array([1, 63, 0, 2, 40], np.uint64)
    x, y = tt(a), tt(b)
    with np.errstate(all="ignore"):
        for got, want in (
            (x + y, a + b),
            (x * y, a * b),
            (x // y, a // b),
            (x % y, a % b),
            (nx.maximum(x, y), np.maximum(a, b)),
            (x >> tt(s), a >> s),
            (x << tt(s), a << s),
        ):
            assert got.dtype is nx.uint64
            np.testing.assert_array_equal(got.to_numpy(), want, strict=True)
    assert (x > y).tolist() == (a > b).tolist()


def test_unsigned_division_by_zero_gives_zero():
    for d in (nx.uint8, nx.uint16, nx.uint32, nx.uint64, nx.int32):
        x, z = tt([7, 0, 3], d), tt([0, 0, 0], d)
        assert (x // z).tolist() == [0, 0, 0] and (x % z).tolist() == [0, 0, 0]


def test_int_min_floor_divided_by_minus_one_wraps():
    x = tt([np.iinfo(np.int32).min, 7], nx.int32)
    assert (x // tt([-1, -1], nx.int32)).tolist() == [np.iinfo(np.int32).min, -7]


def test_float_to_int_cast_saturates_and_zeroes_nan():
    t = tt([np.nan, np.inf, -np.inf, 300.7, -300.7, 2.9, -2.9], nx.float32)
    assert t.astype(nx.int8).tolist() == [0, 127, -128, 127, -128, 2, -2]
    assert t.astype(nx.uint32).tolist() == [0, U32, 0, 300, 0, 2, 0]
    assert t.astype(nx.uint64).tolist() == [0, U64, 0, 300, 0, 2, 0]


def test_bool_stays_bool():
    x = tt([True, False, True])
    for r in (x & x, x | x, ~x, x == x, nx.all(x), nx.any(x)):
        assert r.dtype is nx.bool_ and r.data.dtype == torch.bool


# ---------------------------------------------------------------- transfers


def test_from_binary_shares_memory():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    src = nx.tensor(a, backend="binary")
    dst = nx.backend_transfer(src, "torch", device="cpu")
    assert dst.backend is nx.get_backend("torch", device="cpu")
    assert np.shares_memory(dst.data.numpy(), a)


def test_to_binary_shares_memory():
    x = tt(np.arange(6, dtype=np.int64))
    back = nx.backend_transfer(x, "binary")
    assert back.backend is nx.get_backend("binary")
    assert np.shares_memory(back.data, x.data.numpy())
    np.testing.assert_array_equal(back.data, np.arange(6))


def test_bfloat16_round_trips_through_binary():
    x = tt([1.5, -2.25, 3.0], nx.bfloat16)
    assert x.data.dtype == torch.bfloat16
    back = nx.backend_transfer(x, "binary")
    assert back.dtype is nx.bfloat16 and back.tolist() == [1.5, -2.25, 3.0]


def test_binary_operand_moves_to_torch():
    r = tt([1, 2]) + nx.tensor([10, 20], backend="binary")
    assert r.backend.name == "torch" and r.tolist() == [11, 22]


# ---------------------------------------------------------------- config and doctor


def test_check_target_matches_the_installed_build():
    built = "cpu" if not torch.version.cuda else "cu" + "".join(torch.version.cuda.split(".")[:2])
    assert check_target(built) is None
    other = "cu128" if built != "cu128" else "cpu"
    problem, fix = check_target(other)
    assert f"LIBTORCH_TARGET={other}" in problem and f"the {built} build" in problem
    assert fix.startswith("pip install --force-reinstall torch==")
    assert fix.endswith(f"/whl/{other}")


def _run(script: str, **env: str) -> subprocess.CompletedProcess[str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("NUMERIX_")}
    e.update(env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], env=e, capture_output=True, text=True
    )


SCRIPT = """
import numerix as nx
x = nx.arange(6, dtype=nx.uint32).reshape((2, 3))
y = (x * 4000000000 + 7) // 3
print(x.backend.name, y.tolist(), nx.sum(nx.sin(x.astype(nx.float32))).tolist() > 0)
"""


def test_default_backend_from_the_environment_runs_a_binary_script_unchanged():
    binary = _run(SCRIPT)
    on_torch = _run(SCRIPT, NUMERIX_DEFAULT_BACKEND="torch")
    assert binary.returncode == 0, binary.stderr
    assert on_torch.returncode == 0, on_torch.stderr
    assert binary.stdout.startswith("binary ") and on_torch.stdout.startswith("torch ")
    assert binary.stdout.split(" ", 1)[1] == on_torch.stdout.split(" ", 1)[1]


def test_num_threads_setting_is_applied_when_the_backend_is_created():
    # applied once, at the first torch backend: a later backend does not undo the
    # program's own change since
    r = _run(
        "import numerix as nx, torch; from numerix_torch.backend import TorchBackend; "
        "nx.tensor([1], backend='torch'); a = torch.get_num_threads(); torch.set_num_threads(2); "
        "TorchBackend(device='cpu'); print(a, torch.get_num_threads())",
        NUMERIX_BACKENDS__TORCH__NUM_THREADS="3",
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["3", "2"]


def test_num_threads_unset_leaves_torch_threads_alone():
    r = _run(
        "import numerix as nx, torch; torch.set_num_threads(2); nx.tensor([1], backend='torch'); "
        "print(torch.get_num_threads())"
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "2"


def test_num_threads_bad_value_is_a_config_error_naming_the_setting():
    # raised at the first torch tensor, or by reload_config; once fixed, the value applies
    r = _run(
        """
        import os, numerix as nx, torch
        try:
            nx.tensor([1], backend="torch")
        except nx.ConfigError as e:
            print(e)
        os.environ["NUMERIX_BACKENDS__TORCH__NUM_THREADS"] = "two"
        try:
            nx.reload_config()
        except nx.ConfigError as e:
            print(e)
        os.environ["NUMERIX_BACKENDS__TORCH__NUM_THREADS"] = "3"
        nx.reload_config()
        nx.tensor([1], backend="torch")
        print(torch.get_num_threads())
        """,
        NUMERIX_BACKENDS__TORCH__NUM_THREADS="0",
    )
    assert r.returncode == 0, r.stderr
    zero, two, applied = r.stdout.splitlines()
    head = "environment variable NUMERIX_BACKENDS__TORCH__NUM_THREADS: backends.torch.num_threads: "
    assert zero == head + "Input should be greater than or equal to 1 (got '0')"
    assert two.startswith(head + "Input should be a valid integer") and "(got 'two')" in two
    assert applied == "3"


# ---------------------------------------------------------------- x[idx]: one-axis gather

INDEX_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@pytest.mark.parametrize("dtype", nx.dtypes.ALL_DTYPES, ids=str)
def test_take_along_the_first_axis_every_dtype(dtype):
    # x[idx] and take(axis=0) gather with index_select (the signed bits of uint16/32/64,
    # which torch selects in 1-d only so): every value dtype, index shapes 1-d, 0-d,
    # 2-d and empty, negative and repeated entries, against numpy
    rng = np.random.default_rng(3)
    for shape in [(5,), (5, 3), (5, 2, 2)]:
        a = rng.integers(0, 100, shape).astype(dtype.numpy_dtype)
        x = tt(a)
        for i in ([4, 0, 2, 2, -1], 3, -5, [[1, -2], [0, 4]], np.zeros(0, np.int64)):
            i = np.asarray(i, np.int64)
            for got in (x[tt(i)], nx.take(x, tt(i), axis=0)):
                assert got.dtype is dtype and got.shape == a[i].shape
                np.testing.assert_array_equal(got.to_numpy(), a[i])


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES, ids=lambda d: np.dtype(d).name)
def test_take_along_the_first_axis_every_index_dtype(index_dtype):
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    i = np.array([3, 0, 2, 2], index_dtype)
    got = tt(a)[tt(i)]
    assert got.dtype is nx.float32 and got.shape == (4, 3)
    np.testing.assert_array_equal(got.to_numpy(), a[i])
    big = np.array([0, 4], index_dtype)
    with pytest.raises(
        nx.IndexingError,
        match=r"^take: index 4 is out of bounds for axis 0 with size 4 \(f32\[4\]\[3\] torch\(cpu\)",
    ):
        nx.take(tt(a), tt(big), axis=0)


def test_take_along_the_first_axis_out_of_bounds_names_op_index_and_tensor():
    x = tt(np.zeros((4, 3), np.float32))
    for i, bad in (([0, 4], 4), ([-5, 1], -5), (np.arange(-4, 70), 69)):
        with pytest.raises(
            nx.IndexingError,
            match=rf"^getitem: index {bad} is out of bounds for axis 0 with size 4 "
            r"\(f32\[4\]\[3\] torch\(cpu\)",
        ):
            x[tt(np.asarray(i, np.int64))]
    with pytest.raises(nx.IndexingError, match=r"^getitem: index 0 is out of bounds .* size 0"):
        tt(np.zeros((0, 3), np.float32))[tt(np.array([0]))]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_a_zero_remainder_takes_the_divisors_sign_as_numpys(dtype: str) -> None:
    a = np.array([-0.0, 0.0, 4.0, -4.0, 3.5, -3.0, np.inf, np.nan], np.float32)
    b = np.array([2.0, -2.0, 2.0, 2.0, -2.0, -3.0, 2.0, 1.0], np.float32)
    x, y = nx.tensor(a, backend="torch").astype(dtype), nx.tensor(b, backend="torch").astype(dtype)
    got = nx.remainder(x, y).astype("float32").to_numpy()
    with np.errstate(all="ignore"):
        want = np.remainder(a, b)
    np.testing.assert_array_equal(got, want)
    zeros = want == 0  # the sign of a zero (a NaN's sign bit means nothing)
    assert np.array_equal(np.signbit(got[zeros]), np.signbit(want[zeros])), (got, want)


def test_a_torch_tensor_that_requires_grad_is_refused_with_the_fix():
    # torch refuses numpy() on it; numerix names the tensor and .detach()
    p = torch.ones(3, requires_grad=True)
    for backend in ("torch", "binary"):
        with pytest.raises(
            nx.DTypeError,
            match=r"tensor: cannot read a torch\.Tensor \(shape \(3,\)\): .*requires grad.*"
            r"pass x\.detach\(\)",
        ):
            nx.tensor(p, backend=backend)
    t = nx.tensor(p.detach() * 2, backend="torch")
    assert t.describe() == "f32[3] torch(cpu)" and t.tolist() == [2.0, 2.0, 2.0]
