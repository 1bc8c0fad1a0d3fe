"""``nerve`` start-up as a user runs it: the real entry point on a pty, through the bench hook.

The app's ``NERVE_BENCH_FIRST_FRAME`` hook records ``sys.modules`` at the first painted frame,
then the moment the session is ready (or why it failed), then exits. No timing is asserted here;
``bench/tui.py`` measures it.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

import pytest

NERVE = Path(sys.executable).with_name("nerve")
REPO = Path(__file__).resolve().parents[3]
# Heavy packages the first frame must not wait for: the model SDK, MCP, the Bash grammar,
# document readers. (``tree_sitter`` itself is imported by Textual's TextArea, the prompt,
# whenever it is installed.)
HEAVY = ("anthropic", "mcp", "tree_sitter_bash", "pypdf", "PIL")

pytestmark = pytest.mark.skipif(not NERVE.exists(), reason="the nerve console script is missing")


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """An environment with a private HOME and data/config dirs, and no ANTHROPIC_ variables."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "NERVE_", "CLAUDE_"))
    }
    env.update(
        HOME=str(home),
        NERVE_DATA_DIR=str(tmp_path / "data"),
        NERVE_CONFIG_DIR=str(home / ".nerve"),
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        NERVE_POLICY_DIR=str(tmp_path / "policy"),
        NERVE_CLAUDE_POLICY_DIR=str(tmp_path / "claude-policy"),
        TERM="xterm-256color",
    )
    env.update(extra)
    return env


def run_on_pty(
    argv: list[str], env: dict[str, str], cwd: Path, timeout: float = 30
) -> tuple[int, bytes]:
    """Run ``argv`` on a 100x30 pty, draining its output; returns (exit status, output)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    proc = subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, start_new_session=True
    )
    os.close(slave)
    output = b""
    deadline = time.monotonic() + timeout
    try:
        while True:
            if time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(f"nerve did not exit in {timeout} s: {output[-2000:]!r}")
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: every writer closed the pty
                    chunk = b""
                if not chunk:
                    break
                output += chunk
            elif proc.poll() is not None:
                break
        rc = proc.wait(timeout=10)
    finally:
        os.close(master)
    return rc, output


def start_nerve(tmp_path: Path, *args: str) -> tuple[dict[str, Any], bytes]:
    """Run ``nerve ARGS`` through the first-frame hook; returns (its record, the pty output)."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    record_path = tmp_path / "first-frame.json"
    env = clean_env(
        tmp_path,
        ANTHROPIC_API_KEY="test-dummy-key",
        ANTHROPIC_BASE_URL="http://127.0.0.1:9",  # nothing listens; no request before a prompt
        NERVE_BENCH_FIRST_FRAME=str(record_path),
    )
    rc, output = run_on_pty([str(NERVE), *args], env, project)
    assert rc == 0, output[-2000:]
    assert record_path.exists(), f"the app never reached its first frame: {output[-2000:]!r}"
    record: dict[str, Any] = json.loads(record_path.read_text())
    return record, output


def test_first_frame_comes_before_the_heavy_imports(tmp_path: Path) -> None:
    record, output = start_nerve(tmp_path)
    assert b"Welcome to Nerve" in output  # the frame really reached the terminal
    modules = set(record["modules"])
    assert "agent_cli.tui.app" in modules and "textual.app" in modules
    loaded = sorted(m for m in modules if m.split(".")[0] in HEAVY)
    assert loaded == [], f"imported before the first frame: {loaded}"
    # Nor any part of the session: settings, the tool registry, the loop. (The sanitiser every
    # widget shows foreign text through is one stdlib module, ``re`` only; ``tools.records`` is
    # the dataclass decorator, stdlib only; ``tools.messages`` the API's message shapes as
    # TypedDicts, ``typing`` only.)
    ours = {m for m in modules if m.split(".")[0] in ("config", "tools", "permissions")}
    assert ours <= {"tools", "tools.messages", "tools.records", "tools.terminal_text"}, sorted(ours)
    assert "agent_cli.session.agent_session" not in modules and "pydantic" not in modules
    # Nor the palette's own commands (textual.app imports the palette itself, which Nerve
    # turns off: its system commands load only when it opens).
    assert "textual.system_commands" not in modules
    # Then the session was built behind the frame, without error.
    assert record["error"] is None
    assert record["ready"] >= record["t"]
    assert record["ready_cpu"] >= record["cpu"] > 0  # CPU seconds, for bench/tui.py


