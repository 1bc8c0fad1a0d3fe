"""Layers, precedence, list concatenation with provenance, roots and env vars."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from config import ConfigRoots, SettingsError, find_project_root, load_settings
from tests.config.conftest import Tree


def test_every_layer_is_found_with_its_source(tree: Tree) -> None:
    tree.user({"permissions": {"allow": ["U1"]}}, ".claude")
    tree.user({"permissions": {"allow": ["U2"]}})
    tree.proj({"permissions": {"allow": ["P1"]}}, ".claude")
    tree.proj({"permissions": {"allow": ["P2"]}})
    tree.local({"permissions": {"allow": ["L1"]}}, ".claude")
    tree.local({"permissions": {"allow": ["L2"]}})
    tree.managed({"permissions": {"allow": ["M1"]}})
    tree.write(tree.policy / "managed-settings.d" / "10-a.json", {"permissions": {"allow": ["M2"]}})
    tree.write(tree.claude_policy / "managed-settings.json", {"permissions": {"allow": ["C1"]}})
    s = tree.load(cli_settings='{"permissions": {"allow": ["X1"]}}')
    by_rule = {e.rule: e.source for e in s.rule_entries()}
    assert by_rule == {
        "U1": "userSettings",
        "U2": "userSettings",
        "P1": "projectSettings",
        "P2": "projectSettings",
        "L1": "localSettings",
        "L2": "localSettings",
        "M1": "policySettings",
        "M2": "policySettings",
        "C1": "policySettings",
        "X1": "cliArg",
    }
    # layers are listed highest precedence first
    order = [lf.source for lf in s.layers]
    assert order == sorted(
        order,
        key=["policySettings", "cliArg", "localSettings", "projectSettings", "userSettings"].index,
    )
    assert s.warnings == []
    assert s.merged.permissions.allow[0] == "M2"  # highest-precedence items first


def test_scalar_precedence_key_by_key(tree: Tree) -> None:
    tree.user({"model": "user-model", "apiKeyHelper": "/u", "cleanupPeriodDays": 5})
    tree.proj({"model": "proj-model", "apiKeyHelper": "/p"})
    tree.local({"model": "local-model"})
    s = tree.load()
    assert s.model == "local-model"
    assert s.merged.apiKeyHelper == "/p"
    assert s.merged.cleanupPeriodDays == 5
    s = tree.load(cli_settings='{"model": "cli-model"}')
    assert s.model == "cli-model"
    s = tree.load(cli_settings='{"model": "cli-model"}', cli_overrides={"model": "flag"})
    assert s.model == "flag"
    tree.managed({"model": "policy-model"})
    assert tree.load(cli_overrides={"model": "flag"}).model == "policy-model"


def test_lists_concatenate_deduped_with_provenance_and_base_dirs(tree: Tree) -> None:
    user_file = tree.user({"permissions": {"deny": ["Read(/secret)", "WebFetch"]}})
    proj_file = tree.proj({"permissions": {"deny": ["Read(/secret)", "WebFetch", "WebFetch"]}})
    tree.local({"permissions": {"ask": ["Bash(git push *)"]}})
    sub = tree.project / "pkg"
    sub.mkdir()
    s = tree.load(cwd=sub)
    entries = list(s.rule_entries())
    secret = [e for e in entries if e.rule == "Read(/secret)"]
    # same text, different anchors: both kept, each with its own base
    assert {(e.source, e.base_dir, e.file) for e in secret} == {
        ("userSettings", tree.home / ".nerve", user_file),
        ("projectSettings", tree.project, proj_file),
    }
    webfetch = [e for e in entries if e.rule == "WebFetch"]
    assert len(webfetch) == 2  # once per anchor, the duplicate in one file dropped
    (ask,) = s.rules_for("ask")
    assert ask.source == "localSettings" and ask.base_dir == sub  # local anchors at cwd
    assert s.merged.permissions.deny == ["Read(/secret)", "WebFetch"]


def test_nerve_beats_claude_in_a_layer_and_lists_combine(tree: Tree) -> None:
    tree.user(
        {"model": "from-claude", "env": {"A": "c", "B": "c"}, "permissions": {"allow": ["C"]}},
        ".claude",
    )
    tree.user({"model": "from-nerve", "env": {"A": "n"}, "permissions": {"allow": ["N"]}})
    s = tree.load()
    assert s.model == "from-nerve"
    assert s.env == {"A": "n", "B": "c"}  # objects deep-merge
    assert sorted(s.merged.permissions.allow) == ["C", "N"]
    bases = {e.rule: e.base_dir for e in s.rule_entries()}
    assert bases == {"C": tree.home / ".claude", "N": tree.home / ".nerve"}


def test_unknown_keys_are_kept(tree: Tree) -> None:
    tree.user(
        {
            "statusLine": {"type": "command", "command": "x"},
            "outputStyle": "terse",
            "permissions": {"disableAutoMode": "disable"},
        }
    )
    s = tree.load()
    assert s.merged.extras()["statusLine"] == {"type": "command", "command": "x"}
    assert s.merged.extras()["outputStyle"] == "terse"
    assert s.merged.permissions.model_extra == {"disableAutoMode": "disable"}


def test_auto_mode_from_project_or_local_is_ignored(tree: Tree) -> None:
    tree.user({"permissions": {"defaultMode": "acceptEdits"}})
    tree.proj({"permissions": {"defaultMode": "auto", "allow": ["Keep"]}})
    s = tree.load()
    assert s.default_mode == "acceptEdits"
    assert [e.rule for e in s.rule_entries()] == ["Keep"]
    assert any('"auto" is ignored' in w and "settings.json" in w for w in s.warnings)
    tree.proj({})
    tree.local({"permissions": {"defaultMode": "auto"}})
    s = tree.load()
    assert s.default_mode == "acceptEdits" and len(s.warnings) == 1
    tree.user({"permissions": {"defaultMode": "auto"}})
    assert tree.load().default_mode == "auto"  # from user it counts


def test_manual_is_an_alias_of_default(tree: Tree) -> None:
    tree.proj({"permissions": {"defaultMode": "manual"}})
    assert tree.load().default_mode == "default"


def test_cli_settings_file_relative_to_cwd_anchors_at_its_dir(tree: Tree) -> None:
    cfg = tree.write(tree.project / "conf" / "extra.json", {"permissions": {"allow": ["Edit(/x)"]}})
    s = tree.load(cli_settings="conf/extra.json")
    (entry,) = s.rule_entries()
    assert (entry.source, entry.base_dir, entry.file) == ("cliArg", cfg.parent, cfg)
    s = tree.load(cli_settings="missing.json")
    assert any("missing.json: file not found" in w for w in s.warnings)


def test_cli_inline_json_anchors_at_cwd_and_reports_errors(tree: Tree) -> None:
    s = tree.load(cli_settings=' {"permissions": {"deny": ["Bash(rm *)"]}}')
    (entry,) = s.rule_entries()
    assert entry.source == "cliArg" and entry.base_dir == tree.project and entry.file is None
    s = tree.load(cli_settings='{"model": }')
    assert s.warnings[0].startswith("--settings:1:11: invalid JSON")


def test_cli_overrides_bad_value_stops(tree: Tree) -> None:
    with pytest.raises(SettingsError, match=r"permissions\.defaultMode: unknown permission mode"):
        tree.load(cli_overrides={"permissions": {"defaultMode": "yolo"}})
    s = tree.load(cli_overrides={"permissions": {"defaultMode": "plan", "allow": ["Read"]}})
    assert s.default_mode == "plan"
    assert [(e.rule, e.source, e.base_dir) for e in s.rule_entries()] == [
        ("Read", "cliArg", tree.project)
    ]


def test_policy_dropins_merge_alphabetically_skipping_hidden(tree: Tree) -> None:
    tree.managed({"model": "main", "cleanupPeriodDays": 1})
    d = tree.policy / "managed-settings.d"
    tree.write(d / "20-b.json", {"model": "b"})
    tree.write(d / "10-a.json", {"model": "a", "cleanupPeriodDays": 9})
    tree.write(d / ".hidden.json", {"model": "hidden"})
    tree.write(d / "notes.txt", "not json at all")
    s = tree.load()
    assert s.model == "b"
    assert s.merged.cleanupPeriodDays == 9
    (entry,) = [lf for lf in s.layers if lf.path and lf.path.name == "20-b.json"]
    assert entry.base_dir == tree.policy


def test_nerve_policy_beats_claude_policy(tree: Tree) -> None:
    tree.write(tree.claude_policy / "managed-settings.json", {"model": "cc", "apiKeyHelper": "/k"})
    tree.managed({"model": "nerve"})
    s = tree.load()
    assert (s.model, s.merged.apiKeyHelper) == ("nerve", "/k")


def test_sources_restrict_user_project_local(tree: Tree) -> None:
    tree.user({"permissions": {"allow": ["U"]}})
    tree.proj({"permissions": {"allow": ["P"]}})
    tree.local({"permissions": {"allow": ["L"]}})
    tree.managed({"permissions": {"allow": ["M"]}})
    s = tree.load(sources={"user"}, cli_settings='{"permissions": {"allow": ["X"]}}')
    assert sorted(e.rule for e in s.rule_entries()) == ["M", "U", "X"]
    with pytest.raises(SettingsError, match="unknown setting source"):
        tree.load(sources={"usr"})


def test_project_root_is_the_git_root_and_local_lives_there(tree: Tree) -> None:
    deep = tree.project / "a" / "b"
    deep.mkdir(parents=True)
    tree.local({"permissions": {"allow": ["L"]}})
    tree.proj({"permissions": {"allow": ["P"]}})
    s = tree.load(cwd=deep)
    assert s.project_root == tree.project
    assert {e.rule: e.base_dir for e in s.rule_entries()} == {"L": deep, "P": tree.project}
    assert find_project_root(deep) == tree.project
    outside = tree.home / "scratch"
    outside.mkdir()
    assert find_project_root(outside) == outside


def test_worktree_git_file_counts_as_root(tmp_path: Path) -> None:
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt" / ".git").write_text("gitdir: /elsewhere\n")
    assert find_project_root(tmp_path / "wt") == tmp_path / "wt"


def test_explicit_project_root_wins(tree: Tree) -> None:
    other = tree.home / "other"
    tree.write(other / ".nerve" / "settings.json", {"model": "other"})
    assert tree.load(project_root=other).model == "other"


def test_env_vars_replace_the_roots(tree: Tree, tmp_path: Path) -> None:
    nerve_dir, claude_dir, pol = tmp_path / "n", tmp_path / "c", tmp_path / "p"
    tree.write(nerve_dir / "settings.json", {"permissions": {"allow": ["N"]}})
    tree.write(claude_dir / "settings.json", {"permissions": {"allow": ["C"]}})
    tree.write(pol / "managed-settings.json", {"permissions": {"allow": ["P"]}})
    tree.user({"permissions": {"allow": ["ignored"]}})
    environ = {
        "NERVE_CONFIG_DIR": str(nerve_dir),
        "CLAUDE_CONFIG_DIR": str(claude_dir),
        "NERVE_POLICY_DIR": str(pol),
    }
    roots = ConfigRoots(tree.home, claude_policy_dir=tree.claude_policy, environ=environ)
    s = load_settings(tree.project, roots=roots)
    assert {e.rule: e.base_dir for e in s.rule_entries()} == {
        "P": pol,
        "N": nerve_dir,
        "C": claude_dir,
    }


def test_cwd_is_home_loads_the_file_once_as_user(tree: Tree) -> None:
    tree.user({"permissions": {"allow": ["Once"]}})
    s = tree.load(cwd=tree.home)
    assert [(e.rule, e.source) for e in s.rule_entries()] == [("Once", "userSettings")]


def test_additional_directories_resolve_against_their_base(tree: Tree) -> None:
    tree.user({"permissions": {"additionalDirectories": ["~/notes", "/abs"]}})
    tree.proj({"permissions": {"additionalDirectories": ["../docs/"]}})
    s = tree.load()
    assert s.additional_directories == [
        tree.project.parent / "docs",
        tree.home / "notes",
        Path("/abs"),
    ]


def test_session_rules(tree: Tree) -> None:
    tree.proj({"permissions": {"allow": ["Read"]}})
    s = tree.load()
    entry = s.add_session_rule("allow", "Bash(npm test *)")
    assert entry is not None and entry.source == "session" and entry.base_dir == tree.project
    assert s.add_session_rule("allow", "Bash(npm test *)") is None
    assert [e.rule for e in s.rule_entries()] == ["Read", "Bash(npm test *)"]
    assert s.remove_session_rule("allow", "Bash(npm test *)")
    assert [e.rule for e in s.rule_entries()] == ["Read"]
    with pytest.raises(ValueError):
        s.add_session_rule("maybe", "Read")


def test_managed_permission_rules_only(tree: Tree) -> None:
    tree.managed({"allowManagedPermissionRulesOnly": True, "permissions": {"deny": ["WebFetch"]}})
    tree.proj({"permissions": {"allow": ["Bash"]}})
    s = tree.load()
    assert [(e.rule, e.source) for e in s.rule_entries()] == [("WebFetch", "policySettings")]
    assert s.managed_rules_only and any("1 other rule" in w for w in s.warnings)


def test_missing_everything_is_quiet(tree: Tree) -> None:
    s = tree.load()
    assert (s.layers, s.warnings, list(s.rule_entries())) == ([], [], [])
    assert s.default_mode is None and s.model is None and s.env == {}
    assert json.loads(json.dumps(s.summary()))["files"] == []
