"""Issue 32 item 3: ``Read(...)`` deny rules hide their paths from sandboxed commands too."""

from __future__ import annotations

from pathlib import Path

from permissions.rules import make_rule
from tests.tools.sandbox.support import World, needs_sandbox, run_bash
from tools.sandbox.readrules import denied_reads

pytestmark = needs_sandbox


def _project(world: World) -> None:
    p = world.project
    (p / "secrets").mkdir()
    (p / "secrets" / "db.txt").write_text("PASSWORD=top-secret-1\n")
    (p / "app" / "secrets").mkdir(parents=True)
    (p / "app" / "secrets" / "api.txt").write_text("PASSWORD=top-secret-2\n")
    (p / "app" / ".env").write_text("PASSWORD=top-secret-3\n")
    (p / "open.txt").write_text("PASSWORD=in-the-open\n")


async def test_grep_cannot_read_what_a_read_deny_rule_names(world: World) -> None:
    _project(world)
    grep = "grep -r PASSWORD . 2>/dev/null; cat secrets/db.txt app/.env 2>&1; echo done"
    before = (await run_bash(world, grep)).output
    assert "top-secret-1" in before and "top-secret-3" in before  # the control: no rules
    world.rules = (
        make_rule("Read(secrets/**)", "deny", "projectSettings", world.project),
        make_rule("Read(.env)", "deny", "userSettings"),
    )
    out = await run_bash(world, grep)
    assert "PASSWORD=in-the-open" in out.output and "done" in out.output
    assert "top-secret" not in out.output, out.output
    assert out.output.count("Permission denied") == 2  # the two cat calls
    assert (world.project / "secrets" / "db.txt").read_text() == "PASSWORD=top-secret-1\n"


async def test_every_anchor_of_the_rule_syntax_reaches_the_sandbox(world: World) -> None:
    home = world.root / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("aws-key\n")
    (world.outside / "token.txt").write_text("outside-token\n")
    settings_base = world.root / "settings-base"
    (settings_base / "certs").mkdir(parents=True)
    (settings_base / "certs" / "a.pem").write_text("pem-key\n")
    (settings_base / "certs" / "readme").write_text("just-a-readme\n")
    world.rules = (
        make_rule(f"Read(/{world.outside}/token.txt)", "deny", "cliArg"),  # //abs
        make_rule("Read(~/.aws/**)", "deny", "userSettings"),
        make_rule("Read(/certs/*.pem)", "deny", "userSettings", settings_base),
        make_rule("Read(./open.txt)", "allow", "userSettings"),  # allow rules hide nothing
    )
    out = await run_bash(
        world,
        f"cat {world.outside}/token.txt {home}/.aws/credentials {settings_base}/certs/a.pem "
        f"{settings_base}/certs/readme 2>&1",
    )
    assert "just-a-readme" in out.output
    for secret in ("outside-token", "aws-key", "pem-key"):
        assert secret not in out.output, out.output


async def test_allow_read_does_not_reopen_what_a_deny_rule_hides(world: World) -> None:
    vault = world.outside / "vault"
    vault.mkdir()
    (vault / "key").write_text("the-key\n")
    (vault / "public").write_text("public\n")
    world.session(deny_read=(str(world.outside),), allow_read=(str(vault),))
    world.rules = (make_rule(f"Read(/{vault}/key)", "deny", "cliArg"),)
    out = await run_bash(world, f"cat {vault}/public {vault}/key 2>&1")
    assert out.output.splitlines()[0] == "public" and "the-key" not in out.output, out.output


def test_the_walk_hides_a_directory_whole_and_skips_git(tmp_path: Path) -> None:
    from permissions.types import PermissionContext

    (tmp_path / "a" / "secrets" / "deep").mkdir(parents=True)
    (tmp_path / ".git" / "refs" / "heads" / "secrets").mkdir(parents=True)
    (tmp_path / "x.env").write_text("")
    perms = PermissionContext(
        rules=(make_rule("Read(secrets/**)", "deny"), make_rule("Read(*.env)", "deny")),
        cwd=tmp_path,
        home=tmp_path / "home",
    )
    found = denied_reads(perms)
    assert sorted(found.paths) == [tmp_path / "a" / "secrets", tmp_path / "x.env"]
    assert found.notes == []


async def test_a_dangling_link_a_rule_names_never_breaks_bash(world: World) -> None:
    (world.project / "gone.env").symlink_to(world.root / "nowhere")
    world.rules = (make_rule("Read(*.env)", "deny", "userSettings"),)
    world.session(deny_read=(str(world.project / "also-gone.env"),))
    (world.project / "also-gone.env").symlink_to(world.root / "nowhere-either")
    assert (await run_bash(world, "echo fine")).output.strip() == "fine"
