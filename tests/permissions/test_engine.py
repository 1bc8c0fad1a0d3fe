"""The decision engine on Read / Edit / WebFetch / generic / MCP requests."""

from __future__ import annotations

import pytest

from permissions.engine import decide
from permissions.rules import make_rule
from permissions.types import (
    Decision,
    PermissionRequest,
    ReasonKind,
    RuleSource,
    RuleValue,
    SafetyCheck,
    ToolKind,
    Verdict,
)
from tests.permissions.conftest import World

A, Q, D = Decision.ALLOW, Decision.ASK, Decision.DENY


def generic(name: str, read_only: bool = False, mcp: bool | None = None, **inp: object):
    return PermissionRequest(
        name,
        dict(inp),
        ToolKind.GENERIC,
        is_read_only=read_only,
        is_mcp=name.startswith("mcp__") if mcp is None else mcp,
    )


# -- rule precedence ---------------------------------------------------------------------


def test_deny_from_user_beats_allow_from_local(world: World) -> None:
    rules = [
        make_rule("Read(src/**)", "allow", RuleSource.LOCAL),
        make_rule("Read(**/*.py)", "deny", RuleSource.USER),
    ]
    v = decide(world.read("src/pkg/mod.py"), world.ctx(rules=rules))
    assert v.decision is D and v.rule is not None and v.rule.source is RuleSource.USER
    assert "userSettings" in v.reason


def test_ask_beats_allow_and_holds_in_bypass_and_auto(world: World) -> None:
    for mode in ("default", "bypassPermissions", "auto", "acceptEdits"):
        v = decide(world.edit("src/a.py"), world.ctx(mode, allow=["Edit"], ask=["Edit(src/**)"]))
        assert (v.decision, v.kind) == (Q, ReasonKind.RULE), mode
    v = decide(world.edit("src/a.py"), world.ctx("dontAsk", ask=["Edit(src/**)"]))
    assert v.decision is D and "dontAsk" in v.reason


def test_deny_beats_ask(world: World) -> None:
    v = decide(world.read("a.txt"), world.ctx(deny=["Read"], ask=["Read(a.txt)"]))
    assert v.decision is D


# -- tool-name rules, globs, MCP, aliases ---------------------------------------------------


@pytest.mark.parametrize("rule", ["WebSearch", "*", "Web*"])
def test_tool_name_deny_and_globs(world: World, rule: str) -> None:
    v = decide(generic("WebSearch", query="x"), world.ctx(deny=[rule]))
    assert v.decision is D and str(v.rule) == rule


def test_unanchored_allow_glob_is_ignored(world: World) -> None:
    for rule in ("*", "mcp__*", "Web*"):
        assert decide(generic("mcp__gh__get_issue"), world.ctx(allow=[rule])).decision is Q


@pytest.mark.parametrize(
    ("rule", "tool", "hit"),
    [
        ("mcp__github", "mcp__github__get_issue", True),
        ("mcp__github__*", "mcp__github__create_pr", True),
        ("mcp__github__get_*", "mcp__github__get_issue", True),
        ("mcp__github__get_*", "mcp__github__create_pr", False),
        ("mcp__github__get_issue", "mcp__github__get_issue", True),
        ("mcp__github", "mcp__githubx__get_issue", False),
        ("mcp__git", "mcp__github__get_issue", False),
    ],
)
def test_mcp_server_rules(world: World, rule: str, tool: str, hit: bool) -> None:
    v = decide(generic(tool), world.ctx(allow=[rule]))
    assert (v.decision is A) is hit
    if hit:
        assert v.kind is ReasonKind.RULE and str(v.rule) == rule


def test_mcp_deny_glob(world: World) -> None:
    assert decide(generic("mcp__slack__post"), world.ctx(deny=["mcp__*"])).decision is D
    assert decide(generic("Read"), world.ctx(deny=["mcp__*"])).decision is Q


def test_mcp_read_only_hint_is_not_trusted(world: World) -> None:
    assert decide(generic("mcp__db__query", read_only=True), world.ctx()).decision is Q
    assert decide(generic("ToolSearch", read_only=True), world.ctx()).decision is A


def test_legacy_aliases(world: World) -> None:
    v = decide(generic("Agent", subagent_type="Explore"), world.ctx(deny=["Task(Explore)"]))
    assert v.decision is D and v.rule is not None and v.rule.value.tool_name == "Agent"
    assert decide(generic("TaskStop"), world.ctx(allow=["KillShell"])).decision is A
    # and an old transcript's tool name meets a new rule
    assert decide(generic("KillBash"), world.ctx(deny=["TaskStop"])).decision is D


def test_agent_subagent_type_rules(world: World) -> None:
    ctx = world.ctx(allow=["Agent(Explore)"])
    assert decide(generic("Agent", subagent_type="Explore"), ctx).decision is A
    assert decide(generic("Agent", subagent_type="general-purpose"), ctx).decision is Q


