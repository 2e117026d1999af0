"""numerix: one tensor API, many backends and compilers.

>>> import numerix as nx
>>> x = nx.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> (x @ x).tolist()
[[7.0, 10.0], [15.0, 22.0]]
"""

import importlib as _importlib
import sys as _sys
import types as _types
from typing import TYPE_CHECKING, Any

from numerix import (
    _numpy_protocol,  # noqa: F401  (Tensor's numpy protocols)
    dtypes,
    ops,
)
from numerix._array_api import API_VERSION as __array_api_version__
from numerix._array_api import Device, __array_namespace_info__
from numerix._tensor import Tensor
from numerix._version import __version__
from numerix.backend import Backend
from numerix.configuration import (
    config,
    default_backend,
    get_default_backend,
    reload_config,
    set_default_backend,
    set_global_default_backend,
)

if TYPE_CHECKING:
    from numerix import io as io  # not in __all__: a star import would shadow the stdlib's io
    from numerix import linalg, nn, random, tree
    from numerix._benchmark import benchmark
    from numerix.defn.autodiff import (
        checkpoint,
        custom_grad,
        custom_vjp,
        grad,
        jvp,
        stop_grad,
        value_and_grad,
        vjp,
    )
    from numerix.defn.batching import vmap
    from numerix.defn.control import cond, fori_loop, hook, print_value, scan, while_loop
    from numerix.defn.exporting import export, load_exported
    from numerix.defn.jacobians import hessian, jacfwd, jacrev
    from numerix.defn.jit import compile, defn, jit
    from numerix.defn.streaming import stream
    from numerix.defn.trace import template, trace
    from numerix.io import load, save
from numerix.dtypes import (
    DType,
    bfloat16,
    bool_,
    can_cast,
    complex64,
    complex128,
    finfo,
    float16,
    float32,
    float64,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    isdtype,
    result_type,
    uint8,
    uint16,
    uint32,
    uint64,
)
from numerix.errors import (
    ArgumentError,
    AxisError,
    BackendMismatchError,
    BackendNotFoundError,
    BackendOptionError,
    ConfigError,
    DeallocatedError,
    DTypeError,
    FileFormatError,
    IndexingError,
    NumerixError,
    NumpyFunctionError,
    OutOfMemoryError,
    PluginError,
    ShapeError,
    TracingError,
    UnsupportedDTypeError,
)
from numerix.ops.creation import *  # noqa: F403
from numerix.ops.elementwise import *  # noqa: F403
from numerix.ops.transfer import *  # noqa: F403

if TYPE_CHECKING:  # the families that load on first use, for type checkers
    # numerix.fft is the fft extension module, not numerix.ops.fft's function
    from numerix import fft  # noqa: F401
    from numerix.ops.composites import *  # noqa: F403
    from numerix.ops.conv import *  # noqa: F403
    from numerix.ops.einsum import *  # noqa: F403
    from numerix.ops.fft import (  # noqa: F401
        fftfreq,
        fftn,
        fftshift,
        hfft,
        ifft,
        ifftn,
        ifftshift,
        ihfft,
        irfft,
        irfftn,
        rfft,
        rfftfreq,
        rfftn,
    )
    from numerix.ops.indexing import *  # noqa: F403
    from numerix.ops.linalg import *  # noqa: F403
    from numerix.ops.linalg_blocks import *  # noqa: F403
    from numerix.ops.reduction import *  # noqa: F403
    from numerix.ops.shape import *  # noqa: F403
    from numerix.ops.sort import *  # noqa: F403
    from numerix.ops.window import *  # noqa: F403
from numerix.plugins import clear_caches, devices, get_backend, register_backend, unregister_backend

bool = bool_

# the array API's constants
e = 2.718281828459045
pi = 3.141592653589793
inf = float("inf")
nan = float("nan")
newaxis = None  # an index inserting an axis of size 1: x[:, numerix.newaxis]

# numerix.defn (tracing, jit, grad), numerix.random, numerix.nn and the ops families of
# numerix.ops.LAZY load on first use of one of their names (PEP 562 module __getattr__):
# `import numerix` and the first eager op need none of them.
_LAZY = {
    "random": "numerix.random",
    "nn": "numerix.nn",
    "linalg": "numerix.linalg",  # the array API extensions; numerix.ops.fft is the function
    "fft": "numerix.fft",
    "tree": "numerix.tree",
    "io": "numerix.io",
    "distributed": "numerix.distributed",
    "benchmark": "numerix._benchmark",
    "save": "numerix.io",
    "load": "numerix.io",
    **dict.fromkeys(
        ("defn", "jit", "compile", "template", "trace", "cond", "while_loop", "fori_loop",
         "print_value", "hook", "grad", "value_and_grad", "vjp", "jvp", "stop_grad",
         "custom_vjp", "custom_grad", "checkpoint", "vmap", "jacrev", "jacfwd", "hessian",
         "scan", "stream", "export", "load_exported"),
        "numerix.defn",
    ),
}  # fmt: skip


_SUBMODULES = ("random", "nn", "linalg", "fft", "tree", "io", "distributed")


def __getattr__(name: str) -> Any:
    if name in ops.LAZY and name not in _SUBMODULES:
        value = getattr(ops, name)
    else:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'numerix' has no attribute {name!r}")
        m = _importlib.import_module(module)
        value = m if name in _SUBMODULES else getattr(m, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, *ops.__all__})


class _Package(_types.ModuleType):
    # NOTE: importing the subpackage numerix.defn (numerix.defn.jit, from a compiler)
    # binds the subpackage as the attribute `defn` of this module, where `numerix.defn`
    # is the decorator: keep the decorator
    def __setattr__(self, name: str, value: Any) -> None:
        if name == "defn" and isinstance(value, _types.ModuleType):
            value = value.defn
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package

__all__ = [
    "__version__", "Tensor", "Backend", "DType", "dtypes", "nn", "random", "linalg", "tree",
    "save", "load", "benchmark",
    "__array_api_version__", "__array_namespace_info__", "Device",
    "bool", "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
    "finfo", "iinfo", "isdtype", "result_type", "can_cast", "e", "pi", "inf", "nan",
    "get_default_backend", "set_default_backend", "set_global_default_backend",
    "default_backend", "config", "reload_config", "get_backend", "register_backend", "unregister_backend",
    "clear_caches", "devices",
    "NumerixError", "ShapeError", "DTypeError", "BackendMismatchError", "UnsupportedDTypeError",
    "BackendNotFoundError", "BackendOptionError", "PluginError", "ConfigError", "IndexingError",
    "ArgumentError", "AxisError", "TracingError", "DeallocatedError", "OutOfMemoryError", "NumpyFunctionError",
    "FileFormatError",
    "defn", "jit", "compile", "template", "trace", "cond", "while_loop", "fori_loop",
    "print_value", "hook", "grad", "value_and_grad", "vjp", "jvp", "stop_grad", "custom_vjp",
    "custom_grad", "checkpoint", "vmap", "jacrev", "jacfwd", "hessian", "scan", "stream",
    "export", "load_exported",
]  # fmt: skip
__all__ += ops.__all__  # every family module's __all__, see numerix/ops/__init__.py
