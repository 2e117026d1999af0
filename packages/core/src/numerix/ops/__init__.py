"""The public ops, one module per family; ``numerix`` re-exports them.

The families the first op of a process needs (creation, element-wise, transfer) load
with this package; every other family loads on the first use of one of its names
(PEP 562 module ``__getattr__``): ``numerix.ops.softmax``, ``numerix.softmax``,
``from numerix import softmax``, a tensor's ``.sum()`` or ``x[...]``. The first use
binds every name of the family here, so later calls find them as attributes, at no cost.

# Note: a family may export a function of its own name (``sort``, ``conv``): importing
# the submodule binds it on this package under that name, which :class:`_Ops` turns
# back into the function.
"""

import importlib as _importlib
import sys
import types as _types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from numerix import _tensor
from numerix import backend as _backend
from numerix.errors import ShapeError
from numerix.ops import _fast
from numerix.ops import creation as _creation
from numerix.ops import elementwise as _elementwise
from numerix.ops import transfer as _transfer
from numerix.ops._core import check_concrete, is_concrete

# what derivative rules, given this namespace as ``ops``, record a block with
from numerix.ops._core import new_out as new_out
from numerix.ops._core import run_block as run_block
from numerix.ops.creation import *  # noqa: F403
from numerix.ops.elementwise import *  # noqa: F403
from numerix.ops.transfer import *  # noqa: F403

if TYPE_CHECKING:  # the families that load on first use, for type checkers
    from numerix.ops.composites import *  # noqa: F403
    from numerix.ops.conv import *  # noqa: F403
    from numerix.ops.display import *  # noqa: F403
    from numerix.ops.einsum import *  # noqa: F403
    from numerix.ops.fft import *  # noqa: F403
    from numerix.ops.indexing import *  # noqa: F403
    from numerix.ops.linalg import *  # noqa: F403
    from numerix.ops.linalg_blocks import *  # noqa: F403
    from numerix.ops.reduction import *  # noqa: F403
    from numerix.ops.shape import *  # noqa: F403
    from numerix.ops.sort import *  # noqa: F403
    from numerix.ops.window import *  # noqa: F403

#: The families that load on first use, each with its ``__all__`` (in its order; a core
#: test holds the two equal).
LAZY_FAMILIES: dict[str, tuple[str, ...]] = {
    "reduction": ("sum", "prod", "mean", "var", "std", "max", "min", "argmax", "argmin", "all", "any",
                  "count_nonzero"),
    "linalg": ("dot", "matmul", "tensordot", "outer", "vecdot", "dot_general", "cross"),
    "linalg_blocks": ("cholesky", "triangular_solve", "solve", "inv", "det", "lu", "qr", "eigh", "svd",
                      "slogdet", "eigvalsh", "svdvals", "matrix_rank", "pinv", "matrix_power", "matrix_trace"),
    "shape": ("reshape", "transpose", "permute_dims", "matrix_transpose", "broadcast_to",
              "broadcast_arrays", "broadcast_shapes", "expand_dims", "squeeze", "concatenate", "concat", "stack", "flip",
              "ravel", "pad", "pad_general", "tile", "moveaxis", "swapaxes", "roll"),
    "indexing": ("getitem", "take", "take_along_axis", "dynamic_slice", "put_slice", "indexed_add",
                 "indexed_put", "repeat", "setitem", "IndexUpdates"),
    "window": ("window_sum", "window_prod", "window_max", "window_min", "window_mean",
               "window_scatter_max", "window_scatter_min"),
    "conv": ("conv",),
    "sort": ("sort", "argsort", "top_k", "cumulative_sum", "cumulative_prod", "cumulative_max",
             "cumulative_min", "cumsum", "cumprod"),
    "composites": ("logsumexp", "logaddexp", "softmax", "log_softmax", "relu", "gelu", "silu", "softplus",
                   "vector_norm", "matrix_norm", "norm", "split", "array_split", "meshgrid", "diag",
                   "diagonal", "tril", "triu", "one_hot", "isclose", "allclose", "all_close",
                   "quotient", "reduce", "window_reduce", "to_batched", "nonzero",
                   "copysign", "signbit", "nextafter", "hypot", "log2", "log10", "diff", "unstack",
                   "searchsorted", "unique_all", "unique_counts", "unique_inverse", "unique_values",
                   "isin"),
    "fft": ("fft", "ifft", "fftfreq", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft",
            "ihfft", "rfftfreq", "fftshift", "ifftshift"),
    "einsum": ("einsum",),
    "display": ("image", "Image"),
}  # fmt: skip

