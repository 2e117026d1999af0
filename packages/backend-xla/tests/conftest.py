import pytest


@pytest.fixture(scope="session")
def numerix_backend():
    """The conformance kit runs on this package's backend (the host client)."""
    return "xla"
