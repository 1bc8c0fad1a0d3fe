"""What a hook process sees: ``sh -c``, Claude Code's marker variables, public mode names."""

from __future__ import annotations

import json
from pathlib import Path

from permissions.types import Decision
from tools.hooks.runner import HookRunner, HookSession, public_permission_mode


def _runner(tmp_path: Path, command: str) -> HookRunner:
    config = {"PreToolUse": [{"hooks": [{"type": "command", "command": command}]}]}
    return HookRunner(config, session=HookSession("s", None, tmp_path))


async def test_hook_runs_under_sh_with_markers(tmp_path: Path) -> None:
    out = tmp_path / "seen.txt"
    r = _runner(tmp_path, f'echo "$0 $CLAUDECODE $NERVE $CLAUDE_PROJECT_DIR" > "{out}"')
    await r.pre_tool_use(
        tool_name="Bash", tool_input={"command": "ls"}, tool_use_id="t", permission_mode="plan"
    )
    assert out.read_text().split() == ["sh", "1", "1", str(tmp_path)]


async def test_internal_mode_is_never_in_a_payload(tmp_path: Path) -> None:
    out = tmp_path / "in.json"
    r = _runner(tmp_path, f'cat > "{out}"')
    await r.pre_tool_use(
        tool_name="Bash", tool_input={"command": "ls"}, tool_use_id="t", permission_mode="bubble"
    )
    assert json.loads(out.read_text())["permission_mode"] == "default"
    await r.run_event("PreToolUse", {"tool_name": "Bash", "permission_mode": "bubble"})
    assert json.loads(out.read_text())["permission_mode"] == "default"


def test_public_mode_names() -> None:
    for mode in ("default", "plan", "acceptEdits", "bypassPermissions", "dontAsk", "auto"):
        assert public_permission_mode(mode) == mode
    assert public_permission_mode("bubble") == "default"
    assert public_permission_mode(None) is None


async def test_a_hook_type_nerve_cannot_run_denies_what_it_guards(tmp_path: Path) -> None:
    notes: list[str] = []
    config = {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "mcp_tool", "tool": "safe"}]}],
        "PermissionRequest": [{"hooks": [{"type": "mcp_tool", "tool": "check"}]}],
        "Stop": [{"hooks": [{"type": "mcp_tool", "tool": "stop"}]}],
    }
    r = HookRunner(config, session=HookSession("s", None, tmp_path), notify=notes.append)
    assert (
        len(notes) == 3 and "cannot run in Nerve yet; every call it matches is denied" in notes[0]
    )
    out = await r.pre_tool_use(
        tool_name="Bash", tool_input={"command": "ls"}, tool_use_id="t", permission_mode="default"
    )
    assert out.decision == Decision.DENY and "'mcp_tool'" in (out.decision_reason or "")
    other = await r.pre_tool_use(
        tool_name="Read", tool_input={"file_path": "x"}, tool_use_id="t", permission_mode="default"
    )
    assert other.decision is None  # its matcher still applies
    perm = await r.permission_request(
        tool_name="Bash", tool_input={"command": "ls"}, permission_mode="default", suggestions=[]
    )
    assert perm.decision == Decision.DENY and "'mcp_tool'" in (perm.message or "")
    stop = await r.run_event("Stop", {})
    assert stop.ran == () and not stop.blocked and "it does not run" in notes[2]
