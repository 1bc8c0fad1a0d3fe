"""``datarecord``: ``@dataclass`` whose ``__eq__``, ``__hash__`` and ``__repr__`` are not compiled.

For each class, the stdlib's ``@dataclass`` writes every method it adds as source text and
compiles it (``exec``): ~0.1 ms a method, six for a frozen class, and ``nerve -p`` defines ~160
dataclasses of our own before its first request (compiling their methods was about a quarter
of the instructions it ran). Only ``__init__`` (and a frozen class's ``__setattr__`` and
``__delattr__``) differ from class to class; equality, the hash and the repr do the same thing
for every class, over its fields. ``datarecord`` has ``dataclasses.dataclass`` build the class
without them (``eq=False, repr=False``) and adds shared ones that behave as the generated ones:

* ``__eq__``: ``NotImplemented`` unless ``other.__class__ is self.__class__``, else the tuples
  of the ``compare`` fields compared;
* ``__hash__``: for a frozen class the hash of the tuple of its hashed fields (``hash=`` or
  else ``compare``), for another class ``None`` (unhashable), as ``@dataclass`` decides with
  ``eq=True`` and ``unsafe_hash=False``;
* ``__repr__``: ``Qualname(field=value!r, ...)`` over the ``repr`` fields, ``...`` on recursion.

A method the class body defines itself is kept, as ``@dataclass`` keeps it. The class is a
real dataclass: ``fields``, ``replace``, ``asdict`` and ``__match_args__`` are the stdlib's;
only ``__dataclass_params__`` says ``eq=False, repr=False``. For ``tools`` and ``agent_cli``
(``permissions`` and ``config`` sit below this package and keep ``@dataclass``); importing it
imports nothing of ours. ``tests/tools/test_records.py`` checks each behaviour against
``@dataclass``'s.
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar, cast, dataclass_transform, overload

__all__ = ["datarecord"]

T = TypeVar("T", bound=type)


@overload
def datarecord(cls: T, /) -> T: ...


@overload
def datarecord(
    *, frozen: bool = False, slots: bool = False, kw_only: bool = False
) -> Callable[[T], T]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def datarecord(
    cls: T | None = None, /, *, frozen: bool = False, slots: bool = False, kw_only: bool = False
) -> T | Callable[[T], T]:
    """``@dataclass(frozen=..., slots=..., kw_only=...)`` with shared eq, hash and repr."""

    def wrap(cls: T) -> T:
        own = _Own(cls.__dict__)
        made: type = dataclasses.dataclass(
            cls, frozen=frozen, slots=slots, kw_only=kw_only, eq=False, repr=False
        )
        _add_methods(made, own, frozen)
        return cast(T, made)

    return wrap if cls is None else wrap(cls)


class _Own:
    """Which of the methods the class body defines itself, read as ``@dataclass`` reads it (a
    body that defines ``__eq__`` alone gets ``__hash__ = None`` from Python: not explicit)."""

    def __init__(self, namespace: Any) -> None:
        self.eq = "__eq__" in namespace
        self.repr = "__repr__" in namespace
        class_hash = namespace.get("__hash__", dataclasses.MISSING)
        self.hash = not (
            class_hash is dataclasses.MISSING or (class_hash is None and "__eq__" in namespace)
        )


def _add_methods(cls: type, own: _Own, frozen: bool) -> None:
    fields = dataclasses.fields(cls)
    if not own.eq:
        _set(cls, "__eq__", _eq(tuple(f.name for f in fields if f.compare)))
    if not own.hash:
        hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
        _set(cls, "__hash__", _hash(hashed) if frozen else None)
    if not own.repr:
        _set(cls, "__repr__", _repr(tuple(f.name for f in fields if f.repr)))


def _set(cls: type, name: str, method: Any) -> None:
    if method is not None:
        method.__qualname__ = f"{cls.__qualname__}.{name}"
    setattr(cls, name, method)


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of an object's values of ``names``, as ``(self.a, self.b,)`` makes it."""
    if len(names) > 1:
        return attrgetter(*names)  # a tuple for two names or more
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _eq(names: tuple[str, ...]) -> Callable[[Any, Any], Any]:
    values = _values(names)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return __eq__


def _hash(names: tuple[str, ...]) -> Callable[[Any], int]:
    values = _values(names)

    def __hash__(self: Any) -> int:
        return hash(values(self))

    return __hash__


def _repr(names: tuple[str, ...]) -> Callable[[Any], str]:
    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        shown = ", ".join([f"{name}={getattr(self, name)!r}" for name in names])
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__
