"""Bash in an OS sandbox: bubblewrap on Linux, a proxy for the network, one boundary for all.

``settings`` resolves Claude Code's ``sandbox`` keys; ``platform`` is the seam between OSes
(Linux bubblewrap now; macOS Seatbelt says "not supported on this platform yet"); ``policy``
decides which calls run confined; ``mounts`` (with ``gitguard`` for what git reads and
``readrules`` for ``Read(...)`` deny rules), ``seccomp``, ``netns`` and ``proxy`` build one
confined run; ``session`` holds a session's sandbox; ``boundary`` gives the file tools the same
limits. What it blocks and what it cannot: ``docs/sandbox.md``.
"""

from __future__ import annotations

from typing import Any

from tools.sandbox.boundary import (
    bash_auto_allowed,
    boundary_rules,
    with_boundary_rules,
    write_verdict,
)
from tools.sandbox.platform import Availability, backend_for
from tools.sandbox.policy import Confinement, confinement
from tools.sandbox.session import SANDBOX_KEY, SECRET_ENV, PreparedRun, SandboxSession
from tools.sandbox.settings import SandboxConfig, resolve_sandbox_config

__all__ = [
    "SANDBOX_KEY",
    "SECRET_ENV",
    "Availability",
    "Confinement",
    "PreparedRun",
    "SandboxConfig",
    "SandboxSession",
    "backend_for",
    "bash_auto_allowed",
    "boundary_rules",
    "confinement",
    "get_sandbox",
    "resolve_sandbox_config",
    "with_boundary_rules",
    "write_verdict",
]


def get_sandbox(ctx: Any) -> SandboxSession | None:
    """The session's sandbox (``ctx.options.extra[SANDBOX_KEY]``), or None."""
    sandbox = ctx.options.extra.get(SANDBOX_KEY)
    return sandbox if isinstance(sandbox, SandboxSession) else None
