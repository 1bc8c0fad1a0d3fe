"""``nerve -p`` text output on a terminal carries no control sequence from the model or a hook;
into a pipe the answer is written as it is (it is data for a program)."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
from pathlib import Path

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import NERVE, Harness

ANSWER = "Done \x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b]2;TITLE\x1b\\ here."
HOOK_SAYS = {"systemMessage": "hook \x1b]2;HOOKTITLE\x07says hi"}


def _scenario() -> Scenario:
    return Scenario.of(
        Turn([tool_use("Bash", {"command": "echo hi"}, id="t1")]),
        Turn([text(ANSWER)], match=Match(tool_result_for="t1")),
    )


def _with_hook(harness: Harness) -> None:
    hook = harness.root / "hook.sh"
    hook.write_text(f"#!/bin/sh\ncat > /dev/null\nprintf '%s' '{json.dumps(HOOK_SAYS)}'\n")
    hook.chmod(0o755)
    settings = {
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": str(hook)}]}
            ]
        }
    }
    config = Path(harness.env["NERVE_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text(json.dumps(settings))


def _run_on_a_pty(harness: Harness, args: list[str]) -> tuple[int, bytes]:
    server = harness.server(_scenario())
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            [NERVE, *args],
            cwd=harness.project,
            env=harness.env_for(server),
            stdin=subprocess.DEVNULL,
            stdout=slave,
            stderr=slave,
        )
        os.close(slave)
        out = b""
        while True:
            ready, _, _ = select.select([master], [], [], 30)
            if not ready:
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        rc = proc.wait(timeout=30)
    finally:
        os.close(master)
        server.stop()
    server.assert_done()
    return rc, out


def test_text_output_on_a_terminal_is_inert(harness: Harness) -> None:
    _with_hook(harness)
    rc, out = _run_on_a_pty(harness, ["-p", "go", "--permission-mode", "bypassPermissions"])
    shown = out.decode("utf-8", "replace")
    assert rc == 0, shown
    assert "Done" in shown and "here." in shown and "says hi" in shown
    for needle in ("\x1b]", "\x07", "\x1b[2J", "cHduZWQ", "TITLE"):
        assert needle not in shown, f"{needle!r} reached the terminal: {shown!r}"


def test_text_output_into_a_pipe_is_the_answer_as_it_is(harness: Harness) -> None:
    run = harness.run(["-p", "go", "--permission-mode", "bypassPermissions"], _scenario())
    assert run.rc == 0, run.stderr
    assert run.stdout == ANSWER + "\n"
