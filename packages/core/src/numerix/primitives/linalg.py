"""dot: contraction with batch axes, as Nx's and XLA's dot_general."""

from __future__ import annotations

from numerix.dtypes import DType
from numerix.errors import DTypeError
from numerix.primitives._registry import REGISTRY


def dot_shape_rule(
    x: tuple[int, ...], y: tuple[int, ...], *, contract_x: tuple[int, ...], batch_x: tuple[int, ...],
    contract_y: tuple[int, ...], batch_y: tuple[int, ...],
) -> tuple[int, ...]:  # fmt: skip
    batch = tuple(x[a] for a in batch_x)
    free_x = tuple(d for i, d in enumerate(x) if i not in contract_x and i not in batch_x)
    free_y = tuple(d for i, d in enumerate(y) if i not in contract_y and i not in batch_y)
    return batch + free_x + free_y


def dot_dtype_rule(x: DType, y: DType) -> DType:
    if x is not y:  # pragma: no cover - the core promotes first
        raise DTypeError(f"dot: inputs must share a dtype, got {x} and {y}")
    return x


dot = REGISTRY.declare(
    "dot", "linalg", inputs=("x", "y"),
    params=("contract_x", "batch_x", "contract_y", "batch_y"),
    shape_rule=dot_shape_rule, dtype_rule=dot_dtype_rule,
    doc="sum of products over the contracting axes; output axes are batch, free axes of x, "
        "free axes of y; inputs share out.dtype",
)  # fmt: skip
