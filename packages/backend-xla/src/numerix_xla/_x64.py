"""JAX's process-wide 64-bit mode (``jax_enable_x64``), as ``[backends.xla] x64`` says.

The rule: numerix changes JAX's mode only when a 64-bit tensor (float64, int64, uint64,
complex128) is about to be made on xla while the mode is off; never when numerix or the
backend is imported, listed (``numerix info``, ``doctor``, ``bench``) or weighed in a
priority list that picks another backend. At that moment the setting decides:

- unset (the default): the mode is turned on, with one :class:`X64Warning` pointing at
  the user's line and saying how to keep it without the warning (``true``) or refuse it
  (``false``);
- ``true``: the mode is turned on, without a word;
- ``false``: JAX's mode is left alone and the tensor is refused
  (:class:`~numerix.errors.UnsupportedDTypeError`, naming the setting), never narrowed.

A program that turns the mode off after numerix turned it on is taken at its word: from
then on 64-bit tensors are refused as with ``false``.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import threading
import warnings
from collections.abc import Iterable
from typing import Any

import jax

from numerix import dtypes
from numerix.configuration import ConfigWarning
from numerix.dtypes import DType
from numerix.errors import UnsupportedDTypeError
from numerix_xla.clients import x64_setting

__all__ = ["WIDE", "X64Warning", "check_64bit", "x64_error", "x64_on"]

#: The dtypes that exist on xla only in JAX's 64-bit mode.
WIDE = frozenset({dtypes.float64, dtypes.int64, dtypes.uint64, dtypes.complex128})

_SETTING = "[backends.xla] x64"
_VARIABLE = "NUMERIX_BACKENDS__XLA__X64"


class X64Warning(ConfigWarning):
    """numerix turned on JAX's process-wide 64-bit mode (``jax_enable_x64``) to make a
    64-bit tensor on xla, because the setting ``[backends.xla] x64`` was not set; setting
    it (true or false) silences it."""


_lock = threading.Lock()
_turned_on = False  # numerix turned the mode on in this process


def x64_on() -> bool:
    return bool(jax.config.jax_enable_x64)  # type: ignore[attr-defined]


def check_64bit(op: str, backend: Any, dts: Iterable[DType]) -> None:
    """Before ``op`` makes a tensor of one of ``dts`` on xla: when one is 64-bit and JAX's
    mode is off, turn the mode on or raise UnsupportedDTypeError, as the setting says."""
    for d in dts:
        if d in WIDE and not x64_on():
            _need_x64(op, backend, d)
            return


def _need_x64(op: str, backend: Any, dtype: DType) -> None:
    setting = x64_setting()
    with _lock:
        if x64_on():  # another thread turned it on meanwhile
            return
        if setting is False or _turned_on:
            raise x64_error(op, backend, dtype)
        _turn_on()
    if setting is None:
        _warn_at_user(
            f"{op}: {dtype} tensors on xla need JAX's 64-bit mode (jax_enable_x64), so "
            f"numerix turned it on for the whole process: other JAX code now gets 64-bit "
            f"defaults too (jnp.array(1.0) is float64). {_SETTING} is unset: set it to true "
            f"({_VARIABLE}=1) to allow this without the warning, or to false "
            f"({_VARIABLE}=0) to leave JAX's mode alone (64-bit dtypes are then refused on "
            f"xla: use float32/int32)",
            X64Warning,
        )


def _turn_on() -> None:
    global _turned_on
    jax.config.update("jax_enable_x64", True)
    _turned_on = True


def x64_error(op: str, backend: Any, dtype: DType) -> UnsupportedDTypeError:
    """The error of a 64-bit ``dtype`` on xla while JAX's 64-bit mode is off."""
    why = (
        "turned off by the program after numerix turned it on"
        if _turned_on
        else f"as {_SETTING} = false ({_VARIABLE}=0) leaves it"
    )
    return UnsupportedDTypeError(
        f"{op}: backend {backend!r} cannot hold {dtype} tensors while JAX's 64-bit mode "
        f"(jax_enable_x64) is off, {why}; set {_SETTING} = true in numerix.toml (or "
        f"{_VARIABLE}=1) to let numerix turn it on, or use a 32-bit dtype "
        f"(x.astype(numerix.float32))"
    )


_QUIET = (
    # numerix's own folder (dtypes is one of its modules)
    os.path.join(os.path.dirname(os.path.abspath(dtypes.__file__)), ""),
    os.path.join(os.path.dirname(os.path.abspath(importlib.__file__)), ""),
    os.path.join(os.path.dirname(os.path.abspath(__file__)), ""),
    os.path.abspath(contextlib.__file__),
    "<frozen importlib",
    "<numerix program",
)


def _warn_at_user(message: str, category: type[Warning]) -> None:
    # the user's line is the first frame outside numerix, numerix_xla, importlib,
    # contextlib (numerix's context managers run their code in its frames) and the
    # programs jit generates (exec'd in namespaces without __name__); warn_explicit, as
    # warnings.warn's stacklevel counts frames without skipping any
    frame = sys._getframe(0)
    while frame.f_back is not None and (
        frame.f_code.co_filename.startswith(_QUIET) or "__name__" not in frame.f_globals
    ):
        frame = frame.f_back
    g = frame.f_globals
    warnings.warn_explicit(
        message, category, frame.f_code.co_filename, frame.f_lineno, g.get("__name__"),
        g.setdefault("__warningregistry__", {}),
    )  # fmt: skip
