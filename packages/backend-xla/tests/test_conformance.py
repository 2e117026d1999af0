"""The conformance kit, run on the xla backend (selected in conftest.py)."""

from numerix.testing.suite import *  # noqa: F403
