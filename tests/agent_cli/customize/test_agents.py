"""Agent types from Markdown files, and the child's tools and mode (pure functions)."""

from __future__ import annotations

from pathlib import Path

from agent_cli.agents.runner import child_mode, child_tools
from agent_cli.customize.agents import BUILTIN_AGENTS, find_agent, load_agent_definitions
from permissions.types import PermissionMode
from tools.builtin.agent import AgentDefinition
from tools.registry import get_all_base_tools


def _write(base: Path, folder: str, name: str, text: str) -> Path:
    path = base / folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_frontmatter_forms_and_precedence(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    _write(home, ".claude/agents", "a.md", "---\nname: shared\ndescription: from home\n---\nhome\n")
    _write(
        project,
        ".nerve/agents",
        "b.md",
        "---\nname: shared\ndescription: 'from project'\ntools: [Read, 'Grep']\n"
        "model: inherit\n---\nproject body\n",
    )
    _write(
        project,
        ".claude/agents",
        "c.md",
        "---\n# a comment\nname: lister\ndescription: lists\ntools:\n  - Glob\n  - Read\n---\n",
    )
    _write(
        project, ".claude/agents", "d.md", "---\nname: all\ndescription: all tools\ntools: *\n---\n"
    )
    _write(project, ".claude/agents", "e.md", "---\nname: Explore\ndescription: mine\n---\nx\n")
    defs, warnings = load_agent_definitions(project, home=home)
    by_name = {d.name: d for d in defs}
    assert warnings == []
    shared = by_name["shared"]
    assert (shared.description, shared.tools, shared.prompt) == (
        "from project",
        ("Read", "Grep"),
        "project body",
    )
    assert shared.source == "projectSettings" and shared.model == "inherit"
    assert by_name["lister"].tools == ("Glob", "Read")
    assert by_name["all"].tools is None
    assert by_name["Explore"].description == "mine"  # a project agent overrides a built-in
    assert "general-purpose" in by_name


def test_bad_files_are_skipped_with_a_warning(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    folder = ".claude/agents"
    _write(tmp_path, folder, "none.md", "just text, no frontmatter\n")
    _write(tmp_path, folder, "noname.md", "---\ndescription: x\n---\n")
    _write(tmp_path, folder, "nodesc.md", "---\nname: x\n---\n")
    _write(tmp_path, folder, "open.md", "---\nname: x\ndescription: never closed\n")
    (tmp_path / folder / "bytes.md").write_bytes(b"---\nname: b\xff\ndescription: ok\n---\n")
    (tmp_path / folder / "dir.md").mkdir()
    defs, warnings = load_agent_definitions(tmp_path, home=home)
    assert len(warnings) == 4
    assert any("no frontmatter" in w for w in warnings)
    assert any("no name" in w for w in warnings) and any("no description" in w for w in warnings)
    names = {d.name for d in defs}
    assert "b\ufffd" in names  # bad bytes are replaced, the file still loads
    assert {a.name for a in BUILTIN_AGENTS} <= names


def test_find_agent_is_case_insensitive_after_exact() -> None:
    defs = [AgentDefinition("Explore", "a"), AgentDefinition("explore", "b")]
    assert find_agent(defs, "explore") is defs[1]
    assert find_agent(defs, "EXPLORE") is defs[0]
    assert find_agent(defs, "missing") is None


def test_child_tools_drop_agent_and_plan_tools_and_follow_the_list() -> None:
    pool = get_all_base_tools()
    names = {t.name for t in child_tools(pool, AgentDefinition("g", "d"))}
    assert {"Read", "Bash", "Edit"} <= names
    assert not names & {"Agent", "EnterPlanMode", "ExitPlanMode"}
    assert not names & {"EnterWorktree", "ExitWorktree"}  # the worktree is the session's
    assert {"WebFetch", "WebSearch", "AskUserQuestion"} <= names
    narrowed = child_tools(pool, AgentDefinition("r", "d", tools=("Read", "Agent", "Nope")))
    assert [t.name for t in narrowed] == ["Read"]


def test_child_mode() -> None:
    plain = AgentDefinition("g", "d")
    strict = AgentDefinition("e", "d", permission_mode="plan")
    loose = AgentDefinition("l", "d", permission_mode="bypassPermissions")
    edits = AgentDefinition("w", "d", permission_mode="acceptEdits")
    M = PermissionMode
    assert child_mode(M.DEFAULT, plain) is M.BUBBLE
    assert child_mode(M.ACCEPT_EDITS, plain) is M.ACCEPT_EDITS
    assert child_mode(M.PLAN, plain) is M.PLAN
    assert child_mode(M.PLAN, edits) is M.PLAN  # never looser than a parent in plan mode
    assert child_mode(M.BYPASS, strict) is M.PLAN
    assert child_mode(M.DEFAULT, loose) is M.BUBBLE  # bypass is never granted by an agent file
    assert child_mode(M.BYPASS, loose) is M.BYPASS
    assert child_mode(M.DEFAULT, edits) is M.ACCEPT_EDITS
    assert child_mode(M.DONT_ASK, plain) is M.DONT_ASK
    assert child_mode(M.DEFAULT, AgentDefinition("x", "d", permission_mode="bogus")) is M.BUBBLE


def test_project_agents_found_from_a_subdirectory_up_to_the_root(tmp_path: Path) -> None:
    from tests.agent_cli.customize.showcase import make_showcase

    home = tmp_path / "home"
    home.mkdir()
    project = make_showcase(tmp_path / "project")
    _write(
        project / "src",
        ".claude/agents",
        "local.md",
        "---\nname: reviewer\ndescription: near\n---\n",
    )
    _write(tmp_path, ".claude/agents", "outside.md", "---\nname: outside\ndescription: o\n---\n")
    defs, warnings = load_agent_definitions(project / "src", home=home)
    by_name = {d.name: d for d in defs}
    assert warnings == [] and "outside" not in by_name  # above the repository: not ours
    assert by_name["reviewer"].description == "near"  # the deeper folder wins
    defs, _ = load_agent_definitions(project / "src" / "components", home=home)
    reviewer = {d.name: d for d in defs}["reviewer"]
    assert reviewer.description == "near"
    defs, _ = load_agent_definitions(project, home=home)
    reviewer = {d.name: d for d in defs}["reviewer"]
    # A YAML block scalar, folded to one line for the listing the model sees.
    assert reviewer.description == (
        "Use this agent to review a change. It reads the diff and the files around it."
    )
    assert reviewer.tools == ("Read", "Grep", "Glob") and reviewer.path is not None


def test_broken_agent_frontmatter_names_the_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    _write(tmp_path, ".claude/agents", "bad.md", "---\nname: x\ndescription: |\n\tTab\n---\n")
    _, warnings = load_agent_definitions(tmp_path, home=home)
    assert len(warnings) == 1 and "bad.md:4:" in warnings[0]
