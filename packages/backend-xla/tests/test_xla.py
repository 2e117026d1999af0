"""numerix-xla beyond the kit: clients and devices, transfers, settings, doctor, caching."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import jax
import numpy as np
import pytest

import numerix as nx
import numerix_xla
from numerix.cli import collect_info
from numerix.dtypes import as_dtype
from numerix.errors import BackendNotFoundError, BackendOptionError, ConfigError
from numerix_xla import _kernels as xk
from numerix_xla import backend as xb
from numerix_xla import clients


@pytest.fixture
def no_global_default():
    yield
    nx.set_global_default_backend(None)


def _aligned(n: int, dtype: str = "float32") -> np.ndarray:
    # XLA's CPU client adopts host buffers aligned to 64 bytes; numpy aligns to 16
    item = np.dtype(dtype).itemsize
    buf = np.empty(n * item + 64, np.uint8)
    off = (-buf.ctypes.data) % 64
    a = buf[off : off + n * item].view(dtype)
    a[:] = np.arange(n)
    return a


# ---------------------------------------------------------------- clients and devices
def test_set_as_default_picks_the_first_available_client(no_global_default):
    b = numerix_xla.set_as_default(["tpu", "cuda", "rocm", "host"])
    assert repr(b) == "xla(host:0)"
    assert nx.tensor([1.0]).backend is b


def test_set_as_default_with_nothing_available_names_each_client(no_global_default):
    with pytest.raises(BackendNotFoundError, match=r"'cuda'.*not available.*'rocm'"):
        numerix_xla.set_as_default(["cuda", "rocm"])


def test_tensors_print_client_and_device():
    t = nx.tensor([1, 2], backend="xla")
    assert t.describe() == "s64[2] xla(host:0)"
    assert repr(t).startswith("Tensor<s64[2] xla(host:0)>")
    assert nx.tensor([1], backend=("xla", {"client": "host", "device_id": 0})).backend is t.backend


def test_clients_are_singletons():
    assert clients.get_client("host") is clients.get_client("host")
    assert nx.get_backend("xla").client is nx.get_backend("xla", client="host").client


def test_unknown_client_and_missing_device_are_refused():
    with pytest.raises(BackendOptionError, match=r"unknown client 'gpu'; clients are host"):
        nx.tensor([1], backend="xla:gpu")
    with pytest.raises(
        BackendOptionError, match=r"client 'host' has 1 device\(s\).*no device_id 7"
    ):
        nx.tensor([1], backend="xla:host:7")
    with pytest.raises(BackendOptionError, match=r"device_id must be a non-negative int"):
        nx.get_backend("xla", device_id=-1)


def test_devices_lists_what_jax_sees_for_numerix_info():
    assert xb.XlaBackend.devices() == ["host:0"]
    from numerix.cli import collect_info

    info = collect_info()
    row = next(b for b in info["backends"] if b["name"] == "xla")
    assert row["devices"] == ["host:0"] and row["available"] is True


_TWO_DEVICES = textwrap.dedent(
    """
    import json, numerix as nx
    from numerix.errors import BackendMismatchError
    from numerix_xla.backend import XlaBackend
    r = {"devices": XlaBackend.devices()}
    a = nx.tensor([1.0, 2.0], backend="xla:host:1")
    b = nx.tensor([10.0, 20.0], backend="xla:host:0")
    r["a_device"] = next(iter(a.data.devices())).id
    r["a_repr"] = a.describe()
    s = nx.add(a, a)
    r["sum_device"] = next(iter(s.data.devices())).id
    r["created_on_1"] = [next(iter(f(backend="xla:host:1").data.devices())).id for f in (
        lambda backend: nx.zeros((3,), backend=backend),
        lambda backend: nx.eye(2, backend=backend),
        lambda backend: nx.iota((2, 2), backend=backend),
        lambda backend: nx.arange(3, backend=backend),
    )]
    c = nx.backend_transfer(a, "xla", device_id=0)
    r["moved_device"] = next(iter(c.data.devices())).id
    r["moved_values"] = (c + b).tolist()
    try:
        a + b
    except BackendMismatchError as e:
        r["error"] = str(e)
    print(json.dumps(r))
    """
)


def test_two_host_devices_place_transfer_and_refuse_mixing():
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=2"}
    out = subprocess.run(
        [sys.executable, "-c", _TWO_DEVICES], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["devices"] == ["host:0", "host:1"]
    assert r["a_device"] == 1 and r["a_repr"] == "f32[2] xla(host:1)"
    assert r["sum_device"] == 1
    assert r["created_on_1"] == [1] * 4
    assert r["moved_device"] == 0 and r["moved_values"] == [11.0, 22.0]
    assert "xla(host:1)" in r["error"] and "xla(host:0)" in r["error"]
    assert "backend_transfer" in r["error"]


# ---------------------------------------------------------------- transfers
def test_binary_to_xla_adopts_an_aligned_buffer_without_a_copy():
    host = _aligned(1024)
    t = nx.backend_transfer(nx.from_numpy(host, backend="binary"), "xla")
    assert t.backend.name == "xla"
    assert np.shares_memory(host, np.asarray(t.data))
    assert t.tolist() == host.tolist()


def test_xla_to_binary_and_numpy_share_memory():
    t = nx.iota((256,), dtype="float32", backend="xla")
    b = nx.backend_transfer(t, "binary")
    assert np.shares_memory(b.to_numpy(), np.asarray(t.data))
    assert np.shares_memory(np.from_dlpack(t), np.asarray(t.data))
    np.testing.assert_array_equal(b.to_numpy(), np.arange(256, dtype=np.float32))


def test_unaligned_host_buffers_are_copied_once():
    host = _aligned(1025)[1:]  # 4 bytes past a 64-byte boundary
    t = nx.from_numpy(host, backend="xla")
    assert not np.shares_memory(host, np.asarray(t.data))
    np.testing.assert_array_equal(t.to_numpy(), host)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "int8", "uint64", "bool", "complex128"])
def test_round_trip_keeps_dtype_and_values(dtype):
    d = as_dtype(dtype, "test")
    host = (np.arange(12) % 3).astype(d.numpy_dtype).reshape(3, 4)
    t = nx.backend_transfer(nx.from_numpy(host, backend="binary"), "xla")
    assert t.dtype is d and t.data.dtype == host.dtype
    back = nx.backend_transfer(t, "binary").to_numpy()
    assert back.dtype == host.dtype
    np.testing.assert_array_equal(back, host)


def test_deallocate_frees_and_later_use_raises():
    t = nx.ones((4,), backend="xla")
    data = t.data
    nx.backend_deallocate(t)
    assert data.is_deleted()
    with pytest.raises(nx.NumerixError, match="deallocated"):
        t.tolist()


def test_synchronize_waits_for_the_value():
    t = nx.ones((8,), backend="xla") * 2
    t.backend.synchronize(t)
    assert t.tolist() == [2.0] * 8


# ---------------------------------------------------------------- kernels
def test_kernels_are_built_once_per_static_parameters_and_operand_types():
    x = nx.ones((2, 3), backend="xla")
    y = nx.ones((5, 3), backend="xla")
    nx.sum(x, axis=1)
    n = xk.cache_info().misses
    nx.sum(y, axis=1)  # another shape: a kernel of its own, holding its one executable
    assert xk.cache_info().misses == n + 1
    for _ in range(3):
        nx.sum(x, axis=1)
        nx.sum(y, axis=1)
    assert xk.cache_info().misses == n + 1
    nx.sum(x, axis=0)
    assert xk.cache_info().misses == n + 2


def test_clear_caches_drops_kernels_and_executables():
    x = nx.tensor(np.arange(6.0).reshape(2, 3), backend="xla")
    nx.sum(x, axis=1)
    assert xk.cache_info().currsize > 0
    before = jax.jit(lambda a: a + 1)
    before(np.ones(2))
    nx.clear_caches()
    assert xk.cache_info().currsize == 0
    # jax's own executables went too: a jitted function seen before compiles again
    assert before._cache_size() == 0
    np.testing.assert_array_equal(nx.sum(x, axis=1).to_numpy(), [3.0, 12.0])
    np.testing.assert_allclose(
        nx.exp(x).to_numpy(), np.exp(np.arange(6.0).reshape(2, 3)), rtol=1e-14
    )


def test_float32_matmul_matches_numpy_at_full_precision():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 512)).astype(np.float32)
    b = rng.standard_normal((512, 32)).astype(np.float32)
    r = nx.dot(nx.tensor(a, backend="xla"), nx.tensor(b, backend="xla")).to_numpy()
    np.testing.assert_allclose(r, a.astype(np.float64) @ b.astype(np.float64), rtol=2e-5, atol=2e-4)


def test_integer_division_by_zero_is_zero_as_numpy():
    a = nx.tensor([7, -7, 0], dtype="int32", backend="xla")
    z = nx.zeros((3,), dtype="int32", backend="xla")
    assert nx.floor_divide(a, z).tolist() == [0, 0, 0]
    assert nx.remainder(a, z).tolist() == [0, 0, 0]
    assert nx.floor_divide(a, nx.tensor(-2, dtype="int32", backend="xla")).tolist() == [-4, 3, 0]


def test_float_to_int_saturates_and_maps_nan_to_zero():
    x = nx.tensor([np.nan, np.inf, -np.inf, 1e20, -3.7, 3.7], dtype="float32", backend="xla")
    assert nx.astype(x, "int8").tolist() == [0, 127, -128, 127, -3, 3]
    assert nx.astype(x, "uint8").tolist() == [0, 255, 0, 255, 0, 3]


# ---------------------------------------------------------------- settings
def test_settings_model_is_typed_and_refuses_bad_values():
    with pytest.raises(ConfigError, match="memory_fraction"):
        with nx.config(backends={"xla": {"clients": {"cuda": {"memory_fraction": 1.5}}}}):
            pass
    with pytest.raises(ConfigError, match="clients"):
        with nx.config(backends={"xla": {"clients": {"gpu": {}}}}):
            pass
    with nx.config(backends={"xla": {"clients": {"host": {"default_device_id": 0}}}}) as s:
        assert s.backends.xla.clients["host"].default_device_id == 0
        assert clients.client_options("host")["memory_fraction"] == 0.9


def test_environment_sets_the_client_of_the_default_backend(monkeypatch):
    monkeypatch.setenv("NUMERIX_DEFAULT_BACKEND", "xla")
    monkeypatch.setenv("NUMERIX_BACKENDS__XLA__CLIENT", "host")
    nx.reload_config()
    try:
        assert repr(nx.tensor([1.0]).backend) == "xla(host:0)"
    finally:
        monkeypatch.delenv("NUMERIX_DEFAULT_BACKEND")
        monkeypatch.delenv("NUMERIX_BACKENDS__XLA__CLIENT")
        nx.reload_config()


@pytest.fixture
def fresh_cuda_client(monkeypatch):
    """A cuda client not started yet, with the memory variables restored afterwards."""
    monkeypatch.delitem(clients._clients, "cuda", raising=False)
    for var in clients._ENV.values():
        monkeypatch.delenv(var, raising=False)
    yield
    clients._clients.pop("cuda", None)


def test_memory_options_are_applied_before_the_platform_starts(monkeypatch, fresh_cuda_client):
    monkeypatch.setattr(clients, "_started", lambda platform: False)
    with nx.config(backends={"xla": {"clients": {"cuda": {"memory_fraction": 0.5}}}}):
        c = clients.get_client("cuda")
    assert c.memory_fraction == 0.5
    assert os.environ["XLA_PYTHON_CLIENT_MEM_FRACTION"] == "0.5"
    assert os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] == "true"


def test_defaults_never_override_an_exported_variable(monkeypatch, fresh_cuda_client):
    monkeypatch.setattr(clients, "_started", lambda platform: False)
    monkeypatch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    clients.get_client("cuda")
    assert os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"


def test_memory_options_after_the_platform_started_raise(monkeypatch, fresh_cuda_client):
    monkeypatch.setattr(clients, "_started", lambda platform: True)
    with nx.config(backends={"xla": {"clients": {"cuda": {"preallocate": False}}}}):
        with pytest.raises(
            BackendOptionError,
            match=r"client 'cuda' asks for preallocate=False, but JAX already started the cuda "
            r"platform with preallocate=True \(XLA_PYTHON_CLIENT_PREALLOCATE\)",
        ):
            clients.get_client("cuda")
    clients.get_client("cuda")  # nothing asked explicitly: JAX's values stand


def test_changing_memory_options_of_a_started_client_raises(monkeypatch, fresh_cuda_client):
    monkeypatch.setattr(clients, "_started", lambda platform: False)
    clients.get_client("cuda")
    with nx.config(backends={"xla": {"clients": {"cuda": {"memory_fraction": 0.3}}}}):
        with pytest.raises(BackendOptionError, match=r"memory_fraction=0.3.*memory_fraction=0.9"):
            clients.get_client("cuda")


# ---------------------------------------------------------------- doctor
def test_check_target_names_the_extra_to_install(monkeypatch):
    monkeypatch.setattr(clients, "_installed", lambda patterns: [])
    assert xb.XlaBackend.check_target("cpu") is None
    problem, fix = xb.XlaBackend.check_target("cuda12")
    assert "no JAX plugin for cuda" in problem and "jax-cuda12-plugin" in problem
    assert fix == 'pip install "numerix-xla[cuda12]"'
    assert xb.XlaBackend.check_target("cuda")[1] == 'pip install "numerix-xla[cuda12]"'
    assert xb.XlaBackend.check_target("tpu")[1] == 'pip install "numerix-xla[tpu]"'


def test_check_target_with_a_plugin_but_no_device(monkeypatch):
    monkeypatch.setattr(clients, "_installed", lambda patterns: ["jax-cuda12-plugin 0.10.2"])
    monkeypatch.setitem(clients._clients, "cuda", clients.Client("cuda", "cuda", 0, True, 0.9))
    problem, fix = xb.XlaBackend.check_target("cuda12")
    assert "finds no cuda device" in problem
    assert fix.startswith('pip install --force-reinstall "numerix-xla[cuda12]"')


def test_doctor_reports_a_missing_cuda_plugin(monkeypatch):
    from numerix.cli import collect_doctor

    monkeypatch.setattr(clients, "_installed", lambda patterns: [])
    monkeypatch.setenv("XLA_TARGET", "cuda12")
    nx.reload_config()
    try:
        res = collect_doctor()
    finally:
        monkeypatch.delenv("XLA_TARGET")
        nx.reload_config()
    fixes = [p["fix"] for p in res["problems"]]
    # in the form numerix was installed in ('pip install "numerix-xla[cuda12]"' from an index)
    from numerix.plugins import install_command

    assert install_command("numerix-xla", "cuda12") in fixes


def test_element_wise_ops_with_empty_outputs_compile_nothing(caplog):
    x = nx.tensor(np.zeros((2, 0), np.float32), backend="xla")
    y = nx.tensor(np.zeros((1,), np.float32), backend="xla")
    with jax.log_compiles(True), caplog.at_level("WARNING", logger="jax"):
        results = [nx.exp(x), x + y, x.astype(nx.int32), nx.where(x > 0, x, y), -x]
    compiles = [r for r in caplog.records if "ompil" in r.getMessage()]
    assert compiles == [], [r.getMessage() for r in compiles]
    for r, dtype in zip(results, ["float32", "float32", "int32", "float32", "float32"]):
        assert r.shape == (2, 0) and r.dtype.name == dtype and r.backend is x.backend
        assert r.to_numpy().shape == (2, 0)
    # the control: a shape never seen before compiles, and the log shows it
    with jax.log_compiles(True), caplog.at_level("WARNING", logger="jax"):
        nx.exp(nx.tensor(np.ones((3, 1, 7, 2), np.float32), backend="xla"))
    assert any("ompil" in r.getMessage() for r in caplog.records)


def test_info_lists_the_subnormal_flush() -> None:
    # the documented difference holds (a tiny float reads as zero) and numerix info says so
    tiny = nx.tensor(np.array([5e-324]), backend="xla")
    assert bool((tiny <= 0).to_numpy()[0])
    xla = next(b for b in collect_info()["backends"] if b["name"] == "xla")
    assert any("subnormal floats are flushed to zero" in n for n in xla["numeric_notes"])
