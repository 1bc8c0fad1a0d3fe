"""Bash in an OS sandbox: bubblewrap on Linux, a proxy for the network, one boundary for all.

``settings`` resolves Claude Code's ``sandbox`` keys; ``platform`` is the seam between OSes
(Linux bubblewrap now; macOS Seatbelt says "not supported on this platform yet"); ``policy``
decides which calls run confined; ``mounts`` (with ``gitguard`` for what git reads and
``readrules`` for ``Read(...)`` deny rules), ``seccomp``, ``netns`` and ``proxy`` build one
confined run; ``session`` holds a session's sandbox; ``boundary`` gives the file tools the same
limits. What it blocks and what it cannot: ``docs/sandbox.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tools.sandbox.boundary import (
    bash_auto_allowed,
    boundary_rules,
    with_boundary_rules,
    write_verdict,
)
from tools.sandbox.gitlinks import begin_watch, end_watch
from tools.sandbox.platform import Availability, Bubblewrap, backend_for
from tools.sandbox.policy import Confinement, confinement
from tools.sandbox.proxy import AskAnswer, DomainGate, NetworkAsk
from tools.sandbox.readrules import denied_reads
from tools.sandbox.session import SECRET_ENV, PreparedRun, SandboxSession
from tools.sandbox.settings import SandboxConfig, resolve_sandbox_config
from tools.sandbox.stubs import sweep_dead_journals

if TYPE_CHECKING:
    from tools.context import ToolUseContext

__all__ = [
    "SECRET_ENV",
    "AskAnswer",
    "Availability",
    "Bubblewrap",
    "Confinement",
    "DomainGate",
    "NetworkAsk",
    "PreparedRun",
    "SandboxConfig",
    "SandboxSession",
    "backend_for",
    "bash_auto_allowed",
    "begin_watch",
    "boundary_rules",
    "confinement",
    "denied_reads",
    "end_watch",
    "get_sandbox",
    "resolve_sandbox_config",
    "sweep_dead_journals",
    "with_boundary_rules",
    "write_verdict",
]


def get_sandbox(ctx: ToolUseContext) -> SandboxSession | None:
    """The session's sandbox (``ctx.options.services.sandbox``), or None."""
    return ctx.options.services.sandbox
