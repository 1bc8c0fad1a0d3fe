"""``/sandbox``: the OS sandbox's state, what is missing, its mode, and switching it.

``/sandbox`` shows whether Bash runs confined (and why not), the dependencies to install, the
writable and hidden paths, the network and socket rules and how processes are contained.
``/sandbox auto-allow`` (confined commands run without asking), ``/sandbox regular`` (confined,
but the usual prompts) and ``/sandbox off`` switch it for this session and save the choice in
``.claude/settings.local.json``, as Claude Code does.
"""

from __future__ import annotations

from typing import Any

from agent_cli.slash.registry import SlashCommand, SlashHost

__all__ = ["SANDBOX_COMMAND", "sandbox_lines"]

_MODES = {
    "auto-allow": "auto-allow: sandboxed Bash commands run without asking",
    "regular": "regular permissions: sandboxed, and Bash asks as usual",
    "off": "off",
}
_INSTALL = "install them (Debian/Ubuntu: apt-get install bubblewrap socat) and restart Nerve"


def _list(items: list[str]) -> str:
    return ", ".join(items) if items else "none"


def sandbox_lines(s: dict[str, Any]) -> list[str]:
    """The ``/sandbox`` text for a ``sandbox_status()`` dict."""
    if not s.get("enabled"):
        head = "Sandbox: off — Bash runs unconfined, under the normal permission rules"
    elif not s.get("available"):
        head = (
            f"Sandbox: enabled, but it cannot start: {s.get('reason')}. Bash runs unconfined, "
            "under the normal permission rules"
        )
    else:
        head = f"Sandbox: on ({s.get('backend')}) · {_MODES.get(s.get('mode', ''), '')}"
    lines = [head]
    if s.get("missing"):
        lines.append(f"Missing dependencies: {_list(s['missing'])} — {_INSTALL}")
    if "mode" not in s:
        return lines
    lines += [
        "Writable: the working directories, --add-dir directories, the session's temp dir "
        f"($TMPDIR); allowWrite: {_list(s['writable'])}",
        "Read-only inside them: .git/hooks, .git/config, .claude/, .nerve/, settings and shell "
        f"rc files; denyWrite: {_list(s['deny_write'])}",
        f"Hidden (denyRead): {_list(s['deny_read'])}",
        f"Network: through Nerve's proxy only; allowed domains: {_list(s['allowed_domains'])}; "
        f"allowed this session: {_list(s['session_domains'])}; any other domain asks (refused "
        "in print mode and background tasks)",
        f"Unix sockets: {s['unix_sockets']}",
        f"Outside the sandbox (normal permissions): excludedCommands: {_list(s['excluded'])}; "
        "dangerouslyDisableSandbox: "
        + ("allowed, and asks" if s["allow_unsandboxed"] else "ignored (allowUnsandboxedCommands)"),
        f"Processes: {s['containment']}",
    ]
    lines += [f"Warning: {w}" for w in s.get("warnings", [])]
    lines += [f"Note: {n}" for n in s.get("notes", [])]
    lines.append(
        "Switch with /sandbox auto-allow | regular | off (saved to .claude/settings.local.json)"
    )
    return lines


async def _sandbox(host: SlashHost, args: str) -> None:
    session = host.session
    status = getattr(session, "sandbox_status", None)
    if not callable(status):
        host.say("The sandbox is not available in this session.")
        return
    mode = args.strip().lower()
    if mode:
        switch = getattr(session, "set_sandbox_mode", None)
        if not callable(switch):
            host.say("The sandbox cannot be switched in this session.", "error")
            return
        try:
            path = switch(mode)
        except (ValueError, OSError) as exc:
            host.say(f"Could not switch the sandbox: {exc}", "error")
            return
        host.say(f"Sandbox mode: {_MODES.get(mode, mode)} (saved to {path})")
        host.refresh_status()
    host.say("\n".join(sandbox_lines(status())))


SANDBOX_COMMAND = SlashCommand(
    "sandbox",
    "show the OS sandbox; auto-allow|regular|off switches it",
    _sandbox,
    argument_hint="[auto-allow|regular|off]",
)
