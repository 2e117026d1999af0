"""The conformance kit on binary restricted to the required core: every optional
primitive runs the core's fallback (numerix.testing.core_only), checked against the
kit's oracles.

``CORE_ONLY_KEEP=transpose,slice`` keeps binary's own kernels for the primitives named
(to work on one family's fallbacks over another's native kernels); CI leaves it unset.
"""

import os

import pytest

import numerix
from numerix.testing.core_only import core_only
from numerix_binary.backend import BinaryBackend

_KEEP = tuple(n for n in os.environ.get("CORE_ONLY_KEEP", "").split(",") if n)
numerix.register_backend(
    "binary_core", core_only(BinaryBackend, "binary_core", keep=_KEEP), replace=True
)


@pytest.fixture(scope="session")
def numerix_backend():
    return "binary_core"
