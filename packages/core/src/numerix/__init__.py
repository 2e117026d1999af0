"""numerix: one tensor API, many backends and compilers.

>>> import numerix as nx
>>> x = nx.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> (x @ x).tolist()
[[7.0, 10.0], [15.0, 22.0]]
"""

from numerix import (
    _numpy_protocol,  # noqa: F401  (Tensor's numpy protocols)
    dtypes,
    nn,
    ops,
    random,
)
from numerix._tensor import Tensor
from numerix._version import __version__
from numerix.backend import Backend
from numerix.defaults import (
    config,
    default_backend,
    get_default_backend,
    reload_config,
    set_default_backend,
    set_global_default_backend,
)
from numerix.defn import (
    compile,
    cond,
    custom_grad,
    custom_vjp,
    defn,
    fori_loop,
    grad,
    hook,
    jit,
    jvp,
    print_value,
    stop_grad,
    template,
    trace,
    value_and_grad,
    vjp,
    while_loop,
)
from numerix.dtypes import (
    DType,
    bfloat16,
    bool_,
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
    BackendMismatchError,
    BackendNotFoundError,
    BackendOptionError,
    ConfigError,
    DeallocatedError,
    DTypeError,
    IndexingError,
    NumerixError,
    NumpyFunctionError,
    OutOfMemoryError,
    PluginError,
    ShapeError,
    TracingError,
    UnsupportedDTypeError,
)
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
from numerix.ops.sort import *  # noqa: F403
from numerix.ops.transfer import *  # noqa: F403
from numerix.ops.window import *  # noqa: F403
from numerix.plugins import clear_caches, devices, get_backend, register_backend, unregister_backend

bool = bool_

__all__ = [
    "__version__", "Tensor", "Backend", "DType", "dtypes", "nn", "random",
    "bool", "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
    "finfo", "iinfo", "isdtype", "result_type",
    "get_default_backend", "set_default_backend", "set_global_default_backend",
    "default_backend", "config", "reload_config", "get_backend", "register_backend", "unregister_backend",
    "clear_caches", "devices",
    "NumerixError", "ShapeError", "DTypeError", "BackendMismatchError", "UnsupportedDTypeError",
    "BackendNotFoundError", "BackendOptionError", "PluginError", "ConfigError", "IndexingError",
    "ArgumentError", "TracingError", "DeallocatedError", "OutOfMemoryError", "NumpyFunctionError",
    "defn", "jit", "compile", "template", "trace", "cond", "while_loop", "fori_loop",
    "print_value", "hook", "grad", "value_and_grad", "vjp", "jvp", "stop_grad", "custom_vjp",
    "custom_grad",
]  # fmt: skip
__all__ += ops.__all__  # every family module's __all__, see numerix/ops/__init__.py
