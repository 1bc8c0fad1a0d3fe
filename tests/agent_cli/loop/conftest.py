"""Shared fixtures for the context tests: a clean environment and a real session helper."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agent_cli.options import RunOptions
from agent_cli.session.agent_session import AgentSession
from agent_cli.testing import ScriptedServer


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project directory with HOME, data and policy dirs of its own; all folders trusted."""
    for key in list(os.environ):
        if key.startswith(("ANTHROPIC_", "NERVE_", "CLAUDE_")):
            monkeypatch.delenv(key)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("NERVE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("NERVE_CONFIG_DIR", str(home / ".nerve"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("NERVE_POLICY_DIR", str(tmp_path / "policy"))
    monkeypatch.setenv("NERVE_CLAUDE_POLICY_DIR", str(tmp_path / "cpolicy"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    monkeypatch.setenv("NERVE_TRUST_ALL", "1")
    proj = tmp_path / "project"
    proj.mkdir()
    return proj


def open_session(server: ScriptedServer, project: Path, **opts: Any) -> AgentSession:
    os.environ["ANTHROPIC_BASE_URL"] = server.base_url
    return AgentSession.create(RunOptions(**opts), cwd=project)


async def collect(events: Any) -> list[Any]:
    return [event async for event in events]


def transcript_records(session: AgentSession) -> list[dict[str, Any]]:
    assert session.transcript is not None
    out = []
    for line in session.transcript.path.read_bytes().splitlines():
        if line.strip():
            out.append(json.loads(line))
    return out


def settings(project: Path, data: dict[str, Any]) -> None:
    (project / ".nerve").mkdir(exist_ok=True)
    (project / ".nerve" / "settings.json").write_text(json.dumps(data))


def hook_logger(project: Path, event: str) -> Path:
    """A command hook for ``event`` that appends its stdin to a file; returns that file."""
    log = project.parent / f"{event}.jsonl"
    script = project.parent / f"{event}.sh"
    script.write_text(f"#!/bin/bash\ncat >> {log}\necho >> {log}\n")
    script.chmod(0o755)
    return log
