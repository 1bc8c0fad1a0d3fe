"""The same boundary for the file tools: what the sandbox refuses, Read/Edit/Grep/... refuse.

With the sandbox enabled, the model must not walk around it with a file tool:

* ``filesystem.denyRead`` becomes ``Read(...)`` deny rules and ``filesystem.denyWrite``
  ``Edit(...)`` deny rules (source ``sandbox``), so the engine refuses Read, Grep, Glob and the
  editing tools there, and Grep and Glob drop such files from their results;
* a write outside the sandbox's writable set (working directories, ``--add-dir``, the session's
  temp dir, ``allowWrite``) is refused by :func:`write_verdict`, called for every editing tool.

Protected paths inside the writable set (``.git/hooks``, ``.claude/``, ...) keep the engine's
usual safety check: a human may still approve one edit there. ``allowRead`` re-opens a path
for Bash only; the file tools stay stricter. The rules apply while the sandbox is *enabled*,
even where it cannot start: the user asked for the boundary.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from permissions.types import (
    Decision,
    PermissionContext,
    PermissionRule,
    ReasonKind,
    RuleBehavior,
    RuleSource,
    RuleValue,
    Verdict,
)
from tools.sandbox.session import SandboxSession
from tools.sandbox.settings import SandboxConfig

__all__ = ["bash_auto_allowed", "boundary_rules", "with_boundary_rules", "write_verdict"]


def boundary_rules(config: SandboxConfig) -> tuple[PermissionRule, ...]:
    """``Read``/``Edit`` deny rules for ``denyRead``/``denyWrite`` (nothing while disabled)."""
    if not config.enabled:
        return ()
    root = Path("/")
    out = [
        PermissionRule(RuleSource.SANDBOX, RuleBehavior.DENY, RuleValue(tool, "/" + path), root)
        for tool, paths in (("Read", config.deny_read), ("Edit", config.deny_write))
        for path in paths
    ]
    return tuple(out)


def with_boundary_rules(perms: PermissionContext, config: SandboxConfig) -> PermissionContext:
    """``perms`` with the sandbox's rules replaced by those of ``config``."""
    kept = tuple(r for r in perms.rules if r.source is not RuleSource.SANDBOX)
    return replace(perms, rules=(*kept, *boundary_rules(config)))


def _writable(sandbox: SandboxSession, working_dirs: Sequence[Path]) -> list[str]:
    roots = [*working_dirs, *sandbox.config.allow_write]
    if sandbox.has_tmp_dir():
        roots.append(sandbox.tmp_dir())
    return [os.path.realpath(r) for r in roots]


def write_verdict(
    sandbox: SandboxSession | None, paths: Sequence[Path], working_dirs: Sequence[Path]
) -> Verdict | None:
    """DENY for a write the sandbox would refuse (outside its writable set), else None."""
    if sandbox is None or not sandbox.config.enabled:
        return None
    roots = _writable(sandbox, working_dirs)
    for path in paths:
        real = os.path.realpath(path)
        if not any(real == r or real.startswith(r.rstrip("/") + "/") for r in roots):
            return Verdict(
                Decision.DENY,
                f"the sandbox is on and {path} is outside its writable directories (the working "
                "directories, --add-dir and sandbox.filesystem.allowWrite)",
                ReasonKind.SANDBOX,
            )
    return None


def bash_auto_allowed(sandbox: SandboxSession | None, command: str, disable: bool) -> bool:
    """Will this Bash call run confined, with autoAllowBashIfSandboxed on?"""
    if sandbox is None or not sandbox.active:
        return False
    conf = sandbox.confinement(command, disable)
    return conf.sandboxed and conf.auto_allow
