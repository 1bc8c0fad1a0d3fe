"""``/status`` and ``/doctor`` (``agent_cli.slash.diagnostics`` gathers what they say).

Both work in the app and in ``nerve -p``. ``/doctor`` reports every check, then one summary
line; when a check failed that line is an error, so ``nerve -p /doctor`` exits 1.
"""

from __future__ import annotations

from agent_cli.slash.diagnostics import doctor_checks, status_lines
from agent_cli.slash.registry import SlashCommand, SlashHost

__all__ = ["STATUS_COMMANDS"]


async def _status(host: SlashHost, args: str) -> None:
    host.say("\n".join(status_lines(host.session)))


async def _doctor(host: SlashHost, args: str) -> None:
    checks = await doctor_checks(host.session)
    host.say("\n".join(["Nerve doctor:", *(c.line() for c in checks)]))
    failed = [c.name for c in checks if c.state == "fail"]
    warned = [c.name for c in checks if c.state == "warn"]
    if failed:
        host.say(f"{len(failed)} problem(s) found: {', '.join(dict.fromkeys(failed))}.", "error")
    elif warned:
        host.say(f"No problems; {len(warned)} warning(s): {', '.join(dict.fromkeys(warned))}.")
    else:
        host.say("No problems found.")


STATUS_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand(
        "status",
        "version, model, endpoint, cwd, mode, settings files and MCP servers",
        _status,
    ),
    SlashCommand(
        "doctor",
        "check the API key, the endpoint, ripgrep, git, bubblewrap and the settings",
        _doctor,
    ),
)
