"""The public ops, one module per family; ``numerix`` re-exports them.

# Note: the family modules are bound under private names: a family may export a
# function of its own name (``sort``, ``conv``), which the star imports bind here.
"""

import sys

from numerix import _tensor
from numerix.errors import ShapeError
from numerix.ops import composites as _composites
from numerix.ops import conv as _conv
from numerix.ops import creation as _creation
from numerix.ops import einsum as _einsum
from numerix.ops import elementwise as _elementwise
from numerix.ops import fft as _fft
from numerix.ops import indexing as _indexing
from numerix.ops import linalg as _linalg
from numerix.ops import linalg_blocks as _linalg_blocks
from numerix.ops import reduction as _reduction
from numerix.ops import shape as _shape
from numerix.ops import sort as _sort
from numerix.ops import transfer as _transfer
from numerix.ops import window as _window
from numerix.ops._core import check_concrete, is_concrete
from numerix.ops.composites import *  # noqa: F403
from numerix.ops.conv import *  # noqa: F403
from numerix.ops.creation import *  # noqa: F403
from numerix.ops.einsum import *  # noqa: F403
from numerix.ops.elementwise import *  # noqa: F403
from numerix.ops.fft import *  # noqa: F403
from numerix.ops.indexing import *  # noqa: F403
from numerix.ops.linalg import *  # noqa: F403
from numerix.ops.linalg_blocks import *  # noqa: F403
from numerix.ops.reduction import *  # noqa: F403
from numerix.ops.shape import *  # noqa: F403
from numerix.ops.shape import matrix_transpose_T
from numerix.ops.sort import *  # noqa: F403
from numerix.ops.transfer import *  # noqa: F403
from numerix.ops.window import *  # noqa: F403

__all__: list[str] = []
__all__ += _creation.__all__
__all__ += _elementwise.__all__
__all__ += _reduction.__all__
__all__ += _linalg.__all__
__all__ += _linalg_blocks.__all__
__all__ += _shape.__all__
__all__ += _indexing.__all__
__all__ += _window.__all__
__all__ += _conv.__all__
__all__ += _sort.__all__
__all__ += _composites.__all__
__all__ += _transfer.__all__
__all__ += _fft.__all__
__all__ += _einsum.__all__

_internal = (ShapeError, check_concrete, is_concrete, matrix_transpose_T)

# Tensor's operators and methods are these ops
_tensor.attach_ops(sys.modules[__name__])
