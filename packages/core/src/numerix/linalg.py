"""The array API ``linalg`` extension: ``numerix.linalg.solve(a, b)``, ...

Each name is numerix's own op (also at ``numerix.<name>``; ``trace`` is
``numerix.matrix_trace``, as ``numerix.trace`` is the tracer of :mod:`numerix.defn`), or
an adapter over it where the array API's form differs: ``eigh``, ``qr``, ``slogdet`` and
``svd`` return named tuples. ``__all__`` lists exactly the functions of the array API's ``linalg``
extension (2024.12).

>>> import numerix as nx
>>> nx.linalg.eigh(nx.tensor([[2.0, 0.0], [0.0, 1.0]])).eigenvalues.tolist()
[1.0, 2.0]
"""

from typing import Any, NamedTuple

from numerix._tensor import Tensor
from numerix.ops import linalg_blocks as _blocks
from numerix.ops.composites import diagonal, matrix_norm, vector_norm
from numerix.ops.linalg import cross, matmul, outer, tensordot, vecdot
from numerix.ops.linalg_blocks import (
    cholesky,
    det,
    eigvalsh,
    inv,
    matrix_power,
    matrix_rank,
    pinv,
    solve,
    svdvals,
)
from numerix.ops.linalg_blocks import matrix_trace as trace
from numerix.ops.shape import matrix_transpose

__all__ = [
    "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm",
    "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve",
    "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
]  # fmt: skip


class EighResult(NamedTuple):
    """The result of :func:`eigh`."""

    eigenvalues: Tensor
    eigenvectors: Tensor


class QRResult(NamedTuple):
    """The result of :func:`qr`."""

    Q: Tensor
    R: Tensor


class SlogdetResult(NamedTuple):
    """The result of :func:`slogdet`."""

    sign: Tensor
    logabsdet: Tensor


class SVDResult(NamedTuple):
    """The result of :func:`svd`."""

    U: Tensor
    S: Tensor
    Vh: Tensor


def eigh(x: Any, /) -> EighResult:
    """:func:`numerix.eigh` as a named tuple ``(eigenvalues, eigenvectors)`` (array API
    ``linalg.eigh``).

    >>> import numerix as nx
    >>> nx.linalg.eigh(nx.eye(2)).eigenvectors.shape
    (2, 2)
    """
    return EighResult(*_blocks.eigh(x))


def qr(x: Any, /, *, mode: str = "reduced") -> QRResult:
    """:func:`numerix.qr` as a named tuple ``(Q, R)`` (array API ``linalg.qr``).

    >>> import numerix as nx
    >>> nx.linalg.qr(nx.ones((3, 2))).R.shape
    (2, 2)
    """
    return QRResult(*_blocks.qr(x, mode=mode))


def slogdet(x: Any, /) -> SlogdetResult:
    """:func:`numerix.slogdet` as a named tuple ``(sign, logabsdet)`` (array API
    ``linalg.slogdet``).

    >>> import numerix as nx
    >>> nx.linalg.slogdet(nx.eye(2)).sign.item()
    1.0
    """
    return SlogdetResult(*_blocks.slogdet(x))


def svd(x: Any, /, *, full_matrices: bool = True) -> SVDResult:
    """:func:`numerix.svd` as a named tuple ``(U, S, Vh)`` (array API ``linalg.svd``).

    >>> import numerix as nx
    >>> nx.linalg.svd(nx.ones((3, 2)), full_matrices=False).U.shape
    (3, 2)
    """
    return SVDResult(*_blocks.svd(x, full_matrices=full_matrices))
