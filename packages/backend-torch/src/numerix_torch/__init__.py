"""numerix-torch: the LibTorch backend of numerix, through PyTorch (Torchx's role in Nx).

Importing this package does not import PyTorch; the backend module does, on first use.
"""

__version__ = "0.1.0"
