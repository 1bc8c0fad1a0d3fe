"""End-to-end harness: a real ``nerve`` process against the scripted server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_cli.testing import Scenario, ScriptedServer

NERVE = str(Path(sys.executable).with_name("nerve"))


@dataclass
class Run:
    rc: int
    stdout: str
    stderr: str
    server: ScriptedServer

    def json(self) -> dict:
        return json.loads(self.stdout.strip().splitlines()[-1])


@dataclass
class Harness:
    root: Path
    project: Path
    env: dict[str, str]

    def server(self, scenario: Scenario) -> ScriptedServer:
        return ScriptedServer(scenario).start()

    def env_for(self, server: ScriptedServer | None, credentials: bool = True) -> dict[str, str]:
        """The process environment; ``credentials=False``: the endpoint and key must come from
        settings (none in the shell)."""
        env = dict(self.env)
        if server is not None and credentials:
            env["ANTHROPIC_BASE_URL"] = server.base_url
            env["ANTHROPIC_API_KEY"] = "test-key"
        return env

    def popen(
        self, args: Sequence[str], server: ScriptedServer | None, **kw: object
    ) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [NERVE, *args],
            cwd=self.project,
            env=self.env_for(server),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            **kw,  # type: ignore[arg-type]
        )

    def run(
        self,
        args: Sequence[str],
        scenario: Scenario | None,
        *,
        input: str | None = None,
        check_done: bool = True,
        timeout: float = 60,
        credentials: bool = True,
        server: ScriptedServer | None = None,
    ) -> Run:
        """Run ``nerve`` against ``scenario`` (or an already started ``server``)."""
        if server is None and scenario is not None:
            server = self.server(scenario)
        try:
            proc = subprocess.run(
                [NERVE, *args],
                cwd=self.project,
                env=self.env_for(server, credentials),
                input=input,
                stdin=None if input is not None else subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        finally:
            if server is not None:
                server.stop()
        if server is not None and check_done:
            assert server.failures == [], server.failures
            server.assert_done()
        return Run(proc.returncode, proc.stdout, proc.stderr, server)  # type: ignore[arg-type]

    def transcripts(self) -> list[Path]:
        return sorted((self.root / "data" / "projects").rglob("*.jsonl"))


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    home = tmp_path / "home"
    project = tmp_path / "project"
    for d in (home, project, tmp_path / "policy", tmp_path / "claude-policy"):
        d.mkdir()
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "NERVE_", "CLAUDE_"))
    }
    env.update(
        HOME=str(home),
        NERVE_DATA_DIR=str(tmp_path / "data"),
        NERVE_CONFIG_DIR=str(home / ".nerve"),
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        NERVE_POLICY_DIR=str(tmp_path / "policy"),
        NERVE_CLAUDE_POLICY_DIR=str(tmp_path / "claude-policy"),
    )
    yield Harness(tmp_path, project, env)
