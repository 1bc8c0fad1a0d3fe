"""``tools.records.datarecord`` behaves as ``@dataclass`` does: each case builds the same class body
with both decorators and compares what the two classes do."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import InitVar, dataclass, field
from typing import Any, ClassVar

import pytest

from tools.records import datarecord

OPTIONS = [
    {},
    {"frozen": True},
    {"slots": True},
    {"frozen": True, "slots": True},
    {"kw_only": True},
]


def _pair(body: dict[str, Any], **options: Any) -> tuple[type, type]:
    """The same class body under ``@dataclass`` and under ``@datarecord``."""

    def make(decorate: Any) -> type:
        namespace = dict(body)
        namespace["__annotations__"] = dict(body["__annotations__"])
        return decorate(**options)(type("Point", (), namespace))

    return make(dataclass), make(datarecord)


def _body() -> dict[str, Any]:
    return {
        "__annotations__": {"a": int, "b": str, "c": list, "d": float, "kind": ClassVar[str]},
        "b": "x",
        "c": field(default_factory=list, compare=False, repr=False),
        "d": field(default=1.0, hash=False),
        "kind": "point",
    }


def _build(cls: type, options: dict[str, Any], a: int = 1, **kw: Any) -> Any:
    return cls(a=a, **kw) if options.get("kw_only") else cls(a, **kw)


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_equality_hash_and_repr_match_the_dataclass(options: dict[str, Any]) -> None:
    std, rec = _pair(_body(), **options)
    s, r = _build(std, options), _build(rec, options)
    assert repr(s) == repr(r) == "Point(a=1, b='x', d=1.0)"
    assert (s == _build(std, options)) and (r == _build(rec, options))
    assert (s == _build(std, options, a=2)) == (r == _build(rec, options, a=2)) is False
    # c is not compared; d is compared
    assert r == _build(rec, options, c=[1]) and r != _build(rec, options, d=2.0)
    assert r.__eq__(object()) is NotImplemented and (r == s) is False
    assert (std.__hash__ is None) == (rec.__hash__ is None) == (not options.get("frozen"))
    if options.get("frozen"):
        # d is compared but not hashed: equal objects, equal hashes; same value as @dataclass
        assert hash(s) == hash(r) == hash(_build(rec, options, d=2.0))
    assert getattr(std, "__match_args__") == getattr(rec, "__match_args__")  # noqa: B009
    assert [f.name for f in dataclasses.fields(std)] == [f.name for f in dataclasses.fields(rec)]
    assert rec.__eq__.__qualname__ == "Point.__eq__" and rec.__repr__.__qualname__.endswith(
        "Point.__repr__"
    )


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_the_stdlib_helpers_work_on_a_record(options: dict[str, Any]) -> None:
    std, rec = _pair(_body(), **options)
    r: Any = _build(rec, options, c=[3])
    assert dataclasses.is_dataclass(r) and not isinstance(r, type)
    assert dataclasses.asdict(r) == dataclasses.asdict(_build(std, options, c=[3]))
    assert dataclasses.replace(r, a=5) == _build(rec, options, a=5, c=[3])
    assert copy.deepcopy(r) == r and copy.deepcopy(r) is not r
    if options.get("slots"):
        assert not hasattr(r, "__dict__")


def test_a_frozen_record_refuses_assignment() -> None:
    @datarecord(frozen=True)
    class Frozen:
        a: int

    @datarecord(frozen=True, slots=True)
    class FrozenSlots:
        a: int

    for cls in (Frozen, FrozenSlots):
        _refuses_assignment(cls)


def _refuses_assignment(cls: Any) -> None:
    f = cls(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.a = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del f.a  # type: ignore[misc]
    assert {f, cls(1)} == {cls(1)}


def test_methods_the_class_defines_are_kept_as_the_dataclass_keeps_them() -> None:
    def custom_repr(self: Any) -> str:
        return "custom"

    def same(self: Any, other: Any) -> bool:
        return True

    for options in ({}, {"frozen": True}):
        std, rec = _pair({"__annotations__": {"a": int}, "__repr__": custom_repr}, **options)
        assert repr(rec(1)) == repr(std(1)) == "custom"
        # a body with __eq__ alone: Python sets __hash__ = None, which is not an explicit hash,
        # so a frozen dataclass still gets its field hash
        std, rec = _pair({"__annotations__": {"a": int}, "__eq__": same}, **options)
        assert rec(1) == rec(2) and std(1) == std(2)
        assert (std.__hash__ is None) == (rec.__hash__ is None) == (not options)
        if options:
            assert hash(rec(1)) == hash(std(1))
        std, rec = _pair({"__annotations__": {"a": int}, "__hash__": lambda self: 7}, **options)
        assert hash(rec(1)) == hash(std(1)) == 7


def test_init_vars_post_init_and_inheritance() -> None:
    @datarecord(frozen=True)
    class Base:
        a: int
        scale: InitVar[int] = 1
        b: int = field(init=False, default=0)

        def __post_init__(self, scale: int) -> None:
            object.__setattr__(self, "b", self.a * scale)

    @dataclass(frozen=True)
    class Child(Base):  # a plain dataclass on a datarecord base
        c: int = 0

    @datarecord(frozen=True)
    class Other(Base):
        c: int = 0

    assert Base(2, 3) == Base(2, 3) != Base(2) and Base(2, 3).b == 6
    assert repr(Base(2, 3)).endswith(".Base(a=2, b=6)")
    assert Child(1, 2, 3) == Child(1, 2, 3) and Child(1) != Base(1)
    assert Other(1, c=2) == Other(1, c=2) and Other(1) != Base(1)
    assert repr(Other(1, c=2)) == repr(Child(1, c=2)).replace("Child", "Other")


@datarecord(frozen=True, slots=True)
class Pickled:
    a: int
    b: tuple[str, ...] = ()


def test_a_record_pickles() -> None:
    r = Pickled(1, ("x",))
    assert pickle.loads(pickle.dumps(r)) == r


def test_a_recursive_repr_is_cut_as_the_dataclass_cuts_it() -> None:
    std, rec = _pair({"__annotations__": {"items": list}})
    s, r = std([]), rec([])
    s.items.append(s)
    r.items.append(r)
    assert repr(r) == repr(s) == "Point(items=[...])"