# -- parameter rules ----------------------------------------------------------------------


def test_parameter_rules_deny_and_ask(world: World) -> None:
    ctx = world.ctx(deny=["Agent(model:opus*)"], ask=["Agent(run_in_background:true)"])
    assert decide(generic("Agent", model="opus-4"), ctx).decision is D
    assert decide(generic("Agent", model="haiku"), ctx).decision is Q
    v = decide(
        generic("Agent", model="haiku", run_in_background=True),
        world.ctx("bypassPermissions", ask=["Agent(run_in_background:true)"]),
    )
    assert (v.decision, v.kind) == (Q, ReasonKind.RULE)


def test_parameter_rules_never_allow(world: World) -> None:
    assert (
        decide(generic("Agent", model="haiku"), world.ctx(allow=["Agent(model:haiku)"])).decision
        is Q
    )


def test_parameter_rule_on_edit_field(world: World) -> None:
    req = PermissionRequest(
        "Edit",
        {"file_path": "a.py", "replace_all": True},
        ToolKind.EDIT,
        paths=(world.cwd / "a.py",),
    )
    assert decide(req, world.ctx("acceptEdits", deny=["Edit(replace_all:true)"])).decision is D


# -- reads --------------------------------------------------------------------------------


def test_read_deny_blocks_grep_and_glob(world: World) -> None:
    ctx = world.ctx(deny=["Read(./secrets/**)"])
    for tool in ("Read", "Grep", "Glob"):
        v = decide(world.read("secrets/k.pem", tool=tool), ctx)
        assert v.decision is D, tool
    assert decide(world.read("src/pkg/mod.py", tool="Grep"), ctx).decision is A


def test_read_deny_also_blocks_edits(world: World) -> None:
    v = decide(world.edit(".env"), world.ctx("acceptEdits", allow=["Edit"], deny=["Read(.env)"]))
    assert v.decision is D and str(v.rule) == "Read(.env)"


def test_read_outside_working_dirs_asks_and_suggests(world: World) -> None:
    v = decide(world.read(world.root / "outside" / "secret.txt"), world.ctx())
    assert (v.decision, v.kind) == (Q, ReasonKind.WORKING_DIR)
    assert v.suggestions == (RuleValue("Read", f"/{world.root}/outside/**"),)
    assert str(v.suggestions[0]).startswith("Read(//")
    ctx = world.ctx(allow=[str(v.suggestions[0])])
    assert decide(world.read(world.root / "outside" / "secret.txt"), ctx).decision is A


def test_read_in_additional_dir_allowed(world: World) -> None:
    ctx = world.ctx(extra_dirs=[world.root / "outside"])
    assert decide(world.read(world.root / "outside" / "secret.txt"), ctx).decision is A


def test_multiple_paths_all_must_be_allowed(world: World) -> None:
    req = world.read("src/pkg/mod.py", world.root / "outside" / "secret.txt")
    assert decide(req, world.ctx()).decision is Q


# -- edits --------------------------------------------------------------------------------


def test_edit_rule_covers_write_and_notebook_edit(world: World) -> None:
    ctx = world.ctx(allow=["Edit(docs/**)"])
    for tool in ("Edit", "Write", "NotebookEdit"):
        v = decide(world.edit("docs/a.md", tool=tool), ctx)
        assert v.decision is A and str(v.rule) == "Edit(docs/**)", tool
    assert decide(world.edit("src/a.py", tool="Write"), ctx).decision is Q


def test_protected_path_asks_even_with_allow_rule_and_accept_edits(world: World) -> None:
    v = decide(world.edit(".git/config"), world.ctx("acceptEdits", allow=["Edit"]))
    assert (v.decision, v.kind) == (Q, ReasonKind.SAFETY)
    assert v.safety is not None and v.safety.classifier_approvable
    assert decide(world.edit(".git/config"), world.ctx("bypassPermissions")).decision is A
    v = decide(world.edit(".git/config"), world.ctx("auto"))
    assert (v.decision, v.kind) == (Q, ReasonKind.CLASSIFIER) and v.safety is not None


@pytest.mark.parametrize("raw", ["C:\\x\\y.txt", "notes.txt::$DATA", "src/../../../etc/x"])
def test_path_tricks_ask_a_human_even_in_bypass(world: World, raw: str) -> None:
    req = PermissionRequest(
        "Write", {"file_path": raw}, ToolKind.EDIT, paths=(world.cwd / "x.txt",)
    )
    for mode in ("bypassPermissions", "auto", "acceptEdits"):
        v = decide(req, world.ctx(mode, allow=["Edit"]))
        assert (v.decision, v.kind) == (Q, ReasonKind.SAFETY), mode
        assert v.safety is not None and not v.safety.classifier_approvable
    assert decide(req, world.ctx("dontAsk")).decision is D


