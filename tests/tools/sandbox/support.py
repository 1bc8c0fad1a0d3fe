"""Shared helpers for the sandbox tests (no tests here): a project, a session, a real run.

Every run is real: bubblewrap, the seccomp filter, the proxy on the sandbox's loopback, real
git and curl. A test that needs the sandbox skips only where it cannot start here, with the
probe's reason (``needs_sandbox``).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from permissions.types import PermissionContext, PermissionMode, PermissionRule
from tools.builtin.bash import BASH_TOOL, BashInput
from tools.builtin.bash.format import BashOutput
from tools.context import Callbacks, RuntimeState, ToolOptions, ToolServices, ToolUseContext
from tools.sandbox import SandboxConfig, SandboxSession, backend_for

__all__ = ["World", "needs_sandbox", "run_bash", "world_at"]

_PROBE = backend_for().probe()
needs_sandbox = pytest.mark.skipif(
    not _PROBE.ok, reason=f"the sandbox cannot start here: {_PROBE.reason}"
)


@dataclass
class World:
    """A git project, a directory outside it, and a sandbox session over them."""

    root: Path
    project: Path
    outside: Path
    config: SandboxConfig = field(default_factory=lambda: SandboxConfig(enabled=True))
    sandbox: SandboxSession | None = None
    rules: tuple[PermissionRule, ...] = ()
    mode: PermissionMode = PermissionMode.DEFAULT
    callbacks: Callbacks = field(default_factory=Callbacks)
    state: RuntimeState = field(default_factory=RuntimeState)

    def session(self, **changes: Any) -> SandboxSession:
        if changes or self.sandbox is None:
            self.config = replace(self.config, **changes)
            self.sandbox = SandboxSession(self.config, home=self.root / "home")
        return self.sandbox

    def ctx(self) -> ToolUseContext:
        return ToolUseContext(
            permissions=PermissionContext(
                mode=self.mode, rules=self.rules, cwd=self.project, home=self.root / "home"
            ),
            options=ToolOptions(
                session_dir=self.root / "session", services=ToolServices(sandbox=self.session())
            ),
            state=self.state,
            callbacks=self.callbacks,
        )


def world_at(tmp_path: Path) -> World:
    project = tmp_path / "project"
    outside = tmp_path / "outside"
    for d in (project, outside, tmp_path / "home", tmp_path / "session"):
        d.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (outside / "file.txt").write_text("outside\n")
    return World(tmp_path, project, outside)


async def run_bash(world: World, command: str, **fields: Any) -> BashOutput:
    """One Bash call through the tool (not the pipeline: permissions are tested elsewhere)."""
    ctx = world.ctx()
    result = await BASH_TOOL.call(BashInput(command=command, **fields), ctx, lambda _p: None)
    assert isinstance(result.data, BashOutput)
    return result.data
