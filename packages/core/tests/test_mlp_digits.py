"""examples/mlp_digits.py: the seeds' MLP learns scikit-learn's digits with plain SGD
through numerix.jit(numerix.value_and_grad(...))."""

from __future__ import annotations

import importlib.util
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "mlp_digits.py"


def load_example():
    spec = importlib.util.spec_from_file_location("mlp_digits", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mlp_digits_reaches_95_percent(capsys):
    example = load_example()
    # 8 of the example's 30 epochs: enough for 95 % on the held-out fifth
    accuracy = example.train(epochs=8)
    assert accuracy >= 0.95
    out = capsys.readouterr().out
    assert "test accuracy" in out and "after 8 epochs" in out
    # the compiled step was traced once: every batch has one shape
    assert example.sgd_step.trace_count == 1
