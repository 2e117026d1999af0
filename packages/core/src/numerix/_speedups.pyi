# Types of the compiled module numerix._speedups (_speedups.c; docs/decisions.md 38).
from collections.abc import Callable
from typing import Any

class TensorBase:
    data: Any
    shape: tuple[int, ...]
    dtype: Any
    backend: Any

class Op:
    primitive: Any
    fallback: Callable[..., Any]
    params: Any
    def __init__(
        self, primitive: Any, fallback: Callable[..., Any], arity: int, params: Any = None
    ) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def memo(self) -> list[tuple[Any, Any, str, bool, bool]]: ...

def configure(
    tensor_type: type,
    resolver: Callable[..., Any],
    scalar_operand: Callable[..., Any],
    int_operand: Callable[..., Any],
    matmul_check_from: int,
) -> None: ...
def attach(ops: Any, getitem: Any, reshape: Any, getitem_op: Op, reshape_op: Op) -> None: ...
def clear() -> None: ...

class JitCall:
    def __init__(
        self,
        slow: Callable[..., Any],
        fast: dict[Any, Any],
        touch: Callable[[Any], Any],
        stats: list[int],
        active: Any,
        default_key: Callable[[], Any] | None,
    ) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

class Signature:
    """One argument's part of a jit cache key: (type, shape, dtype, backend)."""

    def __init__(self, type: type, shape: tuple[int, ...], dtype: Any, backend: Any) -> None: ...
    def astuple(self) -> tuple[type, tuple[int, ...], Any, Any]: ...

def signature(a: Any) -> Signature: ...
