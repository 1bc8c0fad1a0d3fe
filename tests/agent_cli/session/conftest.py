"""Shared helpers for the session tests: the e2e harness plus transcript and process helpers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agent_cli.e2e.conftest import Harness
from tests.agent_cli.e2e.conftest import harness as harness


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """In-process code writes under the same data dir the harness gives ``nerve``."""
    d = tmp_path / "data"
    monkeypatch.setenv("NERVE_DATA_DIR", str(d))
    return d


def main_transcripts(h: Harness) -> list[Path]:
    """Session files of the project (not sidechains), oldest first."""
    root = h.root / "data" / "projects"
    files = [p for p in root.glob("*/*.jsonl")]
    return sorted(files, key=lambda p: p.stat().st_mtime_ns)


def records(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_bytes().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def wait_for(predicate: Callable[[], bool], timeout: float = 15.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what or predicate}")


def kill_group(pid_file: Path) -> None:
    """SIGKILL the process group whose leader wrote its pid (``echo $$ > file``) into the file."""
    try:
        pgid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    # zombies count as alive for killpg; look for a live member
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


@pytest.fixture
def killer() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes a test starts; any still running at the end are killed (never leaked)."""
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
