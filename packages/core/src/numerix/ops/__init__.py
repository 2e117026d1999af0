"""The public ops, one module per family; ``numerix`` re-exports them."""

from numerix.errors import ShapeError
from numerix.ops import (
    composites,
    conv,
    creation,
    elementwise,
    indexing,
    linalg,
    reduction,
    shape,
    sort,
    transfer,
    window,
)
from numerix.ops._core import check_concrete, is_concrete
from numerix.ops.composites import *  # noqa: F403
from numerix.ops.conv import *  # noqa: F403
from numerix.ops.creation import *  # noqa: F403
from numerix.ops.elementwise import *  # noqa: F403
from numerix.ops.indexing import *  # noqa: F403
from numerix.ops.linalg import *  # noqa: F403
from numerix.ops.reduction import *  # noqa: F403
from numerix.ops.shape import *  # noqa: F403
from numerix.ops.shape import matrix_transpose_T
from numerix.ops.sort import *  # noqa: F403
from numerix.ops.transfer import *  # noqa: F403
from numerix.ops.window import *  # noqa: F403

__all__: list[str] = []
__all__ += creation.__all__
__all__ += elementwise.__all__
__all__ += reduction.__all__
__all__ += linalg.__all__
__all__ += shape.__all__
__all__ += indexing.__all__
__all__ += window.__all__
__all__ += conv.__all__
__all__ += sort.__all__
__all__ += composites.__all__
__all__ += transfer.__all__

_internal = (ShapeError, check_concrete, is_concrete, matrix_transpose_T)
