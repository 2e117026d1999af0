"""The conformance kit, run on binary_core (selected in conftest.py)."""

from numerix.testing.suite import *  # noqa: F403
