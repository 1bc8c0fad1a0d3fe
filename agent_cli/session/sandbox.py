"""The session's OS sandbox: built from settings, switched by ``/sandbox``, shown by ``/sandbox``.

:func:`session_sandbox` resolves the ``sandbox`` settings of every layer, probes the platform
once when the sandbox is enabled, and says so once (a start-up warning) when it cannot start:
Bash then runs unconfined under the normal permission rules — nothing is auto-allowed. With
``failIfUnavailable`` the session does not start at all. ``SandboxAdmin`` is the part of
``AgentSession`` behind ``/sandbox``: the state, the missing dependencies, the mode, and switching
it (written to ``.claude/settings.local.json``; the boundary rules of the loop's context follow).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_cli.session.resume import SessionError
from tools.sandbox import (
    SandboxSession,
    resolve_sandbox_config,
    with_boundary_rules,
)

if TYPE_CHECKING:
    from agent_cli.loop.agent_loop import AgentLoop

__all__ = ["SANDBOX_MODES", "SandboxAdmin", "session_sandbox"]

# /sandbox <mode>: (enabled, autoAllowBashIfSandboxed)
SANDBOX_MODES: dict[str, tuple[bool, bool]] = {
    "auto-allow": (True, True),
    "regular": (True, False),
    "off": (False, True),
}


def _protected_dirs() -> list[Path]:
    """Nerve's own state: the data dir (its folder-trust store) and custom config dirs."""
    from tools.process.owners import lease_dir

    out = [lease_dir().parent]
    for name in ("NERVE_CONFIG_DIR", "CLAUDE_CONFIG_DIR"):
        if value := os.environ.get(name):
            out.append(Path(value).expanduser())
    return out


def session_sandbox(settings: Any) -> tuple[SandboxSession, list[str]]:
    """The session's sandbox and the warnings to show once (see the module docstring)."""
    from tools.sandbox.stubs import sweep_dead_journals

    config = resolve_sandbox_config(settings.layers, project_root=settings.project_root)
    sandbox = SandboxSession(config, protect=_protected_dirs())
    warnings = list(config.warnings)
    if config.enabled:
        sweep_dead_journals()
        available = sandbox.availability
        if not available.ok:
            if config.fail_if_unavailable:
                raise SessionError(
                    f"sandbox.failIfUnavailable is set and the sandbox cannot start: "
                    f"{available.reason}"
                )
            warnings.append(
                f"sandbox.enabled is set, but the sandbox cannot start: {available.reason}. "
                "Bash runs without it, under the normal permission rules (nothing is allowed "
                "because of the sandbox)."
            )
    return sandbox, warnings


class SandboxAdmin:
    """``/sandbox``: read and switch the sandbox of ``loop``'s session."""

    def __init__(self, loop: AgentLoop, cwd: Path) -> None:
        self._loop = loop
        self._cwd = cwd

    def current(self) -> SandboxSession | None:
        """The session's sandbox (the tools' services may be replaced: read live)."""
        return self._loop.ctx.options.services.sandbox

    def status(self) -> dict[str, Any]:
        """What ``/sandbox`` shows (plain data, so the slash wing needs no sandbox types)."""
        from tools.process.containment import containment

        sandbox = self.current()
        if sandbox is None:
            return {"available": False, "enabled": False, "reason": "no sandbox in this session"}
        c = sandbox.config
        probe = sandbox.availability
        return {
            "enabled": c.enabled,
            "available": probe.ok,
            "active": sandbox.active,
            "reason": probe.reason,
            "backend": sandbox.backend.name,
            "missing": list(probe.missing),
            "mode": "off" if not c.enabled else ("auto-allow" if c.auto_allow else "regular"),
            "allow_unsandboxed": c.allow_unsandboxed,
            "excluded": list(c.excluded_commands),
            "writable": [str(p) for p in c.allow_write],
            "deny_read": list(c.deny_read),
            "deny_write": list(c.deny_write),
            "allowed_domains": list(c.allowed_domains),
            "session_domains": sorted(sandbox.approved_domains),
            "unix_sockets": "all open" if c.allow_all_unix_sockets else "closed",
            "notes": [*probe.notes, *c.notes],
            "warnings": list(c.warnings),
            "containment": containment().describe(),
        }

    def set_mode(self, mode: str) -> str:
        """Switch to ``mode`` (``auto-allow``, ``regular``, ``off``) now and in
        ``<project>/.claude/settings.local.json``; returns the file written."""
        from config import find_project_root, set_settings_value

        if mode not in SANDBOX_MODES:
            raise ValueError(f"unknown sandbox mode {mode!r} (expected {', '.join(SANDBOX_MODES)})")
        sandbox = self.current()
        if sandbox is None:
            raise ValueError("this session has no sandbox")
        enabled, auto = SANDBOX_MODES[mode]
        path = find_project_root(self._cwd) / ".claude" / "settings.local.json"
        set_settings_value(path, ("sandbox", "enabled"), enabled)
        if enabled:
            set_settings_value(path, ("sandbox", "autoAllowBashIfSandboxed"), auto)
        sandbox.set_enabled(enabled, auto)
        ctx = self._loop.ctx
        self._loop.ctx = replace(
            ctx, permissions=with_boundary_rules(ctx.permissions, sandbox.config)
        )
        return str(path)
