"""Path rules: anchors, globs, gitignore depth rules, the src/** asymmetry, symlinks, `..`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from permissions.paths import expand_path, is_inside_working_dirs, path_rule_matches
from permissions.rules import make_rule
from permissions.types import RuleSource
from tests.permissions.conftest import World


def _m(world: World, rule: str, path: str | Path, behavior: str = "deny", base=None) -> bool:
    r = make_rule(rule, behavior, RuleSource.PROJECT, base)
    return path_rule_matches(r, path, world.ctx())


def test_double_slash_is_filesystem_root(world: World) -> None:
    assert _m(world, "Read(//etc/passwd)", "/etc/passwd")
    assert not _m(world, "Read(//etc/passwd)", world.cwd / "etc" / "passwd")


def test_tilde_is_home(world: World) -> None:
    assert _m(world, "Read(~/.ssh/**)", world.home / ".ssh" / "id_rsa")
    assert not _m(world, "Read(~/.ssh/**)", world.cwd / ".ssh" / "id_rsa")


def test_single_slash_is_the_rule_base_dir(world: World) -> None:
    base = world.root / "outside"
    assert _m(world, "Read(/secret.txt)", base / "secret.txt", base=base)
    assert not _m(world, "Read(/secret.txt)", world.cwd / "secret.txt", base=base)
    # without a base dir, `/x` is the cwd
    assert _m(world, "Read(/src/pkg/mod.py)", world.cwd / "src/pkg/mod.py")


def test_relative_and_dot_slash_are_the_cwd(world: World) -> None:
    assert _m(world, "Edit(src/pkg/mod.py)", world.cwd / "src/pkg/mod.py")
    assert _m(world, "Edit(./src/pkg/mod.py)", world.cwd / "src/pkg/mod.py")
    assert not _m(world, "Edit(src/pkg/mod.py)", world.root / "src/pkg/mod.py")


def test_star_stays_in_one_segment_double_star_crosses(world: World) -> None:
    assert _m(world, "Read(src/*.py)", world.cwd / "src/a.py")
    assert not _m(world, "Read(src/*.py)", world.cwd / "src/pkg/mod.py")
    assert _m(world, "Read(src/**/*.py)", world.cwd / "src/pkg/mod.py")
    assert _m(world, "Read(src/**/*.py)", world.cwd / "src/a.py")  # `**/` may be empty


def test_bare_filename_matches_at_any_depth(world: World) -> None:
    assert _m(world, "Read(.env)", world.cwd / ".env")
    assert _m(world, "Read(.env)", world.cwd / "a/b/c/.env")
    assert _m(world, "Read(*.pem)", world.cwd / "keys/deep/server.pem")
    assert not _m(world, "Read(.env)", world.root / ".env")  # not above the anchor
    assert not _m(world, "Read(.env)", world.cwd / ".env.example")


def test_directory_pattern_covers_contents(world: World) -> None:
    assert _m(world, "Read(secrets)", world.cwd / "secrets/key.pem")
    assert _m(world, "Read(./secrets/)", world.cwd / "x/secrets/deep/key.pem")


def test_single_segment_dir_glob_allow_vs_deny(world: World) -> None:
    nested = world.cwd / "lib" / "src" / "a.py"
    top = world.cwd / "src" / "a.py"
    assert _m(world, "Edit(src/**)", top, "allow")
    assert not _m(world, "Edit(src/**)", nested, "allow")  # allow: only <cwd>/src/**
    assert _m(world, "Edit(src/**)", nested, "deny")  # deny/ask: a src dir at any depth
    assert _m(world, "Edit(src/**)", nested, "ask")
    assert _m(world, "Edit(**/src/**)", nested, "allow")


def test_dotdot_is_normalised_before_matching(world: World) -> None:
    sneaky = world.cwd / "docs" / ".." / "secrets" / "k"
    assert _m(world, "Read(./secrets/**)", sneaky)
    assert not _m(world, "Read(docs/**)", sneaky, "allow")
    assert expand_path("a/../../x", world.ctx()) == world.root / "x"


def test_symlink_allow_needs_both_deny_needs_either(world: World) -> None:
    link = world.cwd / "docs" / "link.txt"
    target = world.root / "outside" / "secret.txt"
    os.symlink(target, link)
    # allow: the link matches, its target does not -> no match
    assert not _m(world, "Read(docs/**)", link, "allow")
    assert _m(world, "Read(docs/**)", world.cwd / "docs" / "plain.txt", "allow")
    # deny on the target applies through the link; deny on the link applies too
    assert _m(world, f"Read(/{target.parent}/**)".replace("///", "//"), link, "deny")
    assert _m(world, "Read(docs/link.txt)", link, "deny")


def test_character_class_and_question_mark(world: World) -> None:
    assert _m(world, "Read(file?.txt)", world.cwd / "file1.txt")
    assert _m(world, "Read(log[0-9].txt)", world.cwd / "log7.txt")
    assert not _m(world, "Read(log[!0-9].txt)", world.cwd / "log7.txt")


def test_bare_rule_matches_every_path(world: World) -> None:
    assert _m(world, "Read", "/anything/at/all")


@pytest.mark.parametrize(
    ("rel", "inside"),
    [("src/pkg/mod.py", True), ("../outside/secret.txt", False), ("new/file.txt", True)],
)
def test_inside_working_dirs(world: World, rel: str, inside: bool) -> None:
    assert is_inside_working_dirs(world.cwd / rel, world.ctx()) is inside


def test_additional_dirs_and_symlink_escape(world: World) -> None:
    ctx = world.ctx(extra_dirs=[world.root / "outside"])
    assert is_inside_working_dirs(world.root / "outside" / "secret.txt", ctx)
    link = world.cwd / "escape"
    os.symlink(world.home, link)
    assert not is_inside_working_dirs(link / "x.txt", world.ctx())


def test_explicitly_anchored_dir_glob_stays_anchored_in_deny(world: World) -> None:
    nested = world.cwd / "lib" / "src" / "a.py"
    assert not _m(world, "Edit(/src/**)", nested, "deny")
    assert _m(world, "Edit(/src/**)", world.cwd / "src" / "a.py", "deny")
    assert not _m(world, "Read(//etc/**)", world.cwd / "etc" / "x", "deny")
