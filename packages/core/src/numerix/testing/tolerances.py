"""The kit's tolerances: one table, per dtype, with per-op and per-backend entries.

Integers and bool always compare exactly. Inexact dtypes compare with
``numpy.testing.assert_allclose(rtol, atol)``; the defaults below fit results
correctly rounded in the dtype (a few ulps). Every looser entry names its op, its
dtype and its reason, so that a wrong kernel cannot hide behind a generous global
tolerance.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

from numerix import dtypes
from numerix.dtypes import DType

__all__ = ["DEFAULT", "Looser", "LOOSER", "tolerance", "register_looser", "current_op"]

#: The op the running kit test exercises (set by the plugin; check() looks it up).
current_op: ContextVar[str | None] = ContextVar("numerix_kit_op", default=None)

#: (rtol, atol) per result dtype when nothing looser is declared.
DEFAULT: dict[DType, tuple[float, float]] = {
    dtypes.float16: (2e-3, 2e-3),
    dtypes.bfloat16: (1.6e-2, 1.6e-2),
    dtypes.float32: (2e-6, 2e-6),
    dtypes.float64: (1e-12, 1e-12),
    dtypes.complex64: (2e-6, 2e-6),
    dtypes.complex128: (1e-12, 1e-12),
}


@dataclass(frozen=True)
class Looser:
    """A tolerance looser than :data:`DEFAULT` for one op and dtype, and why."""

    op: str
    dtype: DType
    rtol: float
    atol: float
    reason: str
    backend: str | None = None  # None: every backend


#: Every looser entry of the reference suite. Backend packages add theirs with
#: :func:`register_looser` (in their conftest), each with its reason.
LOOSER: list[Looser] = []


def register_looser(entry: Looser) -> None:
    """Declare a looser tolerance (a backend package's conftest calls this)."""
    if not entry.reason.strip():
        raise ValueError(f"a looser tolerance for {entry.op}/{entry.dtype} needs a reason")
    LOOSER.append(entry)


def tolerance(op: str | None, dtype: DType, backend: str | None = None) -> tuple[float, float]:
    """``(rtol, atol)`` for ``op``'s results of ``dtype`` on ``backend``."""
    if op is None:
        op = current_op.get()
    rtol, atol = DEFAULT[dtype]
    for e in LOOSER:
        if e.op == op and e.dtype is dtype and e.backend in (None, backend):
            rtol, atol = max(rtol, e.rtol), max(atol, e.atol)
    return rtol, atol
