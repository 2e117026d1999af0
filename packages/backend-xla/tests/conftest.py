import os

import pytest


@pytest.fixture(scope="session")
def numerix_backend():
    """The conformance kit runs on this package's backend (the host client)."""
    return "xla"


# The cases over four simulated host devices run in a process started with
# XLA_FLAGS=--xla_force_host_platform_device_count=4 (JAX reads it once, at start):
# test_sharding.py starts that process; elsewhere the folder is not collected.
FOUR = "--xla_force_host_platform_device_count=4"
collect_ignore = [] if FOUR in os.environ.get("XLA_FLAGS", "") else ["four_devices"]
