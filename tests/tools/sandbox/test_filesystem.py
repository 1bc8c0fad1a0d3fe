"""Issue 22 items 1 and 6: the filesystem as a sandboxed command sees it, for real."""

from __future__ import annotations

import os
from pathlib import Path

from tests.tools.sandbox.support import World, needs_sandbox, run_bash

pytestmark = needs_sandbox


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


async def test_writes_inside_succeed_and_writes_outside_fail(world: World) -> None:
    out = await run_bash(
        world,
        f"echo in > inside.txt && mkdir -p deep/er && echo x > deep/er/f && echo ok; "
        f"echo no > {world.outside}/new.txt; echo no > /etc/nerve-test; "
        f"echo no >> {world.outside}/file.txt; cd / && touch nerve-root-test",
    )
    assert "ok" in out.output
    assert out.output.count("Read-only file system") == 4, out.output
    assert (world.project / "deep/er/f").read_text() == "x\n"
    assert not (world.outside / "new.txt").exists()
    assert (world.outside / "file.txt").read_text() == "outside\n"
    assert not Path("/etc/nerve-test").exists() and not Path("/nerve-root-test").exists()


async def test_subdirectories_of_an_allowed_directory_are_writable(world: World) -> None:
    extra = world.outside / "build"
    (extra / "a" / "b").mkdir(parents=True)
    world.session(allow_write=(extra,))
    out = await run_bash(world, f"echo y > {extra}/a/b/c.txt && mkdir {extra}/a/new && echo ok")
    assert out.output.strip() == "ok", out.output
    assert (extra / "a/b/c.txt").read_text() == "y\n" and (extra / "a/new").is_dir()


async def test_tmpdir_is_the_sessions_temp_dir_and_nothing_is_left_elsewhere(
    world: World,
) -> None:
    before = _files(world.project)
    out = await run_bash(
        world, 'echo t > "$TMPDIR/scratch" && mktemp && echo "$TMPDIR"; touch /tmp/nerve-x 2>&1'
    )
    tmp = world.session().tmp_dir()
    lines = out.output.splitlines()
    assert lines[1] == str(tmp) and lines[0].startswith(str(tmp) + "/")
    assert (tmp / "scratch").read_text() == "t\n"
    assert "Read-only file system" in lines[2]
    # no stub, no mount point, nothing in the project that the command did not write
    assert _files(world.project) == before


async def test_denyread_hides_a_file_and_a_directory_from_cat(world: World) -> None:
    secret = world.outside / "secret.txt"
    secret.write_text("s3cret\n")
    keys = world.root / "home" / ".gnupg"
    keys.mkdir()
    (keys / "private.key").write_text("k3y\n")
    world.session(deny_read=(str(secret), str(keys)))
    out = await run_bash(world, f"cat {secret}; ls {keys}; cat {keys}/private.key; echo done")
    assert "s3cret" not in out.output and "k3y" not in out.output
    assert out.output.count("Permission denied") == 3, out.output


async def test_allowread_reopens_a_path_inside_a_hidden_directory(world: World) -> None:
    hidden = world.outside / "vault"
    hidden.mkdir()
    (hidden / "public.txt").write_text("pub\n")
    (hidden / "private.txt").write_text("priv\n")
    world.session(deny_read=(str(hidden),), allow_read=(str(hidden / "public.txt"),))
    out = await run_bash(world, f"cat {hidden}/public.txt; cat {hidden}/private.txt; ls {hidden}")
    # (the names are in the error messages: look at the contents)
    assert out.output.splitlines()[0] == "pub" and "priv\n" not in out.output, out.output
    assert "No such file or directory" in out.output and "Permission denied" in out.output


async def test_a_glob_in_denyread_is_expanded(world: World) -> None:
    for name in ("a.pem", "b.pem", "c.txt"):
        (world.outside / name).write_text(name + "\n")
    world.session(deny_read=(str(world.outside / "*.pem"),))
    out = await run_bash(
        world, f"cat {world.outside}/a.pem {world.outside}/b.pem {world.outside}/c.txt"
    )
    lines = out.output.splitlines()
    assert "a.pem" not in lines and "b.pem" not in lines  # the contents: the names are in errors
    assert lines.count("c.txt") == 1 and out.output.count("Permission denied") == 2


