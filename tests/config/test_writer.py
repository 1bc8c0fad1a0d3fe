"""Atomic, locked rule writes: keep the user's file, refuse broken ones, lose nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from config import (
    ConfigRoots,
    SettingsWriteError,
    add_permission_rule,
    load_settings,
    local_settings_path,
    remove_permission_rule,
)

ROOT = Path(__file__).resolve().parents[2]


def test_creates_file_and_parent_dir(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    sub = tmp_path / "src"
    sub.mkdir()
    path = local_settings_path(sub)
    assert path == tmp_path / ".claude" / "settings.local.json"
    assert add_permission_rule(path, "allow", "Bash(npm test *)")
    assert json.loads(path.read_text()) == {"permissions": {"allow": ["Bash(npm test *)"]}}
    # what was written is what the loader reads, as a local rule
    s = load_settings(
        sub, roots=ConfigRoots(tmp_path / "h", tmp_path / "p", tmp_path / "c", environ={})
    )
    assert [(e.rule, e.source) for e in s.rule_entries()] == [("Bash(npm test *)", "localSettings")]


def test_keeps_other_keys_their_order_and_mode(tmp_path: Path) -> None:
    path = tmp_path / "settings.local.json"
    original = {
        "zeta": 1,
        "permissions": {"deny": ["WebFetch"], "allow": ["Read"], "custom": True},
        "alpha": {"nested": [1, 2]},
        "env": {"X": "ü"},
    }
    path.write_text(json.dumps(original))
    path.chmod(0o640)
    assert add_permission_rule(path, "allow", "Edit(/src/**)")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert list(data) == ["zeta", "permissions", "alpha", "env"]
    assert list(data["permissions"]) == ["deny", "allow", "custom"]
    assert data["permissions"]["allow"] == ["Read", "Edit(/src/**)"]
    assert data["alpha"] == {"nested": [1, 2]} and data["env"] == {"X": "ü"}
    assert path.stat().st_mode & 0o777 == 0o640
    # no temp files left behind
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_idempotent_and_remove(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    assert add_permission_rule(path, "deny", "Bash(rm *)")
    before = path.stat().st_mtime_ns, path.read_bytes()
    assert not add_permission_rule(path, "deny", "Bash(rm *)")
    assert not add_permission_rule(path, "deny", "  Bash(rm *) ")
    assert (path.stat().st_mtime_ns, path.read_bytes()) == before
    assert add_permission_rule(path, "ask", "Bash(rm *)")
    assert remove_permission_rule(path, "deny", "Bash(rm *)")
    assert not remove_permission_rule(path, "deny", "Bash(rm *)")
    assert json.loads(path.read_text()) == {"permissions": {"deny": [], "ask": ["Bash(rm *)"]}}
    assert not remove_permission_rule(tmp_path / "absent.json", "allow", "Read")
    assert not (tmp_path / "absent.json").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"permissions": {"allow": ["Read",]}', "invalid JSON"),
        ("[]", "not a JSON object"),
        ('{"permissions": []}', "'permissions' is not an object"),
        ('{"permissions": {"allow": "Read"}}', "'permissions.allow' is not a list"),
    ],
)
def test_refuses_broken_files_and_leaves_them(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "settings.local.json"
    path.write_text(content)
    with pytest.raises(SettingsWriteError, match=message):
        add_permission_rule(path, "allow", "Bash(ls)")
    assert path.read_text() == content


def test_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        add_permission_rule(tmp_path / "s.json", "always", "Read")
    with pytest.raises(ValueError):
        add_permission_rule(tmp_path / "s.json", "allow", "  ")
    with pytest.raises(ValueError):
        add_permission_rule(tmp_path / "s.json", "allow", "Bash(a\nb)")
    assert not (tmp_path / "s.json").exists()


def test_empty_file_is_treated_as_empty_object(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text("")
    assert add_permission_rule(path, "allow", "Read")
    assert json.loads(path.read_text()) == {"permissions": {"allow": ["Read"]}}


def test_symlinked_file_is_updated_at_its_target(tmp_path: Path) -> None:
    target = tmp_path / "dotfiles" / "settings.json"
    target.parent.mkdir()
    target.write_text('{"model": "x"}')
    link = tmp_path / "settings.json"
    link.symlink_to(target)
    assert add_permission_rule(link, "allow", "Read")
    assert link.is_symlink()
    assert json.loads(target.read_text()) == {"model": "x", "permissions": {"allow": ["Read"]}}


_WORKER = """
import sys
from pathlib import Path
from config.writer import add_permission_rule
path, tag, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
for i in range(count):
    add_permission_rule(path, "allow", f"Bash({tag} {i})")
"""


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / ".nerve" / "settings.local.json"
    path.parent.mkdir()
    path.write_text('{"keep": "me"}')
    count = 60
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen([sys.executable, "-c", _WORKER, str(path), tag, str(count)], env=env)
        for tag in ("a", "b", "c")
    ]
    # a reader polling meanwhile never sees a torn or invalid file
    while any(p.poll() is None for p in procs):
        assert isinstance(json.loads(path.read_text()), dict)
    assert [p.returncode for p in procs] == [0, 0, 0]
    data = json.loads(path.read_text())
    assert data["keep"] == "me"
    expected = {f"Bash({tag} {i})" for tag in "abc" for i in range(count)}
    assert set(data["permissions"]["allow"]) == expected
    assert len(data["permissions"]["allow"]) == len(expected)
