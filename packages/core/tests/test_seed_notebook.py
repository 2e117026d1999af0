"""The seeds' matmul notebook flow, on numerix: bytes -> u8 tensor -> reshape -> /255 ->
split into train and valid -> dot with random weights -> compare with numpy."""

from __future__ import annotations

import numpy as np

import numerix as nx


def test_matmul_notebook_flow():
    rng = np.random.default_rng(0)
    n_images = 600  # the notebook has 60,000; the flow is the same
    raw = rng.integers(0, 256, size=n_images * 28 * 28, dtype=np.uint8).tobytes()

    images = nx.from_binary(raw, nx.uint8)
    assert images.describe() == f"u8[{n_images * 784}] binary(cpu)"
    x = images.reshape((n_images, 28 * 28)) / 255
    assert x.dtype is nx.float32 and x.shape == (n_images, 784)
    x_train, x_valid = x[0:500], x[500:600]
    assert (x_train.shape, x_valid.shape) == ((500, 784), (100, 784))
    assert float(nx.max(x)) <= 1.0 and float(nx.min(x)) >= 0.0

    weights = nx.random.normal(nx.random.key(1), (784, 10))
    assert weights.dtype is nx.float32 and weights.shape == (784, 10)
    w_np = weights.to_numpy()
    assert abs(float(w_np.mean())) < 0.05 and abs(float(w_np.std()) - 1.0) < 0.05
    result = nx.dot(x_valid, weights)

    oracle_x = np.frombuffer(raw, np.uint8).reshape(n_images, 784).astype(np.float32) / np.float32(
        255
    )
    oracle = oracle_x[500:600] @ w_np
    assert result.shape == (100, 10) and result.dtype is nx.float32
    np.testing.assert_allclose(result.to_numpy(), oracle, rtol=1e-5, atol=1e-4)
    # the image survives the round trip: one row back to 28x28 u8
    img = (x_train[0].reshape((28, 28)) * 255).astype(nx.uint8)
    np.testing.assert_array_equal(
        img.to_numpy(), np.rint(oracle_x[0].reshape(28, 28) * 255).astype(np.uint8)
    )
