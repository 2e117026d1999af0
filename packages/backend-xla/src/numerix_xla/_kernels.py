"""The process-wide cache of the xla backend's jitted kernels: a bounded LRU.

Every kernel is a ``jax.jit`` function built once per (primitive, static parameters,
operand types) and kept here: the operand types (each operand's shape and dtype) are
part of the key, so each kernel compiles one XLA executable and the bound counts
executables, whatever shapes a program meets. Static parameters are structural only
(axes, output shapes, dtypes): indices, slice starts and scalar values go to the
kernels as runtime operands, so a new index compiles nothing.

The cache holds at most :data:`CACHE_SIZE` kernels; past that, the least recently used
one is dropped, and with it its executable (it lives as long as the jitted function
does). :func:`clear` drops them all, with JAX's own caches.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import jax

from numerix_xla._x64 import WIDE, check_64bit, x64_error, x64_on

__all__ = [
    "CACHE_SIZE", "WIDE", "cache_info", "check_64bit", "clear", "constant", "is_constant",
    "jitted", "kernel", "set_cache_size", "types", "x64_error", "x64_on",
]  # fmt: skip

#: The most kernels kept at once (``[backends.xla] kernel_cache_size``, set when the
#: backend loads, with :func:`set_cache_size`). Each is kept per operand types and holds
#: one XLA executable (about 1.5 MB on CPU) per device it ran on.
CACHE_SIZE = 512

_lock = threading.Lock()


# ---------------------------------------------------------------- the kernels' LRU
# One functools.lru_cache holds every kernel: its lookup (hash, find, move to the recent
# end) runs in C, a third of what an OrderedDict touched from Python costs on each eager
# op. The hot kernels are looked up as kernel(build, *params, *types), where build is a
# module-level function, params its static parameters and types the operands' shapes and
# dtypes (which build takes and ignores): the call's arguments are the key. jitted(key,
# build) serves kernels built by closures (the key names them, types included).


def _jit(fn: Callable[..., Any], **jit_options: Any) -> Callable[..., Any]:
    # JAX keeps a jitted function's executables under the function it wraps, for as long
    # as that function lives, whichever jax.jit wrapper compiled them: wrapping a module's
    # function (jnp.linalg.solve) would keep them past the kernel's eviction. A fresh
    # function per kernel dies with the kernel, and its executable with it.
    #
    # inline: traced inside another jit (the xla compiler's program), the kernel's lax
    # operations go into the caller's body, not one nested jitted call per kernel; an
    # eager call is the same cached executable as without it
    return jax.jit(lambda *a: fn(*a), inline=True, **jit_options)


def _build(build: Any, *params: Any) -> Callable[..., Any]:
    if type(build) is _Keyed:
        return build.make()
    return _jit(build(*params))


class _Keyed:
    """A kernel built by ``build()`` and known by ``key`` alone (the closure differs from
    call to call; the key does not)."""

    __slots__ = ("build", "hash", "jit_options", "key")

    def __init__(self, key: Any, build: Callable[[], Any], jit_options: dict[str, Any]) -> None:
        self.key = key
        self.build = build
        self.jit_options = jit_options
        self.hash = hash(key)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return type(other) is _Keyed and other.key == self.key

    def make(self) -> Callable[..., Any]:
        return _jit(self.build(), **self.jit_options)


kernel: functools._lru_cache_wrapper[Callable[..., Any]] = functools.lru_cache(maxsize=CACHE_SIZE)(
    _build
)
"""``kernel(build, *params, *types)``: the jitted ``build(*params, *types)``, built on first
use and kept while among the :data:`CACHE_SIZE` most recently used (every argument
hashable); ``types`` are the shape and dtype of each operand it is called with (as
:func:`types` gives them), so that it holds one executable."""


def set_cache_size(size: int) -> None:
    """Keep at most ``size`` kernels from now on (the kernels kept so far are dropped)."""
    global CACHE_SIZE, kernel
    with _lock:
        kernel.cache_clear()
        CACHE_SIZE = size
        kernel = functools.lru_cache(maxsize=size)(_build)


def cache_info() -> Any:
    """The kernel cache's hits, misses, bound and size (``functools.lru_cache``'s)."""
    return kernel.cache_info()


def jitted(
    key: Any, build: Callable[[], Callable[..., Any]], **jit_options: Any
) -> Callable[..., Any]:
    """The jitted kernel for ``key`` (a primitive name, its static parameters and the
    :func:`types` of its operands), built by ``build()`` on first use and kept as
    :func:`kernel` keeps its own; ``jit_options`` go to ``jax.jit`` (``out_shardings``
    for kernels without inputs, whose device is part of ``key``)."""
    return kernel(_Keyed(key, build, jit_options))


def types(*operands: Any) -> tuple[Any, ...]:
    """The part of a kernel's key its operands make: each one's shape and dtype."""
    return tuple(x for t in operands for x in (t.shape, t.dtype))


# ---------------------------------------------------------------- 0-d constants
# A bounded map whose least recently used entry goes first.


def _recall(cache: OrderedDict[Any, Any], key: Any) -> Any:
    """What ``cache`` holds under ``key`` (now its most recently used), or None."""
    value = cache.get(key)
    if value is not None:
        try:
            cache.move_to_end(key)
        except KeyError:  # another thread evicted it meanwhile: still a valid value
            pass
    return value


def _keep(cache: OrderedDict[Any, Any], key: Any, value: Any, size: int) -> list[Any]:
    """Put ``value`` in ``cache`` under ``key``; past ``size`` entries, drop the least
    recently used ones. Returns what was dropped."""
    dropped = []
    with _lock:
        cache[key] = value
        while len(cache) > size:
            dropped.append(cache.popitem(last=False)[1])
    return dropped


# A Python scalar meeting a tensor (x * 1.0001) becomes a 0-d tensor on the device;
# putting it there (jax.device_put) costs several times the op itself, so each
# (device, dtype, value) is put once and kept. jax arrays are immutable; a cached one
# that was deleted (donated to a program) is put again; numerix.deallocate of a tensor
# holding one drops the tensor's reference only (other tensors may hold the array).
# At most CONSTANTS_SIZE of them are kept, the least recently used dropped first.
CONSTANTS_SIZE = 1024
_CONSTANTS: OrderedDict[Any, Any] = OrderedDict()
_CONSTANT_IDS: dict[int, Any] = {}


def constant_key(value: Any) -> Any:
    """A key telling ``value`` apart from every other Python scalar (0.0 from -0.0, 1
    from 1.0 and True), or None for a value not cached (NaN, complex, numpy scalars)."""
    t = type(value)
    if t is float:
        if value == 0.0:
            return (t, "zero", str(value))
        return (t, value) if value == value else None
    if t is int or t is bool:
        return (t, value)
    return None


def constant(key: Any, make: Callable[[], Any]) -> Any:
    """The device array cached under ``key``, made by ``make()`` when absent or deleted."""
    a = _recall(_CONSTANTS, key)
    if a is None or a.is_deleted():
        if a is not None:
            _CONSTANT_IDS.pop(id(a), None)
        a = make()
        for old in _keep(_CONSTANTS, key, a, CONSTANTS_SIZE):
            _CONSTANT_IDS.pop(id(old), None)
        _CONSTANT_IDS[id(a)] = a
    return a


def is_constant(a: Any) -> bool:
    """Whether ``a`` is a cached constant (possibly shared by several tensors)."""
    return _CONSTANT_IDS.get(id(a)) is a


def clear() -> None:
    """Drop every cached kernel and JAX's compiled executables and traces.

    JAX keeps the executables of the module-level jitted kernels (and of every other
    jitted function in the process) in caches of its own, which only
    ``jax.clear_caches()`` empties: a user's own jitted functions compile again on their
    next call too."""
    with _lock:
        kernel.cache_clear()
        _CONSTANTS.clear()
    _CONSTANT_IDS.clear()
    jax.clear_caches()
