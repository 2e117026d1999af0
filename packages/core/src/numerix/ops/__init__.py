"""The public ops, one module per family; ``numerix`` re-exports them."""

from numerix.errors import ShapeError
from numerix.ops._core import check_concrete, is_concrete
from numerix.ops.creation import *  # noqa: F403
from numerix.ops.creation import __all__ as _creation
from numerix.ops.elementwise import *  # noqa: F403
from numerix.ops.elementwise import __all__ as _elementwise
from numerix.ops.indexing import *  # noqa: F403
from numerix.ops.indexing import __all__ as _indexing
from numerix.ops.linalg import *  # noqa: F403
from numerix.ops.linalg import __all__ as _linalg
from numerix.ops.reduction import *  # noqa: F403
from numerix.ops.reduction import __all__ as _reduction
from numerix.ops.shape import *  # noqa: F403
from numerix.ops.shape import __all__ as _shape
from numerix.ops.shape import matrix_transpose_T
from numerix.ops.transfer import *  # noqa: F403
from numerix.ops.transfer import __all__ as _transfer

__all__ = [
    *_creation, *_elementwise, *_indexing, *_linalg, *_reduction, *_shape, *_transfer,
]  # fmt: skip
_internal = (ShapeError, check_concrete, is_concrete, matrix_transpose_T)
