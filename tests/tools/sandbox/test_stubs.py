"""Stub mount points: held while a command runs, gone after it, and after a crash."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tools.sandbox.stubs import StubRegistry, sweep_dead_journals

REPO = Path(__file__).resolve().parents[3]


def test_a_stub_lives_as_long_as_its_last_user(tmp_path: Path) -> None:
    reg = StubRegistry(tmp_path / "journals")
    stub = tmp_path / "proj" / ".claude"
    stub.parent.mkdir()
    assert reg.acquire(stub) and reg.acquire(stub)  # two concurrent commands
    reg.release([stub])
    assert stub.is_dir()
    reg.release([stub])
    assert not stub.exists() and list((tmp_path / "journals").iterdir()) == []


def test_an_existing_path_or_a_missing_parent_is_never_a_stub(tmp_path: Path) -> None:
    reg = StubRegistry(tmp_path / "journals")
    (tmp_path / "real").mkdir()
    assert not reg.acquire(tmp_path / "real")
    assert not reg.acquire(tmp_path / "no-parent" / ".claude")
    reg.release([tmp_path / "real"])
    assert (tmp_path / "real").is_dir()  # not ours: untouched


def test_a_stub_someone_filled_is_left_alone(tmp_path: Path) -> None:
    reg = StubRegistry(tmp_path / "journals")
    stub = tmp_path / ".nerve"
    assert reg.acquire(stub)
    (stub / "user-file").write_text("x")  # written from outside the sandbox meanwhile
    reg.release([stub])
    assert (stub / "user-file").exists()


CRASHER = """
import os, sys
from pathlib import Path
from tools.sandbox.stubs import StubRegistry
StubRegistry(Path(sys.argv[1])).acquire(Path(sys.argv[2]))
print("held", flush=True)
os.kill(os.getpid(), 9)
"""


def test_the_next_start_removes_a_crashed_owners_stubs(tmp_path: Path) -> None:
    journals, stub = tmp_path / "journals", tmp_path / "proj" / ".claude"
    stub.parent.mkdir()
    env = dict(os.environ, PYTHONPATH=str(REPO), NERVE_DATA_DIR=str(tmp_path / "data"))
    proc = subprocess.run(
        [sys.executable, "-c", CRASHER, str(journals), str(stub)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.stdout.strip() == "held" and proc.returncode == -9
    assert stub.is_dir()
    assert sweep_dead_journals(journals) == [stub]
    assert not stub.exists() and list(journals.iterdir()) == []


def test_a_file_stub_holds_its_content_and_goes_only_if_unchanged(tmp_path: Path) -> None:
    reg = StubRegistry(tmp_path / "journals")
    git = tmp_path / ".git"
    git.mkdir()
    commondir, worktree = git / "commondir", git / "config.worktree"
    assert reg.acquire(commondir, b".\n") and reg.acquire(worktree, b"")
    assert commondir.read_bytes() == b".\n" and worktree.read_bytes() == b""
    worktree.write_bytes(b"[user]\n")  # changed from outside meanwhile: the user's now
    reg.release([commondir, worktree])
    assert not commondir.exists() and worktree.read_bytes() == b"[user]\n"


FILE_CRASHER = """
import os, sys
from pathlib import Path
from tools.sandbox.stubs import StubRegistry
StubRegistry(Path(sys.argv[1])).acquire(Path(sys.argv[2]), b".\\n")
print("held", flush=True)
os.kill(os.getpid(), 9)
"""


def test_the_next_start_removes_a_crashed_owners_file_stub(tmp_path: Path) -> None:
    journals, stub = tmp_path / "journals", tmp_path / ".git" / "commondir"
    stub.parent.mkdir()
    env = dict(os.environ, PYTHONPATH=str(REPO), NERVE_DATA_DIR=str(tmp_path / "data"))
    proc = subprocess.run(
        [sys.executable, "-c", FILE_CRASHER, str(journals), str(stub)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.stdout.strip() == "held" and stub.read_bytes() == b".\n"
    assert sweep_dead_journals(journals) == [stub]
    assert not stub.exists() and list(journals.iterdir()) == []
