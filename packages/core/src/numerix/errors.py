"""The numerix error hierarchy.

Every error numerix raises on bad input is a :class:`NumerixError`. Messages
name the operation, the offending operands (shape, dtype, backend, device) and
the fix.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "NumerixError",
    "ShapeError",
    "OutOfMemoryError",
    "DTypeError",
    "BackendMismatchError",
    "DeallocatedError",
    "UnsupportedDTypeError",
    "BackendNotFoundError",
    "BackendOptionError",
    "PluginError",
    "ConfigError",
    "IndexingError",
    "ArgumentError",
    "FileFormatError",
    "TracingError",
    "NumpyFunctionError",
    "RuleCheckError",
    "clip_long_words",
    "close_name",
]

#: A run of non-space characters longer than this is cut in messages that echo values.
LONG_WORD = 120
#: compiled on the first message long enough to hold such a run (``re``'s own cache)
_LONG = rf"\S{{{LONG_WORD + 1},}}"


def close_name(name: object, names: Iterable[object], cutoff: float = 0.6) -> str:
    """``"; did you mean 'binary'?"`` when ``name`` is close to one of ``names``, else ``""``."""
    if not isinstance(name, str):
        return ""
    import difflib  # for error messages only: loaded when one is made, not with numerix

    close = difflib.get_close_matches(name, [str(n) for n in names], n=1, cutoff=cutoff)
    return f"; did you mean {close[0]!r}?" if close else ""


def clip_long_words(text: str) -> str:
    """``text`` with every run of more than :data:`LONG_WORD` non-space characters cut
    to its first 60 and a count, so that a value echoed from the environment or a file
    cannot flood a message or a table."""

    def cut(m: re.Match[str]) -> str:
        w = m.group(0)
        return f"{w[:60]}…({len(w)} characters)"

    if len(text) <= LONG_WORD:
        return text
    return re.sub(_LONG, cut, text)


class NumerixError(Exception):
    """Base class of every error numerix raises on bad input.

    A value the message echoes (from the environment, a file, an argument) is cut when
    it is very long (:func:`clip_long_words`).
    """

    def __init__(self, *args: object) -> None:
        super().__init__(*_clipped(args))


class ShapeError(NumerixError, ValueError):
    """Shapes that an operation cannot combine, or an axis out of range."""


class AxisError(ShapeError, IndexError):
    """An axis out of range for a tensor's dimensions: a :class:`ShapeError` and, as
    numpy's ``AxisError`` and the array API say, an ``IndexError``."""


class OutOfMemoryError(ShapeError, MemoryError):
    """A tensor larger than the memory of the machine or device that would hold it."""


class DTypeError(NumerixError, TypeError):
    """A dtype an operation does not accept, or a promotion that would lose data."""


class BackendMismatchError(NumerixError, ValueError):
    """Operands living on different backends or devices that cannot be combined implicitly."""


class DeallocatedError(NumerixError, RuntimeError):
    """A tensor used after ``numerix.backend_deallocate`` freed its data (eagerly, as an
    argument of a compiled program, or captured by one)."""


class UnsupportedDTypeError(DTypeError):
    """A backend that cannot hold or compute a dtype (it never narrows silently)."""


class BackendNotFoundError(NumerixError, LookupError):
    """A backend name that no installed plugin provides."""


class BackendOptionError(NumerixError, TypeError):
    """An option a backend does not take, or a value it refuses."""


class PluginError(NumerixError, RuntimeError):
    """A plugin that failed to load or declares an incompatible contract."""


class ConfigError(NumerixError, ValueError):
    """Malformed or invalid configuration."""


def _clipped(args: tuple[object, ...]) -> tuple[object, ...]:
    return tuple(clip_long_words(a) if isinstance(a, str) else a for a in args)


class IndexingError(NumerixError, IndexError):
    """An index out of bounds, of the wrong type, or too many indices."""


class ArgumentError(NumerixError, ValueError):
    """An argument value an operation does not take: an unknown mode, order or norm."""


class FileFormatError(NumerixError, ValueError):
    """A file numerix cannot read as the format its name or magic number says: a corrupt
    header, truncated data, sizes that disagree, a dtype numerix does not hold. The
    message names the file and what is wrong; no tensor of the file is returned."""


class TracingError(NumerixError, TypeError):
    """A traced tensor used where a value is needed (``bool()``, ``if``, ``.item()``) inside
    ``numerix.jit``/``defn``, or a traced function that breaks the rules of tracing."""


class NumpyFunctionError(NumerixError, TypeError):
    """A numpy function or ufunc called on a tensor that numerix does not carry out, or
    with a keyword it does not take (``out=``): the message names the numerix function
    to call, or ``np.asarray(t)`` for an explicit copy to numpy."""


class RuleCheckError(NumerixError, RuntimeError):
    """A kernel whose result differs from its primitive's shape and dtype rules, or an op
    that built its output differently from them: raised only while the rule check is on
    (``[debug] check_rules``, which the conformance kit turns on). The message names the
    primitive, the backend, the inputs and what differs."""


def first_line(e: BaseException) -> str:
    """The first line of ``e``'s message, or its type's name when it has none: what an
    error of numerix quotes of a library's error beneath it."""
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
