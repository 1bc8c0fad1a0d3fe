"""The tool contract and ``build_tool``: a definition (``ToolSpec``) laid over fail-closed
defaults.

A tool defined with only a name, an input model and ``call`` is: enabled, NOT read-only,
NOT concurrency-safe, NOT destructive, not deferred, with a finite result limit, and its own
permission check says "no objection" (the general engine has already judged). So it runs
serially and asks before it runs.

Traits (``is_read_only``, ``is_concurrency_safe``, ``is_destructive``) may be given as a value
or as a function of the parsed input; ``build_tool`` normalises both to functions.
"""

from __future__ import annotations

import copy
import inspect
import math
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import field
from pathlib import Path
from typing import Any, Generic, TypedDict, TypeVar, Unpack

from pydantic import BaseModel

from permissions.types import ToolKind, Verdict
from tools.context import ToolUseContext
from tools.messages import ResultBlock
from tools.records import datarecord
from tools.result import ToolResult, ValidationError

__all__ = [
    "DEFAULT_MAX_RESULT_CHARS",
    "ProgressFn",
    "Tool",
    "ToolSpec",
    "build_tool",
    "default_to_content",
    "empty_list",
]

DEFAULT_MAX_RESULT_CHARS = 50_000

InT = TypeVar("InT", bound=BaseModel)
ProgressFn = Callable[[Any], None]
Trait = bool | Callable[[Any], bool]


def empty_list() -> list[Any]:
    """``Field(default_factory=empty_list)`` in tool models, not ``default_factory=list``:
    pydantic reads a factory's signature, and a builtin's is parsed with ``tokenize``, whose
    first use compiles a large regex (~8 ms of every start-up)."""
    return []


def _const(value: bool) -> Callable[[Any], bool]:
    def trait(_input: Any) -> bool:
        return value

    return trait


def _as_trait(value: Trait) -> Callable[[Any], bool]:
    return value if callable(value) else _const(bool(value))


def default_to_content(data: Any) -> str | list[ResultBlock]:
    """Serialise a tool's data into tool_result content: strings pass, models become JSON."""
    if isinstance(data, str):
        return data
    if isinstance(data, list) and all(isinstance(b, dict) and "type" in b for b in data):
        return data
    if isinstance(data, BaseModel):
        return data.model_dump_json(exclude_none=True)
    import json

    return json.dumps(data, ensure_ascii=False, default=str)


async def _no_objection(_input: Any, _ctx: ToolUseContext) -> Verdict | None:
    return None


async def _no_validation(_input: Any, _ctx: ToolUseContext) -> ValidationError | None:
    return None


def _no_paths(_input: Any, _ctx: ToolUseContext) -> tuple[Path, ...]:
    return ()


def _identity_backfill(inp: Any, _ctx: ToolUseContext) -> Any:
    return inp


def _always_enabled() -> bool:
    return True


@datarecord(frozen=True)
class Tool(Generic[InT]):
    """A built tool. Create with :func:`build_tool`, never directly."""

    name: str
    input_model: type[InT]
    call: Callable[[InT, ToolUseContext, ProgressFn], Awaitable[ToolResult]]
    description: str = ""
    aliases: tuple[str, ...] = ()
    search_hint: str = ""
    # traits (normalised to functions of the parsed input)
    is_read_only: Callable[[InT], bool] = field(default=_const(False))
    is_concurrency_safe: Callable[[InT], bool] = field(default=_const(False))
    is_destructive: Callable[[InT], bool] = field(default=_const(False))
    is_enabled: Callable[[], bool] = _always_enabled
    should_defer: bool = False
    is_mcp: bool = False
    max_result_size_chars: float = DEFAULT_MAX_RESULT_CHARS
    # validation and permissions
    validate_input: Callable[[InT, ToolUseContext], Awaitable[ValidationError | None]] = (
        _no_validation
    )
    check_permissions: Callable[[InT, ToolUseContext], Awaitable[Verdict | None]] = _no_objection
    permission_kind: ToolKind = ToolKind.GENERIC
    permission_paths: Callable[[InT, ToolUseContext], tuple[Path, ...]] = _no_paths
    backfill_input: Callable[[InT, ToolUseContext], InT] = _identity_backfill
    # presentation
    to_content: Callable[[Any], str | list[ResultBlock]] = default_to_content
    render_call: Callable[[InT], str] | None = None
    render_progress: Callable[[Any], str] | None = None
    render_result: Callable[[Any], str] | None = None
    input_schema_override: dict[str, Any] | None = None  # MCP tools bring their own schema
    # Before a permission prompt: a preview for the user (a diff, the sed result) and the input
    # to run if the user approves (e.g. Bash with ``_simulated_sed_edit`` attached).
    prepare_prompt: (
        Callable[[InT, ToolUseContext], Awaitable[tuple[str | None, InT | None]]] | None
    ) = None

    @property
    def all_names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    def input_schema(self) -> dict[str, Any]:
        if self.input_schema_override is not None:
            return self.input_schema_override
        return copy.deepcopy(_model_schema(self.input_model))

    def api_schema(self, *, deferred: bool = False) -> dict[str, Any]:
        """The tool as sent to the Messages API (name and description only when deferred)."""
        spec: dict[str, Any] = {"name": self.name, "description": self.description}
        if deferred:
            spec["input_schema"] = {"type": "object", "properties": {}}
            spec["defer_loading"] = True
        else:
            spec["input_schema"] = self.input_schema()
        return spec

    def describe_call(self, inp: InT) -> str:
        """A one-line header such as ``Bash(git status)``."""
        if self.render_call is not None:
            return f"{self.name}({self.render_call(inp)})"
        return self.name


