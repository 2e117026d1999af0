"""Invalid input never reaches a backend: the core stops it with a numerix error.

Each case runs with every primitive and block of the selected backend replaced by a
tripwire, so a case passes only if the core raised the named error *before* calling
the backend.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix.defn.compilers import compilers_serving
from numerix.primitives import BLOCKS, REGISTRY


class BackendReached(AssertionError):
    """The backend was called with input the core should have refused."""


@pytest.fixture
def tripwire(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], None]]:
    """Arm the backend: after ``arm()``, any primitive or block call raises BackendReached."""

    def arm() -> None:
        cls = type(nx.get_default_backend())
        for name in [p.name for p in REGISTRY] + [b.method for b in BLOCKS.values()]:
            if hasattr(cls, name):

                def boom(self: Any, *args: Any, _name: str = name, **kw: Any) -> Any:
                    raise BackendReached(f"backend {self!r} received {_name} for invalid input")

                monkeypatch.setattr(cls, name, boom)

    yield arm


def _t(shape: tuple[int, ...], dtype: Any = nx.float32) -> nx.Tensor:
    return nx.tensor(np.zeros(shape, dtype=nx.dtypes.as_dtype(dtype).numpy_dtype))


# (label, make operands, call, error type, message pattern)
CASES: list[tuple[str, Callable[[], tuple[Any, ...]], Callable[..., Any], type, str]] = [
    ("add shapes", lambda: (_t((2, 3)), _t((4,))), nx.add, nx.ShapeError,
     r"add: shapes \(2, 3\) and \(4,\) cannot be broadcast"),
    ("multiply shapes", lambda: (_t((3,)), _t((2,))), lambda a, b: a * b, nx.ShapeError,
     r"multiply: shapes"),
    ("bitwise on floats", lambda: (_t((2,)), _t((2,))), nx.bitwise_and, nx.DTypeError,
     r"bitwise_and: unsupported dtypes float32 and float32"),
    ("add bool+bool", lambda: (_t((2,), nx.bool_), _t((2,), nx.bool_)), nx.add, nx.DTypeError,
     r"add: unsupported dtypes bool and bool"),
    ("u64 + s64", lambda: (_t((2,), nx.uint64), _t((2,), nx.int64)), nx.add, nx.DTypeError,
     r"cannot promote uint64 with int64"),
    ("int scalar overflow", lambda: (_t((2,), nx.int8),), lambda a: a + 1000, nx.DTypeError,
     r"Python int 1000 does not fit int8"),
    ("sum axis", lambda: (_t((2, 3)),), lambda a: nx.sum(a, axis=2), nx.ShapeError,
     r"sum: axis 2 is out of range"),
    ("max of empty", lambda: (_t((0,)),), nx.max, nx.ShapeError,
     r"max: cannot reduce the empty axis"),
    ("argmax of empty", lambda: (_t((0, 2)),), lambda a: nx.argmax(a, axis=0), nx.ShapeError,
     r"argmax: cannot take argmax of an empty axis"),
    ("max of complex", lambda: (_t((2,), nx.complex64),), nx.max, nx.DTypeError,
     r"complex numbers have no order"),
    ("reshape size", lambda: (_t((2, 3)),), lambda a: nx.reshape(a, (4, 2)), nx.ShapeError,
     r"reshape: cannot reshape f32\[2\]\[3\]"),
    ("transpose perm", lambda: (_t((2, 3)),), lambda a: nx.transpose(a, (0, 0)), nx.ShapeError,
     r"transpose: axes \(0, 0\) are not a permutation"),
    ("matmul align", lambda: (_t((2, 3)), _t((2, 3))), nx.matmul, nx.ShapeError,
     r"matmul: shapes"),
    ("dot align", lambda: (_t((2, 3)), _t((2, 3))), nx.dot, nx.ShapeError, r"dot: shapes"),
    ("dot bool", lambda: (_t((2,), nx.bool_), _t((2,), nx.bool_)), nx.dot, nx.DTypeError,
     r"dot: bool tensors have no product"),
    ("concatenate ranks", lambda: (_t((2, 3)), _t((3,))),
     lambda a, b: nx.concatenate([a, b]), nx.ShapeError,
     r"concatenate: tensors must have the same number of dimensions"),
    ("stack shapes", lambda: (_t((2,)), _t((3,))), lambda a, b: nx.stack([a, b]), nx.ShapeError,
     r"stack: tensors must have the same shape"),
    ("broadcast_to", lambda: (_t((3,)),), lambda a: nx.broadcast_to(a, (2, 4)), nx.ShapeError,
     r"broadcast_to: shapes \(3,\) and \(2, 4\) cannot be broadcast"),
    ("squeeze non-1", lambda: (_t((2, 3)),), lambda a: nx.squeeze(a, 0), nx.ShapeError,
     r"squeeze: axis 0 of .* has size 2, not 1"),
    ("index out of bounds", lambda: (_t((2, 3)),), lambda a: a[5], nx.IndexingError,
     r"getitem: index 5 is out of bounds for axis 0 with size 2"),
    ("too many indices", lambda: (_t((2,)),), lambda a: a[0, 0], nx.IndexingError,
     r"getitem: too many indices"),
    ("tensor index out of bounds", lambda: (_t((3,)), nx.tensor([0, 3])), lambda a, i: a[i],
     nx.IndexingError, r"getitem: index 3 is out of bounds for axis 0 with size 3"),
    ("zeros too large", lambda: (), lambda: nx.zeros((2**31, 2**31)), nx.ShapeError,
     r"^zeros: shape \(2147483648, 2147483648\) has 4611686018427387904 elements, more than "
     r"any tensor can hold"),
    ("full too large", lambda: (), lambda: nx.full((2**62, 4), 1.0), nx.ShapeError,
     r"^full: shape .* more than any tensor can hold"),
    ("broadcast_to too large", lambda: (_t((1,)),), lambda a: nx.broadcast_to(a, (2**40, 2**30)),
     nx.ShapeError, r"^broadcast_to: shape .* more than any tensor can hold"),
    ("outer product too large", lambda: (_t((2**30, 0)), _t((0, 2**30))),
     lambda a, b: nx.matmul(a, b), nx.ShapeError, r"^matmul: shape .* more than any tensor"),
    ("take out of bounds", lambda: (_t((3,)), nx.tensor([5])), lambda a, i: nx.take(a, i),
     nx.IndexingError, r"^take: index 5 is out of bounds for axis 0 with size 3"),
    ("take from an empty axis", lambda: (_t((2, 0)), nx.tensor([0])),
     lambda a, i: nx.take(a, i, axis=1), nx.IndexingError,
     r"^take: index 0 is out of bounds for axis 1 with size 0"),
    ("float index", lambda: (_t((3,)), nx.tensor([0.0])), lambda a, i: a[i], nx.IndexingError,
     r"getitem: index tensors must be integer or bool"),
    ("where condition dtype", lambda: (_t((2,)), _t((2,))), lambda a, b: nx.where(a, a, b),
     nx.DTypeError, r"where: condition must be bool"),
    ("astype complex to real", lambda: (_t((2,), nx.complex64),),
     lambda a: nx.astype(a, nx.float32), nx.DTypeError,
     r"astype: casting complex .* would drop the imaginary part"),
    ("clip complex", lambda: (_t((2,), nx.complex64),), lambda a: nx.clip(a, 0, 1),
     nx.DTypeError, r"clip: takes real numeric tensors"),
    ("bool of many", lambda: (_t((2,)),), bool, nx.ShapeError, r"bool: the truth value"),
    # beyond any machine's memory (2**50 elements): a numerix error, not the library's own
    ("zeros beyond memory", lambda: (), lambda: nx.zeros((2**25, 2**25)), nx.OutOfMemoryError,
     r"^zeros: a tensor of shape \(33554432, 33554432\) \(1125899906842624 elements\) needs "
     r"at least 1024\.0 TiB, more than this machine's memory \(.* of RAM and swap\); use a "
     r"smaller shape"),
    ("full beyond memory", lambda: (), lambda: nx.full((2**44,), 1.0, dtype=nx.float64),
     nx.OutOfMemoryError, r"^full: a tensor of shape \(17592186044416,\) .* needs at least "
     r"16\.0 TiB, more than this machine's memory"),
    ("broadcast_to beyond memory", lambda: (_t((1,)),), lambda a: nx.broadcast_to(a, (2**50,)),
     nx.OutOfMemoryError, r"^broadcast_to: a tensor of shape \(1125899906842624,\)"),
    ("eye beyond memory", lambda: (), lambda: nx.eye(2**26), nx.OutOfMemoryError, r"^eye: "),
    ("iota beyond memory", lambda: (), lambda: nx.iota((2**50,)), nx.OutOfMemoryError, r"^iota: "),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_invalid_input_never_reaches_the_backend(case: Any, tripwire: Callable[[], None]) -> None:
    _, make, call, err, pattern = case
    operands = make()
    tripwire()
    with pytest.raises(err, match=pattern):
        call(*operands)


def test_tripwire_catches_a_backend_call(tripwire: Callable[[], None]) -> None:
    # the tripwire itself must fire on valid input, or the cases above prove nothing
    a = _t((2,))
    tripwire()
    with pytest.raises(BackendReached, match="received add"):
        nx.add(a, a)


def test_too_large_shapes_are_refused_under_jit() -> None:
    # the core refuses them while tracing, before any compiler or backend sees them (XLA
    # aborts the process on a byte size beyond 64 bits)
    x = _t((1,))
    for name in compilers_serving(nx.get_default_backend()):
        with pytest.raises(nx.ShapeError, match=r"^broadcast_to: shape .* more than any tensor"):
            nx.jit(lambda a: nx.broadcast_to(a, (2**40, 2**30)), compiler=name)(x)
        with pytest.raises(nx.ShapeError, match=r"^zeros: shape .* more than any tensor"):
            nx.jit(lambda a: a + nx.zeros((2**31, 2**31)), compiler=name)(x)
        with pytest.raises(nx.OutOfMemoryError, match=r"^zeros: .* more than this machine's"):
            nx.jit(lambda a: a + nx.zeros((2**25, 2**25)), compiler=name)(x)