def test_a_session_error_is_shown_in_the_app(tmp_path: Path) -> None:
    record, output = start_nerve(tmp_path, "--allowedTools", "Bash(")
    assert "Bash(" in record["error"] and "must end with ')'" in record["error"]
    assert b"Could not start the session" in output


def test_missing_api_key_is_a_plain_error_before_the_tui(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    proc = subprocess.run(
        [str(NERVE)],
        env=clean_env(tmp_path),
        cwd=project,
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith("nerve: No API key found. Set ANTHROPIC_API_KEY")
    assert proc.stdout == ""  # no terminal control sequences: the TUI never started


def test_base_url_alone_is_enough_and_bypass_follows_the_flags() -> None:
    from agent_cli.frontends.interactive import bypass_requested, has_credentials
    from agent_cli.options import parse_run_options

    assert has_credentials({"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080"})
    assert has_credentials({"ANTHROPIC_API_KEY": "sk-ant-x"})
    assert not has_credentials({"ANTHROPIC_API_KEY": "  ", "ANTHROPIC_BASE_URL": ""})
    assert bypass_requested(parse_run_options(["--dangerously-skip-permissions"]))
    assert bypass_requested(parse_run_options(["--permission-mode", "bypassPermissions"]))
    assert not bypass_requested(parse_run_options(["--permission-mode", "plan"]))
    assert not bypass_requested(parse_run_options([]))


def test_a_token_a_cloud_flag_or_a_key_helper_in_settings_count_as_credentials(
    tmp_path: Path,
) -> None:
    from agent_cli.frontends.interactive import has_credentials

    dirs = {
        "NERVE_CONFIG_DIR": str(tmp_path / "nerve"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "NERVE_POLICY_DIR": str(tmp_path / "policy"),
        "NERVE_CLAUDE_POLICY_DIR": str(tmp_path / "cpolicy"),
    }
    project = tmp_path / "project"
    project.mkdir()
    assert not has_credentials(dirs, cwd=project)
    assert has_credentials({**dirs, "ANTHROPIC_AUTH_TOKEN": "tok"}, cwd=project)
    assert has_credentials({**dirs, "CLAUDE_CODE_USE_VERTEX": "1"}, cwd=project)
    (tmp_path / "claude").mkdir()
    (tmp_path / "claude" / "settings.json").write_text('{"apiKeyHelper": "echo k"}')
    assert has_credentials(dirs, cwd=project)


def test_a_key_in_settings_env_alone_starts_the_app(tmp_path: Path) -> None:
    # The shell has no ANTHROPIC_ variable; ~/.claude/settings.json supplies endpoint and key.
    project = tmp_path / "project"
    project.mkdir()
    record_path = tmp_path / "first-frame.json"
    env = clean_env(tmp_path, NERVE_BENCH_FIRST_FRAME=str(record_path))
    settings = Path(env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    settings.parent.mkdir(parents=True)
    creds = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_AUTH_TOKEN": "t"}
    settings.write_text(json.dumps({"env": creds}))
    rc, output = run_on_pty([str(NERVE)], env, project)
    assert rc == 0, output[-2000:]
    record = json.loads(record_path.read_text())
    assert record["error"] is None and record["ready"] >= record["t"]


@pytest.mark.timeout(30)
def test_the_credentials_check_never_opens_a_fifo(tmp_path: Path) -> None:
    from agent_cli.frontends.interactive import has_credentials

    (tmp_path / "claude").mkdir()
    os.mkfifo(tmp_path / "claude" / "settings.json")  # reading it would block forever
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude"), "NERVE_CONFIG_DIR": str(tmp_path)}
    assert not has_credentials(env, cwd=tmp_path)
