"""The registry: every tool that can exist, the pool for one request, and the API tool list.

``get_all_base_tools`` imports each built-in module by name (each exposes ``TOOLS``); tools
behind feature flags are imported only when their flag is on, so a disabled tool costs nothing
and cannot break start-up. ``assemble_tool_pool`` filters and orders: built-ins sorted by name,
then MCP tools sorted by name, so adding an MCP server never shifts the built-ins and the
prompt-cache breakpoint after the last built-in stays valid.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from permissions.engine import tool_name_matches
from permissions.types import PermissionContext, PermissionRequest, RuleBehavior
from tools.base import Tool

__all__ = [
    "BASE_TOOL_MODULES",
    "FEATURE_TOOLS",
    "assemble_tool_pool",
    "get_all_base_tools",
    "is_denied_outright",
    "tools_for_api",
]

# Always-present built-ins, one module each (each exposes ``TOOLS: tuple[Tool, ...]``).
BASE_TOOL_MODULES: tuple[str, ...] = (
    "tools.builtin.bash",
    "tools.builtin.tasks",
    "tools.builtin.read",
    "tools.builtin.edit",
    "tools.builtin.write",
    "tools.builtin.glob",
    "tools.builtin.grep",
    "tools.builtin.notebook_edit",
    "tools.builtin.tool_search",
    "tools.builtin.agent",
    "tools.builtin.plan_mode",
    "tools.builtin.todo",
    "tools.builtin.web_fetch",
    "tools.builtin.web_search",
    "tools.builtin.ask_user",
    "tools.builtin.worktree",
    "tools.builtin.skill",
)

# Tools behind a feature flag: imported only when ``flags[flag]`` is true.
FEATURE_TOOLS: dict[str, str] = {}

_CACHE_CONTROL = {"type": "ephemeral"}


def _import_tools(module_name: str) -> tuple[Tool[Any], ...]:
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        # Only "this module is not written yet" is skipped; a missing dependency *inside* an
        # existing module is a real error and must surface.
        if exc.name == module_name:
            return ()
        raise
    tools = getattr(module, "TOOLS", None)
    if not isinstance(tools, tuple) or not all(isinstance(t, Tool) for t in tools):
        raise TypeError(f"{module_name}.TOOLS must be a tuple of Tool")
    return tools


def get_all_base_tools(flags: Mapping[str, bool] | None = None) -> list[Tool[Any]]:
    """Every built-in tool of this process: base modules first, then flagged ones that are on.

    Raises ``ValueError`` if two modules define the same tool name (a bug, caught at start-up).
    """
    flags = flags or {}
    modules = list(BASE_TOOL_MODULES)
    modules += [module for flag, module in FEATURE_TOOLS.items() if flags.get(flag)]
    seen: dict[str, str] = {}
    out: list[Tool[Any]] = []
    for module_name in modules:
        for tool in _import_tools(module_name):
            for name in tool.all_names:
                if name in seen:
                    raise ValueError(
                        f"tool name {name!r} defined by both {seen[name]} and {module_name}"
                    )
                seen[name] = module_name
            out.append(tool)
    return out


def is_denied_outright(tool: Tool[Any], ctx: PermissionContext) -> bool:
    """A bare deny rule (no content) covers the tool by name, alias, glob or MCP server."""
    for rule in ctx.rules:
        if rule.behavior is not RuleBehavior.DENY or rule.value.content is not None:
            continue
        for name in tool.all_names:
            request = PermissionRequest(
                tool_name=name, kind=tool.permission_kind, is_mcp=tool.is_mcp
            )
            if tool_name_matches(rule, request):
                return True
    return False


def assemble_tool_pool(
    base_tools: Iterable[Tool[Any]],
    mcp_tools: Iterable[Tool[Any]],
    ctx_permissions: PermissionContext,
) -> list[Tool[Any]]:
    """Enabled, not denied outright; built-ins sorted by name, then MCP tools sorted by name.

    A built-in name wins over an MCP tool of the same name (the MCP one is dropped).
    """
    builtins = sorted(
        (t for t in base_tools if _enabled(t) and not is_denied_outright(t, ctx_permissions)),
        key=lambda t: t.name,
    )
    taken = {name for t in builtins for name in t.all_names}
    mcp = sorted(
        (
            t
            for t in mcp_tools
            if t.name not in taken and _enabled(t) and not is_denied_outright(t, ctx_permissions)
        ),
        key=lambda t: t.name,
    )
    return [*builtins, *mcp]


def _enabled(tool: Tool[Any]) -> bool:
    try:
        return bool(tool.is_enabled())
    except Exception:
        return False  # a tool that cannot tell whether it is enabled is not offered


def tools_for_api(
    pool: Sequence[Tool[Any]], loaded_deferred: Iterable[str] = ()
) -> list[dict[str, Any]]:
    """The ``tools`` array of a Messages API request.

    Deferred tools not yet loaded by ToolSearch go by name only. The cache breakpoint is on the
    last built-in sent in full (deferred entries are not part of the cached prefix), so the built-in
    prefix — and its cache — is identical whatever MCP tools follow.
    """
    loaded = frozenset(loaded_deferred)
    # Without ToolSearch (``--tools`` left it out) nothing could load a deferred tool: send all.
    searchable = any(t.name == "ToolSearch" for t in pool)
    specs: list[dict[str, Any]] = []
    last_builtin = -1
    for tool in pool:
        deferred = searchable and tool.should_defer and tool.name not in loaded
        specs.append(tool.api_schema(deferred=deferred))
        if not tool.is_mcp and not deferred:
            last_builtin = len(specs) - 1
    if last_builtin >= 0:
        specs[last_builtin] = {**specs[last_builtin], "cache_control": dict(_CACHE_CONTROL)}
    return specs
