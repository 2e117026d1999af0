import pytest
import torch

# The suite runs two pytest workers on a two-core machine: one intra-op thread each keeps
# torch's parallel regions (softmax of more than one slice, large element-wise ops) from
# oversubscribing the cores, which a loaded machine turns into milliseconds a call. The
# tests of the num_threads setting run in processes of their own.
torch.set_num_threads(1)


@pytest.fixture(scope="session")
def numerix_backend():
    """The conformance kit runs on this package's backend (the cpu device here)."""
    return ("torch", {"device": "cpu"})
