"""Frozen value objects for the classes ``import numerix`` defines.

A frozen dataclass costs about half a millisecond to create (its methods are written
as source and compiled), and ``dataclasses`` itself a millisecond to import: on the
path of the first op, the low layer's few value classes (an option, a plugin entry, a
primitive's declaration) cost more than the rest of their modules. :class:`Frozen` gives
them what the dataclass gave: fields that cannot be reassigned, equality, a hash and a
repr by fields, and :meth:`Frozen.replace`. Each class writes its ``__init__`` (typed,
so mypy checks every construction) and stores its fields with ``_set``.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = ["Frozen"]


class Frozen:
    """Base of a value class with ``__slots__`` as its fields.

    - The fields are the parameters of ``__init__``, in its order, each stored in a slot
      of the same name: ``repr`` shows them, :meth:`replace` passes them back by name.
    - ``_compare`` names the fields equality and the hash use (default: every field).
    - Assigning a field after ``__init__`` raises ``AttributeError``.
    """

    __slots__ = ()
    _compare: ClassVar[tuple[str, ...] | None] = None

    def _set(self, **fields: Any) -> None:
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    @classmethod
    def _fields(cls) -> tuple[str, ...]:
        code = cls.__init__.__code__
        return code.co_varnames[1 : code.co_argcount + code.co_kwonlyargcount]

    def _key(self) -> tuple[Any, ...]:
        names = self._compare if self._compare is not None else self._fields()
        return tuple(getattr(self, n) for n in names)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot assign {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields())
        return f"{type(self).__name__}({shown})"

    def replace(self, **changes: Any) -> Any:
        """A copy with ``changes`` (field name → value), built by ``__init__``."""
        unknown = set(changes) - set(self._fields())
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {sorted(unknown)[0]!r}")
        values = {n: getattr(self, n) for n in self._fields()}
        values.update(changes)
        return type(self)(**values)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), {n: getattr(self, n) for n in self._fields()}))


def _rebuild(cls: type[Any], fields: dict[str, Any]) -> Any:
    obj = object.__new__(cls)
    for name, value in fields.items():
        object.__setattr__(obj, name, value)
    return obj
