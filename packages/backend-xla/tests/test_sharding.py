"""Tensors spread over devices (``numerix.device_put`` with a ``numerix.sharding``, a
backend over several devices) on four simulated host devices: the cases of
``four_devices/`` run in a fresh pytest process started with
``XLA_FLAGS=--xla_force_host_platform_device_count=4`` (JAX reads the flag once, at
start), and this test fails with their report when one does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


def test_the_four_device_cases_pass() -> None:
    env = {
        **os.environ,
        "XLA_FLAGS": "--xla_force_host_platform_device_count=4",
        "JAX_PLATFORMS": "cpu",
    }
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         str(HERE / "four_devices")],
        capture_output=True, text=True, env=env, timeout=600, cwd=HERE.parents[2],
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "skipped" not in run.stdout, run.stdout[-2000:]