async def test_a_symlink_or_hard_link_to_outside_does_not_open_it(world: World) -> None:
    (world.project / "escape").symlink_to(world.outside)
    out = await run_bash(
        world,
        f"echo no > escape/via-link.txt; ln {world.outside}/file.txt hard 2>&1; "
        f"echo no > /proc/self/root{world.outside}/via-proc.txt",
    )
    assert not (world.outside / "via-link.txt").exists()
    assert not (world.outside / "via-proc.txt").exists()
    assert "Invalid cross-device link" in out.output or "Operation not permitted" in out.output
    assert not (world.project / "hard").exists()
    assert (world.outside / "file.txt").read_text() == "outside\n"


async def test_protected_paths_stay_read_only_inside_the_project(world: World) -> None:
    git = world.project / ".git"
    config_before = (git / "config").read_text()
    out = await run_bash(
        world,
        "echo evil > .git/hooks/pre-commit; echo '[core]' >> .git/config; mv .git/config x; "
        "mkdir -p .claude && echo '{}' > .claude/settings.local.json; echo '{}' > .nerve/s; "
        "echo x >> .bashrc 2>/dev/null; git status --short >/dev/null && echo git-ok",
    )
    assert not (git / "hooks" / "pre-commit").exists()
    # the config stays (mv may leave a copy in x: it falls back to copying across a mount)
    assert (git / "config").read_text() == config_before
    # .claude and .nerve did not exist: stubs held them read-only, and are gone again
    assert not (world.project / ".claude").exists() and not (world.project / ".nerve").exists()
    assert "git-ok" in out.output  # reading the repository still works


async def test_existing_protected_files_in_the_project_are_read_only(world: World) -> None:
    (world.project / ".claude").mkdir()
    (world.project / ".claude" / "settings.json").write_text("{}\n")
    (world.project / ".mcp.json").write_text("{}\n")
    (world.project / ".envrc").write_text("ok\n")
    await run_bash(
        world,
        "echo 1 > .claude/settings.json; echo 1 > .claude/hooks.json; rm -f .mcp.json; "
        "echo 'curl x|sh' > .envrc",
    )
    assert (world.project / ".claude" / "settings.json").read_text() == "{}\n"
    assert not (world.project / ".claude" / "hooks.json").exists()
    assert (world.project / ".mcp.json").exists() and (
        world.project / ".envrc"
    ).read_text() == "ok\n"


async def test_rc_files_in_home_are_protected_when_home_is_writable(world: World) -> None:
    home = world.root / "home"
    (home / ".bashrc").write_text("# mine\n")
    world.session(allow_write=(home,))
    out = await run_bash(
        world, f"echo pwn >> {home}/.bashrc; echo ok > {home}/notes.txt; echo done"
    )
    assert "done" in out.output
    assert (home / ".bashrc").read_text() == "# mine\n"
    assert (home / "notes.txt").read_text() == "ok\n"


async def test_nerves_credentials_are_not_in_the_environment(world: World, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "tok-secret")
    monkeypatch.setenv("NERVE_TEST_VISIBLE", "yes")
    out = await run_bash(world, "env")
    assert "sk-secret" not in out.output and "tok-secret" not in out.output
    assert "NERVE_TEST_VISIBLE=yes" in out.output and "NERVE_SANDBOX=1" in out.output


async def test_a_missing_allowwrite_path_never_breaks_bash(world: World) -> None:
    from tools.sandbox.settings import resolve_sandbox_config

    class Layer:
        source, base_dir, label = "userSettings", world.root, "user"

        def effective(self) -> dict[str, object]:
            return {"sandbox": {"enabled": True, "filesystem": {"allowWrite": ["/no/such/dir"]}}}

    config = resolve_sandbox_config([Layer()], project_root=world.project)
    assert config.allow_write == () and "does not exist; skipped" in config.notes[0]
    world.session(allow_write=config.allow_write)
    assert (await run_bash(world, "echo fine")).output.strip() == "fine"


async def test_bwrap_gets_no_mount_of_a_missing_path(world: World) -> None:
    world.session(deny_read=(str(world.outside / "nope"),), deny_write=("/no/such/thing",))
    assert (await run_bash(world, "echo fine")).output.strip() == "fine"
    assert os.listdir(world.outside) == ["file.txt"]


async def test_a_dangling_dotfile_link_never_breaks_bash(world: World) -> None:
    (world.project / ".envrc").symlink_to(world.root / "gone")
    (world.project / ".claude").symlink_to(world.root / "also-gone")
    assert (await run_bash(world, "echo fine")).output.strip() == "fine"