#: Each public lazy name and the family that defines it.
LAZY: dict[str, str] = {n: f for f, names in LAZY_FAMILIES.items() for n in names}
#: ... and every lazy name, with those only Tensor's methods call (``Tensor.mT``'s, and
#: the text and HTML views': ``repr(t)``, ``t._repr_html_()``).
_FAMILY_OF = {**LAZY, "matrix_transpose_T": "shape", "printed_values": "display",
              "tensor_html": "display"}  # fmt: skip

__all__: list[str] = []
__all__ += _creation.__all__
__all__ += _elementwise.__all__
__all__ += LAZY_FAMILIES["reduction"]
__all__ += LAZY_FAMILIES["linalg"]
__all__ += LAZY_FAMILIES["linalg_blocks"]
__all__ += LAZY_FAMILIES["shape"]
__all__ += LAZY_FAMILIES["indexing"]
__all__ += LAZY_FAMILIES["window"]
__all__ += LAZY_FAMILIES["conv"]
__all__ += LAZY_FAMILIES["sort"]
__all__ += LAZY_FAMILIES["composites"]
__all__ += _transfer.__all__
__all__ += LAZY_FAMILIES["fft"]
__all__ += LAZY_FAMILIES["einsum"]
__all__ += LAZY_FAMILIES["display"]

_internal = (ShapeError, check_concrete, is_concrete)


def _load_fallbacks() -> None:
    # the core's fallbacks of the optional primitives, written with these ops: loaded on
    # the first call of a fallback kernel (numerix.backend.load_fallbacks)
    _importlib.import_module(f"{__name__}.fallbacks")


_backend.load_fallbacks = _load_fallbacks


def load_family(family: str) -> None:
    """Import the lazy ``family`` and bind its names here and for Tensor's methods."""
    _bind_family(family, _importlib.import_module(f"{__name__}.{family}"))


def _bind_family(family: str, module: _types.ModuleType) -> None:
    names = {n: getattr(module, n) for n, f in _FAMILY_OF.items() if f == family}
    globals().update(names)
    _tensor_ops.__dict__.update(names)


def __getattr__(name: str) -> Any:
    family = _FAMILY_OF.get(name)
    if family is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    load_family(family)
    return globals()[name]


def __dir__() -> list[str]:
    return sorted({*globals(), *_FAMILY_OF})


class _Ops(_types.ModuleType):
    # importing a family (`import numerix.ops.indexing`, not only a first use) sets it as
    # an attribute of this package once it has run: its names are bound then, for Tensor's
    # methods too, whose compiled forms would otherwise never call the loader left there.
    # The family numerix.ops.sort binds as `sort`, where numerix.ops.sort is the function:
    # keep the function
    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, _types.ModuleType) and name in LAZY_FAMILIES:
            _bind_family(name, value)
            if LAZY.get(name) == name:
                value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Ops


# NOTE: Tensor's operators and methods call these ops through a plain module of their
# own: CPython specialises the load of `module.name` only on an exact module with no
# __getattr__, and this package has both (each method cost 15-40 ns more through it).
# A name of a family not loaded yet is, there, a function that loads the family.
_tensor_ops = _types.ModuleType(f"{__name__}._tensor_ops")


def _loads_on_first_call(name: str) -> Callable[..., Any]:
    def first_call(*args: Any, **kwargs: Any) -> Any:
        load_family(_FAMILY_OF[name])
        return getattr(_tensor_ops, name)(*args, **kwargs)

    first_call.__name__ = first_call.__qualname__ = name
    return first_call


_tensor_ops.__dict__.update((n, _loads_on_first_call(n)) for n in _FAMILY_OF)
_tensor_ops.__dict__.update((n, v) for n, v in globals().items() if not n.startswith("__"))

# Tensor's operators and methods are these ops, in Python and in the compiled base
_tensor.attach_ops(_tensor_ops)
_fast.attach(_tensor_ops)
_tensor.Tensor.copy = _elementwise.tensor_copy  # type: ignore[attr-defined]
_tensor.Tensor.numpy = _elementwise.tensor_numpy  # type: ignore[attr-defined]
