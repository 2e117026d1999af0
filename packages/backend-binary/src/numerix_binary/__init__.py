"""numerix-binary: the host reference backend of numerix (numpy kernels)."""

__version__ = "0.1.0"
