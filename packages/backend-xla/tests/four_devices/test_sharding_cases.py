"""Run by test_sharding.py in a process with four simulated host devices: a tensor split
over them, or replicated, computes what one device computes (bit for bit element-wise,
within 1e-6 for reductions), eagerly, under jit with the xla compiler and the
evaluator, and through value_and_grad (the seeds' MLP, a data-parallel step)."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import numerix as nx

ONE = "xla"


def test_four_devices_are_there() -> None:
    assert len(jax.devices()) == 4
    mesh = nx.get_backend("xla", devices=4)
    assert mesh is nx.get_backend("xla", devices="all")
    assert mesh is nx.get_backend("xla", devices=(3, 2, 1, 0))
    assert mesh.device_count == 4 and repr(mesh) == "xla(host:0..3)"
    assert repr(nx.get_backend("xla", devices=(1, 3))) == "xla(host:1,3)"
    # one device is that device's backend
    assert nx.get_backend("xla", devices=(2,)) is nx.get_backend("xla", device_id=2)


def _data(shape: tuple[int, ...], dtype: Any = np.float32, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("axis", [0, 1, None])
def test_element_wise_is_bit_for_bit(axis: int | None) -> None:
    a, b = _data((8, 4)), _data((8, 4), seed=1)
    s = nx.sharding(4, axis=axis)
    x, y = nx.device_put((nx.tensor(a), nx.tensor(b)), s)
    assert x.backend is s.backend and "xla(host:0..3)" in repr(x)
    spec = x.data.sharding.spec
    assert tuple(spec) == (() if axis is None else (None,) * axis + ("devices",))

    def f(x: Any, y: Any) -> Any:
        return nx.tanh(x * y + 1.0) - nx.exp(-nx.abs(x))

    x1, y1 = nx.tensor(a, backend=ONE), nx.tensor(b, backend=ONE)
    # each way of running on four devices against the same way on one (a fused program
    # may round differently from eager kernels, on one device as on four)
    for run in (f, nx.jit(f, compiler="xla"), nx.jit(f, compiler="evaluator")):
        got, want = run(x, y), run(x1, y1)
        assert got.backend is s.backend and got.dtype is nx.float32 and got.shape == (8, 4)
        np.testing.assert_array_equal(got.to_numpy(), want.to_numpy())


def test_reductions_and_products_within_1e6() -> None:
    a, w = _data((16, 8)), _data((8, 3), seed=2)
    x = nx.device_put(nx.tensor(a), nx.sharding(4, axis=0))
    wr = nx.device_put(nx.tensor(w), nx.sharding(4))

    def f(x: Any, w: Any) -> Any:
        h = nx.dot(x, w)
        return nx.sum(h), nx.mean(h, axis=0), nx.max(x, axis=1), nx.log_softmax(h, axis=-1)

    want = f(nx.tensor(a, backend=ONE), nx.tensor(w, backend=ONE))
    for got in (f(x, wr), nx.jit(f, compiler="xla")(x, wr)):
        for g, e in zip(got, want):
            assert g.shape == e.shape and g.dtype is e.dtype and g.backend is x.backend
            np.testing.assert_allclose(g.to_numpy(), e.to_numpy(), rtol=1e-6, atol=1e-6)


def _init(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "w1": (rng.standard_normal((784, 128)) * 0.05).astype(np.float32),
        "b1": np.zeros(128, np.float32),
        "w2": (rng.standard_normal((128, 10)) * 0.05).astype(np.float32),
        "b2": np.zeros(10, np.float32),
    }


def _loss(params: Any, x: Any, y: Any) -> Any:
    h = nx.tanh(nx.dot(x, params["w1"]) + params["b1"])
    logp = nx.log_softmax(nx.dot(h, params["w2"]) + params["b2"], axis=-1)
    return -nx.mean(nx.sum(logp * y, axis=-1))


def _step(params: Any, x: Any, y: Any) -> Any:
    loss, grads = nx.value_and_grad(_loss)(params, x, y)
    return loss, {k: params[k] - 0.1 * grads[k] for k in params}


@pytest.mark.parametrize("compiler", ["xla", "evaluator"])
def test_a_data_parallel_training_step_equals_one_device(compiler: str) -> None:
    p0 = _init()
    rng = np.random.default_rng(5)
    xs = rng.random((64, 784), dtype=np.float32)
    ys = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)]
    step = nx.jit(_step, compiler=compiler)

    one = {k: nx.tensor(v, backend=ONE) for k, v in p0.items()}
    x1, y1 = nx.tensor(xs, backend=ONE), nx.tensor(ys, backend=ONE)
    # the batch split over the devices, the parameters replicated on each
    batch, rep = nx.sharding(4, axis=0), nx.sharding(4)
    four = nx.device_put({k: nx.tensor(v) for k, v in p0.items()}, rep)
    x4, y4 = nx.device_put((nx.tensor(xs), nx.tensor(ys)), batch)
    for _ in range(3):
        loss1, one = step(one, x1, y1)
        loss4, four = step(four, x4, y4)
        assert loss4.backend is batch.backend
        np.testing.assert_allclose(loss4.item(), loss1.item(), rtol=1e-6)
        for k in p0:
            assert four[k].backend is batch.backend and four[k].shape == one[k].shape
            np.testing.assert_allclose(four[k].to_numpy(), one[k].to_numpy(), rtol=1e-5, atol=1e-6)
    assert step.jitted.trace_count == 2  # one per backend, not per step


def test_moving_back_and_mixing_devices() -> None:
    a = _data((8, 2))
    x = nx.device_put(nx.tensor(a), nx.sharding(4, axis=0))
    # to one device, to the host: the whole tensor, gathered
    one = nx.device_put(x, "xla")
    assert one.backend is nx.get_backend("xla") and one.data.sharding.is_fully_replicated
    np.testing.assert_array_equal(one.to_numpy(), a)
    np.testing.assert_array_equal(nx.backend_transfer(x, "binary").to_numpy(), a)
    # re-split along the other axis, or over two of the devices
    y = nx.device_put(x, nx.sharding(2, axis=1))
    assert repr(y.backend) == "xla(host:0..1)" and tuple(y.data.sharding.spec) == (None, "devices")
    np.testing.assert_array_equal(y.to_numpy(), a)
    # tensors of one device and of several meet nowhere: refused, naming both
    with pytest.raises(nx.BackendMismatchError, match=r"xla\(host:0\.\.3\).*xla\(host:0\)"):
        x + one
    # host tensors and numbers join the devices (replicated)
    host = nx.tensor(np.ones(2, np.float32), backend="binary")
    np.testing.assert_array_equal((x + host).to_numpy(), a + 1)
    np.testing.assert_array_equal((x * 2).to_numpy(), a * 2)


def test_what_cannot_be_split_is_refused() -> None:
    s = nx.sharding(4, axis=0)
    with pytest.raises(nx.ShapeError, match=r"f32\[6\].*not a multiple of 4"):
        nx.device_put(nx.zeros((6,)), s)
    with pytest.raises(nx.AxisError, match="device_put"):
        nx.device_put(nx.zeros((4,)), nx.sharding(4, axis=1))
    with pytest.raises(nx.BackendOptionError, match=r"has 4 device.*xla_force_host_platform"):
        nx.sharding(8)
    with pytest.raises(nx.ArgumentError, match="'binary' does not spread tensors"):
        nx.sharding(2, backend="binary")
    with pytest.raises(nx.ArgumentError, match="expected tensors"):
        nx.device_put([nx.zeros((4,)), "text"], s)
    x = nx.device_put(nx.zeros((4,)), s)
    with pytest.raises(nx.ArgumentError, match="exports programs of one device"):
        nx.export(lambda t: t + 1, x, compiler="xla")


def test_jit_places_its_arguments_and_result() -> None:
    p0 = _init(1)
    rng = np.random.default_rng(7)
    xs = rng.random((32, 784), dtype=np.float32)
    ys = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 32)]
    batch, rep = nx.sharding(4, axis=0), nx.sharding(4)
    # host tensors in; the parameters replicated, the batch split; the loss back on one device
    step = nx.jit(_step, compiler="xla", in_shardings=(rep, batch, batch),
                  out_shardings=(nx.sharding(1), None))  # fmt: skip
    host = {k: nx.tensor(v, backend="binary") for k, v in p0.items()}
    loss, params = step(host, nx.tensor(xs, backend="binary"), nx.tensor(ys, backend="binary"))
    assert repr(loss.backend) == "xla(host:0)" and params["w1"].backend is rep.backend
    one = {k: nx.tensor(v, backend=ONE) for k, v in p0.items()}
    loss1, params1 = nx.jit(_step, compiler="xla")(one, nx.tensor(xs, backend=ONE),
                                                   nx.tensor(ys, backend=ONE))  # fmt: skip
    np.testing.assert_allclose(loss.item(), loss1.item(), rtol=1e-6)
    np.testing.assert_allclose(params["w1"].to_numpy(), params1["w1"].to_numpy(), rtol=1e-5,
                               atol=1e-6)  # fmt: skip
    # one spec for every argument, a dict prefix, and a spec that does not fit
    f = nx.jit(lambda a, b: a * b, compiler="xla", in_shardings=batch)
    assert f(nx.ones((4, 2)), nx.ones((4, 2))).backend is batch.backend
    g = nx.jit(lambda d: d["a"] + d["b"], compiler="xla", in_shardings=({"a": batch},))
    out = g({"a": nx.ones((4,), backend=ONE) * 0 + nx.ones((4,), backend=ONE),
             "b": nx.ones((4,), backend="binary")})  # fmt: skip
    assert out.backend is batch.backend
    with pytest.raises(nx.ArgumentError, match=r"one entry per positional argument \(2 here\)"):
        nx.jit(lambda a, b: a, in_shardings=(batch,))(nx.ones((4,)), nx.ones((4,)))
    with pytest.raises(nx.ArgumentError, match="does not match its value"):
        nx.jit(lambda a: a, in_shardings=([batch, batch],))(nx.ones((4,)))