def test_edit_outside_working_dirs_asks_except_bypass(world: World) -> None:
    req = world.edit(world.root / "outside" / "new.txt")
    for mode in ("default", "acceptEdits"):
        v = decide(req, world.ctx(mode))
        assert (v.decision, v.kind) == (Q, ReasonKind.WORKING_DIR), mode
    assert decide(req, world.ctx("bypassPermissions")).decision is A


def test_edit_suggests_nothing_persistent(world: World) -> None:
    assert decide(world.edit("src/a.py"), world.ctx()).suggestions == ()


# -- web fetch -----------------------------------------------------------------------------


def test_fetch_rules_and_suggestion(world: World) -> None:
    ctx = world.ctx(allow=["WebFetch(domain:*.python.org)"], deny=["WebFetch(domain:evil.test)"])
    assert decide(world.fetch("https://docs.python.org/3/"), ctx).decision is A
    assert decide(world.fetch("https://EVIL.test/x"), ctx).decision is D
    v = decide(world.fetch("https://python.org/"), ctx)
    assert v.decision is Q and v.suggestions == (RuleValue("WebFetch", "domain:python.org"),)


# -- the tool's own check -----------------------------------------------------------------


def _with_tool(req: PermissionRequest, v: Verdict) -> PermissionRequest:
    from dataclasses import replace

    return replace(req, tool_verdict=v)


def test_tool_deny_is_final_even_with_allow_rule(world: World) -> None:
    req = _with_tool(generic("Foo"), Verdict(D, "device file", ReasonKind.TOOL))
    v = decide(req, world.ctx("bypassPermissions", allow=["Foo"]))
    assert v.decision is D and v.reason == "device file"


def test_tool_ask_beats_allow_rule_but_bypass_allows(world: World) -> None:
    req = _with_tool(generic("Foo"), Verdict(Q, "needs a look", ReasonKind.TOOL))
    assert decide(req, world.ctx(allow=["Foo"])).decision is Q
    assert decide(req, world.ctx("bypassPermissions")).decision is A


def test_tool_hard_safety_stays_human_in_bypass(world: World) -> None:
    check = SafetyCheck("odd", classifier_approvable=False)
    req = _with_tool(generic("Foo"), Verdict(Q, "odd", ReasonKind.SAFETY, safety=check))
    v = decide(req, world.ctx("bypassPermissions"))
    assert v.decision is Q and v.safety == check


def test_tool_allow_lets_plan_mode_tools_run(world: World) -> None:
    req = _with_tool(generic("ExitPlanMode"), Verdict(A, "no permission needed", ReasonKind.TOOL))
    assert decide(req, world.ctx("plan")).decision is A
    assert decide(req, world.ctx("plan", deny=["ExitPlanMode"])).decision is D


# -- mode defaults, one table --------------------------------------------------------------

MODES = ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto", "bubble"]
TABLE = {
    # request:             default acceptEdits plan bypass dontAsk auto bubble
    "read_inside": [A, A, A, A, A, A, A],
    "read_outside": [Q, Q, Q, A, D, Q, Q],
    "edit_inside": [Q, A, D, A, D, Q, Q],
    "edit_outside": [Q, Q, D, A, D, Q, Q],
    "generic": [Q, Q, D, A, D, Q, Q],
    "generic_read_only": [A, A, A, A, A, A, A],
    "fetch": [Q, Q, Q, A, D, Q, Q],
}


def _request(world: World, name: str) -> PermissionRequest:
    return {
        "read_inside": lambda: world.read("src/pkg/mod.py"),
        "read_outside": lambda: world.read(world.root / "outside/secret.txt"),
        "edit_inside": lambda: world.edit("src/new.py"),
        "edit_outside": lambda: world.edit(world.root / "outside/new.txt"),
        "generic": lambda: generic("Agent", subagent_type="x"),
        "generic_read_only": lambda: generic("ToolSearch", read_only=True),
        "fetch": lambda: world.fetch("https://example.com/"),
    }[name]()


@pytest.mark.parametrize("name", sorted(TABLE))
@pytest.mark.parametrize("mode", MODES)
def test_mode_defaults_table(world: World, name: str, mode: str) -> None:
    expected = TABLE[name][MODES.index(mode)]
    v = decide(_request(world, name), world.ctx(mode))
    assert v.decision is expected, (name, mode, v.reason)
    assert v.trace and v.trace[0].endswith(f"in {mode} mode")
    if mode == "auto" and expected is Q:
        assert v.kind is ReasonKind.CLASSIFIER
    if mode == "plan" and expected is D:
        assert "plan mode" in v.reason


def test_generic_suggests_tool_name(world: World) -> None:
    assert decide(generic("Agent"), world.ctx()).suggestions == (RuleValue("Agent"),)
    assert decide(generic("mcp__s__t"), world.ctx()).suggestions == (RuleValue("mcp__s__t"),)
