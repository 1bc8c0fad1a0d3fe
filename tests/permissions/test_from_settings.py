"""From real settings files (loaded by ``config``) to a permission context."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from config import ConfigRoots, load_settings
from permissions.engine import decide
from permissions.from_settings import check_rule, permission_context_from_settings
from permissions.rules import make_rule, parse_rule
from permissions.types import (
    Decision,
    PermissionMode,
    PermissionRequest,
    RuleBehavior,
    RuleSource,
    ToolKind,
)


def _write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def _load(tmp_path: Path, user: Any = None, project: Any = None, local: Any = None, **kw: Any):
    home, proj = tmp_path / "home", tmp_path / "proj"
    (proj / ".git").mkdir(parents=True, exist_ok=True)
    home.mkdir(exist_ok=True)
    if user is not None:
        _write(home / ".nerve" / "settings.json", user)
    if project is not None:
        _write(proj / ".nerve" / "settings.json", project)
    if local is not None:
        _write(proj / ".nerve" / "settings.local.json", local)
    roots = ConfigRoots(home, tmp_path / "no-policy", tmp_path / "no-policy2", environ={})
    settings = load_settings(proj, roots=roots)
    ctx, warnings = permission_context_from_settings(settings, cwd=proj, home=home, **kw)
    return ctx, warnings, proj, home


def _read(path: Path) -> PermissionRequest:
    return PermissionRequest(
        "Read", {"file_path": str(path)}, ToolKind.READ, paths=(path,), is_read_only=True
    )


def test_sources_and_base_dirs_carry_through(tmp_path: Path) -> None:
    ctx, warnings, proj, _home = _load(
        tmp_path,
        user={"permissions": {"deny": ["Read(**/*.key)"]}},
        local={"permissions": {"allow": ["Read(//srv/**)", "Read(/notes/**)"]}},
    )
    assert warnings == []
    by_text = {str(r): r for r in ctx.rules}
    assert by_text["Read(**/*.key)"].source is RuleSource.USER
    assert by_text["Read(//srv/**)"].source is RuleSource.LOCAL
    v = decide(_read(proj / "a.key"), ctx)
    assert v.decision is Decision.DENY and v.rule is not None
    assert v.rule.source is RuleSource.USER
    # `/notes/**` from local settings is anchored at its base dir (the cwd)
    assert decide(_read(proj / "notes" / "x.md"), ctx).decision is Decision.ALLOW


def test_deny_in_user_beats_allow_in_local(tmp_path: Path) -> None:
    ctx, _, _proj, _ = _load(
        tmp_path,
        user={"permissions": {"deny": ["WebFetch(domain:evil.test)"]}},
        local={"permissions": {"allow": ["WebFetch"]}},
    )
    req = PermissionRequest(
        "WebFetch", {"url": "https://evil.test/"}, ToolKind.FETCH, url="https://evil.test/"
    )
    assert decide(req, ctx).decision is Decision.DENY


def test_bad_rules_become_warnings(tmp_path: Path) -> None:
    ctx, warnings, _, _ = _load(
        tmp_path,
        project={
            "permissions": {
                "allow": ["Bash(git status", "*", "Agent(model:haiku)", "mcp__gh__get_*"],
                "deny": ["Frobnicate", "Bash(command:rm*)", "mcp__evil"],
                "ask": ["Write(src/**)"],
            }
        },
    )
    kept = {(r.behavior.value, str(r)) for r in ctx.rules}
    assert kept == {
        ("allow", "mcp__gh__get_*"),
        ("deny", "Frobnicate"),
        ("deny", "mcp__evil"),
        ("ask", "Write(src/**)"),
    }
    text = "\n".join(warnings)
    assert "must end with ')'" in text
    assert "tool-name globs" in text
    assert "parameter rules are deny/ask only" in text
    assert "unknown tool name 'Frobnicate'" in text
    assert "primary field" in text
    assert "Read(...) or Edit(...)" in text
    assert "mcp__evil" not in text  # names with '_' are exempt from the unknown-name warning


def test_mode_and_dirs(tmp_path: Path) -> None:
    ctx, _, _proj, _ = _load(
        tmp_path,
        user={
            "permissions": {
                "defaultMode": "acceptEdits",
                "additionalDirectories": [str(tmp_path / "shared")],
            }
        },
        additional_dirs=[Path("../extra")],
    )
    assert ctx.mode is PermissionMode.ACCEPT_EDITS
    assert ctx.additional_dirs == (tmp_path / "shared", tmp_path / "extra")
    ctx2, _, _, _ = _load(tmp_path, mode=PermissionMode.PLAN)
    assert ctx2.mode is PermissionMode.PLAN


def test_bypass_default_mode_and_disable(tmp_path: Path) -> None:
    ctx, _, _, _ = _load(tmp_path, user={"permissions": {"defaultMode": "bypassPermissions"}})
    assert ctx.mode is PermissionMode.BYPASS and ctx.bypass_available
    ctx, warnings, _, _ = _load(
        tmp_path,
        user={
            "permissions": {
                "defaultMode": "bypassPermissions",
                "disableBypassPermissionsMode": "disable",
            }
        },
        bypass_available=True,
    )
    assert ctx.mode is PermissionMode.DEFAULT and not ctx.bypass_available
    assert any("disabled" in w for w in warnings)


def test_auto_default_mode_from_project_is_ignored(tmp_path: Path) -> None:
    home, proj = tmp_path / "home", tmp_path / "proj"
    ctx, _, _, _ = _load(tmp_path, project={"permissions": {"defaultMode": "auto"}})
    assert ctx.mode is PermissionMode.DEFAULT
    ctx, _, _, _ = _load(tmp_path, user={"permissions": {"defaultMode": "auto"}})
    assert ctx.mode is PermissionMode.AUTO
    assert home.is_dir() and proj.is_dir()


def test_extra_rules_and_session_rules(tmp_path: Path) -> None:
    home, proj = tmp_path / "home", tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    home.mkdir()
    settings = load_settings(
        proj, roots=ConfigRoots(home, tmp_path / "np", tmp_path / "np2", environ={})
    )
    settings.add_session_rule("allow", "Edit(docs/**)")
    extra = [make_rule("Edit(docs/secret.md)", "deny", RuleSource.CLI, proj)]
    ctx, _ = permission_context_from_settings(settings, cwd=proj, extra_rules=extra, home=home)
    req = PermissionRequest("Edit", {}, ToolKind.EDIT, paths=(proj / "docs" / "a.md",))
    v = decide(req, ctx)
    assert v.decision is Decision.ALLOW and v.rule is not None
    assert v.rule.source is RuleSource.SESSION
    req2 = PermissionRequest("Edit", {}, ToolKind.EDIT, paths=(proj / "docs" / "secret.md",))
    assert decide(req2, ctx).decision is Decision.DENY


def test_check_rule_direct() -> None:
    assert check_rule(parse_rule("Bash(git:*)"), RuleBehavior.ALLOW) == (True, [])
    assert check_rule(parse_rule("WebFetch(domain:x.test)"), RuleBehavior.ALLOW) == (True, [])
    keep, w = check_rule(parse_rule("Bash(run_in_background:true)"), RuleBehavior.ALLOW)
    assert not keep and w
    assert check_rule(parse_rule("Bash(run_in_background:true)"), RuleBehavior.ASK)[0]


def test_content_on_a_tool_without_content_warns() -> None:
    keep, w = check_rule(parse_rule("WebSearch(cats)"), RuleBehavior.DENY)
    assert keep and "never matches" in w[0]
    assert check_rule(parse_rule("Agent(Explore)"), RuleBehavior.ALLOW) == (True, [])
