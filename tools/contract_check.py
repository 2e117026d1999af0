"""mypy checks each backend class against the typed backend contract.

Run by ``nox -s typecheck`` (mypy.ini lists this file): each function below assigns a
backend to :class:`numerix.primitives.contract.FullContract`, so a method whose
signature differs from its primitive's (a keyword parameter misspelled or missing, a
tensor input too many or too few) is a type error naming the backend and the method.
A method a backend lacks is not one: mypy reads it through ``Backend.__getattr__`` (typed
``Any``); the core installs a fallback for an optional primitive, and registration refuses a
backend without a required one (``numerix.backend.required_missing``). Nothing here runs:
the module is read by mypy only.
"""

from __future__ import annotations

from numerix.primitives.contract import FullContract
from numerix_binary.backend import BinaryBackend
from numerix_torch.backend import TorchBackend
from numerix_xla.backend import XlaBackend


def _binary(b: BinaryBackend) -> FullContract:
    return b


def _xla(b: XlaBackend) -> FullContract:
    return b


def _torch(b: TorchBackend) -> FullContract:
    return b
