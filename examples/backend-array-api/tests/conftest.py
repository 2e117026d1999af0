import pytest


@pytest.fixture(scope="session")
def numerix_backend():
    return "array_api"
