"""Claude Code's ``sandbox`` keys, through the real settings loader: merge, paths, bad input."""

from __future__ import annotations

from pathlib import Path

from tests.config.conftest import Tree
from tests.config.conftest import tree as tree
from tools.sandbox import resolve_sandbox_config
from tools.sandbox.settings import SandboxConfig, expand_sandbox_path


def _resolve(tree: Tree) -> SandboxConfig:
    loaded = tree.load()
    return resolve_sandbox_config(loaded.layers, project_root=loaded.project_root, home=tree.home)


def test_defaults_are_claude_codes() -> None:
    c = SandboxConfig()
    assert (c.enabled, c.auto_allow, c.allow_unsandboxed, c.fail_if_unavailable) == (
        False,
        True,
        True,
        False,
    )


def test_keys_merge_across_layers_and_paths_resolve_per_layer(tree: Tree) -> None:
    (tree.home / "kube").mkdir()
    (tree.project / "out").mkdir()
    tree.user(
        {
            "sandbox": {
                "enabled": True,
                "autoAllowBashIfSandboxed": False,
                "filesystem": {"allowWrite": ["~/kube"], "denyRead": ["~/.aws/credentials"]},
                "network": {"allowedDomains": ["github.com"]},
            }
        }
    )
    tree.proj(
        {
            "sandbox": {
                "autoAllowBashIfSandboxed": True,
                "excludedCommands": ["docker *"],
                "filesystem": {"allowWrite": ["out", "//abs/x"], "denyWrite": ["./gen/**"]},
                "network": {"allowedDomains": ["*.npmjs.org", "GitHub.com"]},
            }
        }
    )
    c = _resolve(tree)
    assert c.enabled and c.auto_allow  # the project's scalar beats the user's
    assert c.sources["autoAllowBashIfSandboxed"] == "projectSettings"
    assert set(c.allow_write) == {tree.project / "out", tree.home / "kube"}  # //abs/x: missing
    assert any("/abs/x does not exist; skipped" in n for n in c.notes)
    assert c.deny_read == (str(tree.home / ".aws/credentials"),)
    assert c.deny_write == (str(tree.project / "gen/**"),)
    assert c.allowed_domains == ("*.npmjs.org", "github.com")  # lists concatenate, deduped
    assert c.excluded_commands == ("docker *",)


def test_an_unknown_key_is_a_warning_naming_it_and_the_rest_applies(tree: Tree) -> None:
    path = tree.proj(
        {
            "sandbox": {
                "enabled": True,
                "filesytem": {"denyRead": ["/x"]},
                "network": {"allowedDomain": ["a.com"], "allowedDomains": ["b.com"]},
                "ignoreViolations": {"*": ["/tmp"]},
            }
        }
    )
    c = _resolve(tree)
    assert c.enabled and c.allowed_domains == ("b.com",)
    [first, second] = c.warnings
    assert "unknown setting 'sandbox.filesytem' (did you mean 'filesystem'?)" in first
    assert "'sandbox.network.allowedDomain' (did you mean 'allowedDomains'?)" in second
    assert str(path.relative_to(tree.home.parent)) in first or ".nerve/settings.json" in first
    assert "sandbox.ignoreViolations is accepted but has no effect in Nerve" in c.notes


def test_a_wrong_type_is_a_broken_file_but_keeps_its_deny_rules(tree: Tree) -> None:
    tree.proj({"sandbox": {"enabled": "yes"}, "permissions": {"deny": ["Bash(rm:*)"]}})
    loaded = tree.load()
    assert any("sandbox.enabled" in w and "this file is ignored" in w for w in loaded.warnings)
    assert [r.rule for r in loaded.rules_for("deny")] == ["Bash(rm:*)"]
    assert not _resolve(tree).enabled  # fails closed: no sandbox means no auto-allow either


def test_managed_domains_only_keeps_the_managed_list(tree: Tree) -> None:
    tree.user({"sandbox": {"network": {"allowedDomains": ["user.example"]}}})
    tree.managed(
        {
            "sandbox": {
                "enabled": True,
                "network": {"allowedDomains": ["corp.example"], "allowManagedDomainsOnly": True},
            }
        }
    )
    c = _resolve(tree)
    assert c.managed_domains_only and c.allowed_domains == ("corp.example",)


def test_allow_managed_domains_only_outside_managed_settings_is_ignored(tree: Tree) -> None:
    tree.user({"sandbox": {"network": {"allowManagedDomainsOnly": True}}})
    assert not _resolve(tree).managed_domains_only


def test_path_prefixes() -> None:
    base, home = Path("/base"), Path("/home/u")
    assert expand_sandbox_path("/abs", base, home) == "/abs"
    assert expand_sandbox_path("//abs/y", base, home) == "/abs/y"
    assert expand_sandbox_path("~/.ssh", base, home) == "/home/u/.ssh"
    assert expand_sandbox_path("./rel/../x", base, home) == "/base/x"
    assert expand_sandbox_path("rel", base, home) == "/base/rel"


def test_linux_unix_socket_paths_and_socks_are_noted(tree: Tree) -> None:
    tree.user(
        {
            "sandbox": {
                "network": {"allowUnixSockets": ["/var/run/docker.sock"], "socksProxyPort": 1080}
            }
        }
    )
    notes = " ".join(_resolve(tree).notes)
    assert "allowUnixSockets" in notes and "allowAllUnixSockets" in notes
    assert "socksProxyPort is not supported yet" in notes