# JSON schema of each input model, built once per process: pydantic's schema generation costs
# ~1 ms a tool and the tools array is rebuilt for every model request.
_SCHEMAS: weakref.WeakKeyDictionary[type[BaseModel], dict[str, Any]] = weakref.WeakKeyDictionary()


def _model_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = _SCHEMAS.get(model)
    if schema is None:
        schema = model.model_json_schema()
        schema.pop("title", None)
        _SCHEMAS[model] = schema
    return schema


def _as_async(fn: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    if inspect.iscoroutinefunction(fn):
        return fn

    async def wrapper(*args: Any) -> Any:
        return fn(*args)

    wrapper.__name__ = getattr(fn, "__name__", "wrapper")
    return wrapper


class _ToolRequired(TypedDict, Generic[InT]):
    name: str
    input_model: type[InT]
    call: Callable[[InT, ToolUseContext, ProgressFn], Awaitable[ToolResult]]


class ToolSpec(_ToolRequired[InT], total=False):
    """What ``build_tool`` takes: ``name``, ``input_model`` and ``call``, then any of these
    (each left out takes the fail-closed default of the module docstring)."""

    description: str
    aliases: tuple[str, ...] | list[str]
    search_hint: str
    is_read_only: Trait
    is_concurrency_safe: Trait
    is_destructive: Trait
    is_enabled: Callable[[], bool] | bool
    should_defer: bool
    is_mcp: bool
    max_result_size_chars: float | None  # None: unlimited (only Read, which limits itself)
    validate_input: Callable[[InT, ToolUseContext], Any] | None  # sync or async
    check_permissions: Callable[[InT, ToolUseContext], Any] | None  # sync or async
    permission_kind: ToolKind
    permission_paths: Callable[[InT, ToolUseContext], tuple[Path, ...]] | None
    backfill_input: Callable[[InT, ToolUseContext], InT] | None
    to_content: Callable[[Any], str | list[ResultBlock]] | None
    render_call: Callable[[InT], str] | None
    render_progress: Callable[[Any], str] | None
    render_result: Callable[[Any], str] | None
    input_schema_override: dict[str, Any] | None
    prepare_prompt: Callable[[InT, ToolUseContext], Any] | None


_SPEC_KEYS = ToolSpec.__required_keys__ | ToolSpec.__optional_keys__


def _check_spec(spec: Mapping[str, Any]) -> None:
    """What mypy checks at each call site, checked again for callers it does not see: a
    misspelt key must not quietly leave a default (a permission check) in its place."""
    unknown = sorted(spec.keys() - _SPEC_KEYS)
    if unknown:
        raise TypeError(f"build_tool() got unexpected keyword arguments: {', '.join(unknown)}")
    missing = sorted(ToolSpec.__required_keys__ - spec.keys())
    if missing:
        raise TypeError(f"build_tool() missing keyword arguments: {', '.join(missing)}")
    name = spec["name"]
    if not name or not name.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"invalid tool name {name!r}")


def _result_limit(max_result_size_chars: float | None) -> float:
    limit = math.inf if max_result_size_chars is None else float(max_result_size_chars)
    if limit <= 0:
        raise ValueError("max_result_size_chars must be positive")
    return limit


def _as_enabled(is_enabled: Callable[[], bool] | bool) -> Callable[[], bool]:
    if callable(is_enabled):
        return is_enabled
    value = bool(is_enabled)

    def enabled() -> bool:
        return value

    return enabled


def _async_or(
    fn: Callable[..., Any] | None, default: Callable[..., Awaitable[Any]]
) -> Callable[..., Awaitable[Any]]:
    return _as_async(fn) if fn else default


def build_tool(**spec: Unpack[ToolSpec[InT]]) -> Tool[InT]:
    """Lay a tool definition (a :class:`ToolSpec`) over the fail-closed defaults (see the
    module docstring). Keyword arguments, so each call reads as a definition; typed by a
    ``TypedDict`` so mypy checks every key and value at every call site."""
    _check_spec(spec)
    prepare_prompt = spec.get("prepare_prompt")
    return Tool(
        name=spec["name"],
        input_model=spec["input_model"],
        call=spec["call"],
        description=spec.get("description", ""),
        aliases=tuple(spec.get("aliases", ())),
        search_hint=spec.get("search_hint", ""),
        is_read_only=_as_trait(spec.get("is_read_only", False)),
        is_concurrency_safe=_as_trait(spec.get("is_concurrency_safe", False)),
        is_destructive=_as_trait(spec.get("is_destructive", False)),
        is_enabled=_as_enabled(spec.get("is_enabled", True)),
        should_defer=spec.get("should_defer", False),
        is_mcp=spec.get("is_mcp", False),
        max_result_size_chars=_result_limit(
            spec.get("max_result_size_chars", DEFAULT_MAX_RESULT_CHARS)
        ),
        validate_input=_async_or(spec.get("validate_input"), _no_validation),
        check_permissions=_async_or(spec.get("check_permissions"), _no_objection),
        permission_kind=spec.get("permission_kind", ToolKind.GENERIC),
        permission_paths=spec.get("permission_paths") or _no_paths,
        backfill_input=spec.get("backfill_input") or _identity_backfill,
        to_content=spec.get("to_content") or default_to_content,
        render_call=spec.get("render_call"),
        render_progress=spec.get("render_progress"),
        render_result=spec.get("render_result"),
        input_schema_override=spec.get("input_schema_override"),
        prepare_prompt=_as_async(prepare_prompt) if prepare_prompt else None,
    )
