"""The registry: base tools, feature flags, the pool, the API tool list and its cache prefix."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from permissions.types import PermissionContext
from tests.tools.pipeline_helpers import read_only_tool, rules, simple_tool
from tools import registry
from tools.base import Tool


@pytest.fixture
def fake_pkg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A throwaway package ``nerve_fake_tools`` importable for this test only."""
    pkg = tmp_path / "nerve_fake_tools"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield pkg
    for name in [m for m in sys.modules if m.startswith("nerve_fake_tools")]:
        del sys.modules[name]


def test_base_tools_include_tool_search_and_have_unique_names() -> None:
    tools = registry.get_all_base_tools()
    names = [n for t in tools for n in t.all_names]
    assert "ToolSearch" in names
    assert len(names) == len(set(names))


def test_missing_module_is_skipped_but_broken_module_propagates(
    fake_pkg: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (fake_pkg / "broken.py").write_text("import nerve_no_such_dependency_xyz\n")
    monkeypatch.setattr(
        registry,
        "BASE_TOOL_MODULES",
        ("tools.builtin.tool_search", "nerve_fake_tools.not_written_yet"),
    )
    assert [t.name for t in registry.get_all_base_tools()] == ["ToolSearch"]
    monkeypatch.setattr(
        registry, "BASE_TOOL_MODULES", ("tools.builtin.tool_search", "nerve_fake_tools.broken")
    )
    with pytest.raises(ModuleNotFoundError) as err:
        registry.get_all_base_tools()
    assert err.value.name == "nerve_no_such_dependency_xyz"


def test_flagged_module_is_imported_only_when_its_flag_is_on(
    fake_pkg: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (fake_pkg / "explosive.py").write_text("raise RuntimeError('imported while flag off')\n")
    monkeypatch.setattr(registry, "BASE_TOOL_MODULES", ("tools.builtin.tool_search",))
    monkeypatch.setitem(registry.FEATURE_TOOLS, "explosive", "nerve_fake_tools.explosive")
    assert [t.name for t in registry.get_all_base_tools({"explosive": False})] == ["ToolSearch"]
    assert "nerve_fake_tools.explosive" not in sys.modules
    with pytest.raises(RuntimeError, match="imported while flag off"):
        registry.get_all_base_tools({"explosive": True})


def test_flagged_tools_join_when_on(fake_pkg: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (fake_pkg / "extra.py").write_text(
        "from tests.tools.pipeline_helpers import read_only_tool\n"
        "TOOLS = (read_only_tool('Extra'),)\n"
    )
    monkeypatch.setattr(registry, "BASE_TOOL_MODULES", ("tools.builtin.tool_search",))
    monkeypatch.setitem(registry.FEATURE_TOOLS, "extra", "nerve_fake_tools.extra")
    names = [t.name for t in registry.get_all_base_tools({"extra": True})]
    assert names == ["ToolSearch", "Extra"]


def test_duplicate_names_fail_loudly(fake_pkg: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (fake_pkg / "dup.py").write_text(
        "from tests.tools.pipeline_helpers import read_only_tool\n"
        "TOOLS = (read_only_tool('ToolSearch'),)\n"
    )
    monkeypatch.setattr(
        registry, "BASE_TOOL_MODULES", ("tools.builtin.tool_search", "nerve_fake_tools.dup")
    )
    with pytest.raises(ValueError, match="ToolSearch"):
        registry.get_all_base_tools()


def _mcp(name: str, **kw: Any) -> Tool[Any]:
    return read_only_tool(name, is_mcp=True, **kw)


def test_pool_filters_and_orders() -> None:
    base = [
        simple_tool("Write"),
        simple_tool("Bash"),
        read_only_tool("Agent", aliases=("Task",)),
        read_only_tool("Glob"),
        read_only_tool("Off", is_enabled=False),
    ]
    mcp = [
        _mcp("mcp__zeta__b"),
        _mcp("mcp__srv__a"),
        _mcp("mcp__srv__b"),
        _mcp("mcp__other__x"),
        _mcp("mcp__alpha__a"),
        _mcp("mcp__third__t"),
        _mcp("mcp__third__u"),
    ]
    ctx = PermissionContext(
        rules=rules(
            ("Bash", "deny"),
            ("Task", "deny"),  # legacy name of Agent: drops it by alias
            ("Write(/etc/**)", "deny"),  # a content rule judges calls, it does not hide tools
            ("mcp__srv", "deny"),
            ("mcp__other__*", "deny"),
            ("mcp__third__t", "deny"),
        )
    )
    pool = registry.assemble_tool_pool(base, mcp, ctx)
    assert [t.name for t in pool] == [
        "Glob",
        "Write",
        "mcp__alpha__a",
        "mcp__third__u",
        "mcp__zeta__b",
    ]


def test_wildcard_deny_hides_every_builtin() -> None:
    ctx = PermissionContext(rules=rules(("*", "deny")))
    assert registry.assemble_tool_pool([read_only_tool("Glob")], [], ctx) == []


def test_builtin_wins_a_name_clash_with_mcp() -> None:
    builtin = read_only_tool("Glob")
    pool = registry.assemble_tool_pool([builtin], [_mcp("Glob")], PermissionContext())
    assert pool == [builtin]


def test_tools_for_api_deferred_and_cache_breakpoint() -> None:
    deferred = read_only_tool("Zed", should_defer=True, description="later")
    search = read_only_tool("ToolSearch", description="s")
    pool = [search, read_only_tool("Glob", description="g"), deferred, _mcp("mcp__a__x")]
    specs = registry.tools_for_api(pool, loaded_deferred=())[1:]
    assert specs[0]["cache_control"] == {"type": "ephemeral"}
    assert specs[1] == {
        "name": "Zed",
        "description": "later",
        "input_schema": {"type": "object", "properties": {}},
        "defer_loading": True,
    }
    assert "cache_control" not in specs[2]
    loaded = registry.tools_for_api(pool, loaded_deferred={"Zed"})[1:]
    assert "defer_loading" not in loaded[1] and "properties" in loaded[1]["input_schema"]
    assert loaded[1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in loaded[0]


def test_without_toolsearch_deferred_tools_go_in_full() -> None:
    # ``--tools`` can leave ToolSearch out; then nothing could load a deferred schema.
    pool = [read_only_tool("Glob"), read_only_tool("Zed", should_defer=True)]
    specs = registry.tools_for_api(pool)
    assert all("defer_loading" not in s for s in specs)
    assert "text" in specs[1]["input_schema"]["properties"]  # the whole schema


def test_mcp_changes_leave_the_builtin_prefix_byte_identical() -> None:
    base = [read_only_tool("Read"), simple_tool("Bash"), read_only_tool("Glob")]
    ctx = PermissionContext()

    def prefix(mcp: list[Tool[Any]]) -> str:
        pool = registry.assemble_tool_pool(base, mcp, ctx)
        specs = registry.tools_for_api(pool)
        return json.dumps(specs[: len(base)], sort_keys=False)

    none = prefix([])
    one = prefix([_mcp("mcp__db__query")])
    many = prefix([_mcp("mcp__a__b"), _mcp("mcp__db__query"), _mcp("mcp__zz__y")])
    assert none == one == many
    assert '"cache_control": {"type": "ephemeral"}' in none
