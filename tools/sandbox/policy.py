"""Which Bash calls run in the sandbox, and which of them it lets run without asking.

A call runs sandboxed when the sandbox is enabled *and* works here, unless its command matches
``sandbox.excludedCommands`` (Bash rule syntax, any simple command of it) or it sets
``dangerouslyDisableSandbox`` while ``allowUnsandboxedCommands`` is on. Those two run outside,
under the normal permission rules: the sandbox never allows what it does not confine. With
``allowUnsandboxedCommands`` off the flag is ignored (and the model is told).

``autoAllowBashIfSandboxed`` (default on) makes a confined call that would *ask* run without
asking; deny rules, ask rules and safety checks come first (``permissions.engine``).
"""

from __future__ import annotations

from tools.records import datarecord
from tools.sandbox.settings import SandboxConfig

__all__ = ["Confinement", "confinement"]


@datarecord(frozen=True, slots=True)
class Confinement:
    """The answer for one Bash call. ``notice`` is for the model (why the flag was ignored)."""

    sandboxed: bool
    reason: str
    auto_allow: bool = False
    notice: str | None = None


def _excluded(config: SandboxConfig, command: str) -> str | None:
    if not config.excluded_commands:
        return None
    from permissions.bash import bash_rule_matches

    for pattern in config.excluded_commands:
        if bash_rule_matches(pattern, command):
            return pattern
    return None


def confinement(
    config: SandboxConfig, available: bool, command: str, disable: bool = False
) -> Confinement:
    """Whether ``command`` runs sandboxed (see the module docstring)."""
    if not config.enabled:
        return Confinement(False, "the sandbox is off")
    if not available:
        return Confinement(False, "the sandbox is not available here")
    pattern = _excluded(config, command)
    if pattern is not None:
        return Confinement(False, f"excluded by sandbox.excludedCommands ({pattern})")
    notice = None
    if disable:
        if config.allow_unsandboxed:
            return Confinement(False, "dangerouslyDisableSandbox: runs outside, asks as usual")
        notice = (
            "[sandbox] dangerouslyDisableSandbox was ignored: sandbox.allowUnsandboxedCommands "
            "is false, so every command runs in the sandbox"
        )
    return Confinement(True, "runs in the sandbox", auto_allow=config.auto_allow, notice=notice)
