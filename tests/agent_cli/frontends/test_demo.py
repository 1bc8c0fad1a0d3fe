"""``nerve demo``: the offline tour, as a real process (print mode) and under Pilot (TUI)."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_cli.frontends.demo.scenario import AFTER_THE_END, TEST_COMMAND, build_scenario
from agent_cli.frontends.demo.tour import DemoWorkspace, demo_environment, make_demo_app
from agent_cli.options import RunOptions
from agent_cli.testing import ScriptedServer

NERVE = str(Path(sys.executable).with_name("nerve"))
SOURCE = Path(__file__).resolve().parents[3] / "agent_cli" / "frontends" / "demo" / "project"


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def user(tmp_path: Path) -> dict[str, Any]:
    """A user's machine: a project in the cwd, a HOME, a data dir, a private TMPDIR."""
    home, cwd, tmp = tmp_path / "home", tmp_path / "cwd", tmp_path / "tmp"
    for d in (home, cwd, tmp, tmp_path / "policy", tmp_path / "claude-policy"):
        d.mkdir()
    (cwd / "mathlib.py").write_text("# the user's own file, not the demo's\n")
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "NERVE_", "CLAUDE_"))
    }
    env.update(
        HOME=str(home),
        TMPDIR=str(tmp),
        NERVE_DATA_DIR=str(tmp_path / "userdata"),
        NERVE_CONFIG_DIR=str(home / ".nerve"),
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        NERVE_POLICY_DIR=str(tmp_path / "policy"),
        NERVE_CLAUDE_POLICY_DIR=str(tmp_path / "claude-policy"),
    )
    return {"cwd": cwd, "env": env, "tmp": tmp, "data": tmp_path / "userdata"}


def _demo(user: dict[str, Any], *args: str, env: dict[str, str] | None = None) -> Any:
    return subprocess.run(
        [NERVE, "demo", *args],
        cwd=user["cwd"],
        env=env or user["env"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_print_tour_fixes_the_copy_and_leaves_the_user_alone(user: dict[str, Any]) -> None:
    before = _snapshot(user["cwd"])
    proc = _demo(user, "-p", "--keep")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    # Every step of the pipeline, in order, as the log shows it.
    steps = [
        "● Read(test_mathlib.py)",
        "● Grep(",
        "mathlib.py:11:def mean(",
        "● Read(mathlib.py)",
        "● Edit(mathlib.py)",
        "● Bash(rm -rf build)",
        "⎿ denied by rule Bash(rm *)",
        "has been denied by the deny rule Bash(rm *) from projectSettings",
        f"● Bash({TEST_COMMAND})",
        "All 4 tests pass now.",
    ]
    positions = [out.find(s) for s in steps]
    assert all(p >= 0 for p in positions), [
        s for s, p in zip(steps, positions, strict=True) if p < 0
    ]
    assert positions == sorted(positions), out
    kept = Path(re.search(r"Kept the demo folder: (.+)", out).group(1))  # type: ignore[union-attr]
    assert kept.parent == user["tmp"]  # a temporary copy, never the cwd
    project = kept / "mathlib"
    assert f"Sample project copied to {project}" in out
    assert "return total(values) / len(values)" in (project / "mathlib.py").read_text()
    rerun = subprocess.run(
        [sys.executable, "-m", "unittest", "test_mathlib"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert rerun.returncode == 0, rerun.stderr
    # The user's project, data dir and config are untouched; the demo's transcript is in the copy.
    assert _snapshot(user["cwd"]) == before
    assert not user["data"].exists()
    assert not (Path(user["env"]["HOME"]) / ".nerve").exists()
    assert list((kept / "data").rglob("*.jsonl")), "the demo session was recorded in its folder"


def test_print_tour_ignores_the_users_key_and_endpoint(user: dict[str, Any]) -> None:
    env = dict(user["env"])
    # Were the demo to use these, it would fail: port 9 (discard) is closed on loopback.
    env.update(
        ANTHROPIC_API_KEY="sk-ant-user-secret",
        ANTHROPIC_BASE_URL="http://127.0.0.1:9",
        ANTHROPIC_MODEL="claude-none",
    )
    proc = _demo(user, "-p", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "All 4 tests pass now." in proc.stdout
    assert "sk-ant-user-secret" not in proc.stdout + proc.stderr
    # Without --keep the temporary folder is gone.
    assert "Removed the demo folder" in proc.stdout
    assert list(user["tmp"].iterdir()) == []


def test_bad_flag_is_a_usage_error(user: dict[str, Any]) -> None:
    proc = _demo(user, "--frobnicate")
    assert proc.returncode == 2
    assert "usage: nerve demo" in proc.stderr
    assert list(user["tmp"].iterdir()) == []


def test_the_bundled_project_really_fails_before_the_fix(tmp_path: Path) -> None:
    ws = DemoWorkspace.create(SOURCE)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "unittest", "test_mathlib"],
            cwd=ws.project,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert proc.returncode != 0 and "FAILED" in proc.stderr
        assert (ws.project / ".nerve" / "settings.json").is_file()
    finally:
        ws.remove()
    assert not ws.root.exists()


# -- the TUI tour under Pilot ------------------------------------------------------------------


@pytest.fixture
def hermetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for key in list(os.environ):
        if key.startswith(("ANTHROPIC_", "NERVE_", "CLAUDE_")):
            monkeypatch.delenv(key)
    for name in ("home", "policy", "claude-policy", "tmp"):
        (tmp_path / name).mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("NERVE_POLICY_DIR", str(tmp_path / "policy"))
    monkeypatch.setenv("NERVE_CLAUDE_POLICY_DIR", str(tmp_path / "claude-policy"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    yield tmp_path


async def _wait(pilot: Any, condition: Callable[[], Any], timeout: float = 15) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        await pilot.pause(0.02)


async def _tui_tour(
    answers: dict[str, str], afters: tuple[str, ...] = (), asks: tuple[str, ...] = ("Edit", "Bash")
) -> tuple[Any, list[str]]:
    """Run the TUI tour answering each prompt by tool name, then type each of ``afters`` once
    the turn is over (answering its prompts too); returns (workspace, assistant texts)."""
    from agent_cli.session.agent_session import AgentSession
    from agent_cli.tui.screens.permission import PermissionScreen
    from agent_cli.tui.widgets.items import NoticeLine
    from agent_cli.tui.widgets.markdown import AssistantMessage

    ws = DemoWorkspace.create(SOURCE)
    server = ScriptedServer(build_scenario(ws.project, print_mode=False, extra_turns=1)).start()
    asked: list[str] = []
    try:
        with demo_environment(server.base_url, ws):
            session = AgentSession.create(RunOptions(), cwd=ws.project, interactive=True)
            app = make_demo_app(session, ws.project, typing_pause_s=0.0, guard_s=0.0)
            async with app.run_test(size=(100, 30)) as pilot:

                async def play_turn() -> None:
                    while app.turn_running:
                        screen = app.screen
                        if isinstance(screen, PermissionScreen):
                            asked.append(screen.prompt.tool_name)
                            await pilot.press(answers[screen.prompt.tool_name])
                            await _wait(pilot, lambda s=screen: app.screen is not s)  # type: ignore[misc]
                        await pilot.pause(0.02)

                await _wait(pilot, lambda: app.turn_running)
                await play_turn()
                for after in afters:
                    shown = len(app.query(AssistantMessage))
                    app.prompt_input.load_text(after)
                    await pilot.press("enter")
                    await _wait(pilot, lambda n=shown: len(app.query(AssistantMessage)) > n)  # type: ignore[misc]
                    await play_turn()
                texts = [m.source for m in app.query(AssistantMessage)]
                notices = [n.notice_text for n in app.query(NoticeLine)]
    finally:
        server.stop()
    assert any(n.startswith("Demo: a scripted model") for n in notices), notices
    welcomes = [n for n in notices if n.startswith("✻ Welcome to Nerve")]
    assert len(welcomes) == 1 and notices.index(welcomes[0]) < notices.index(
        next(n for n in notices if n.startswith("Demo:"))
    ), notices  # one welcome, before the tour's words
    assert server.failures == [], server.failures
    assert asked == list(asks), "the Edit and the test command ask; rm is denied by rule"
    return ws, texts


async def test_tui_tour_allowing_everything_fixes_the_bug(hermetic: Path) -> None:
    ws, texts = await _tui_tour({"Edit": "y", "Bash": "y"}, afters=("thanks!",))
    try:
        assert "return total(values) / len(values)" in (ws.project / "mathlib.py").read_text()
        assert any(t.startswith("All 4 tests pass now.") for t in texts), texts
        assert any("after you allowed it" in t for t in texts)
        assert texts[-1] == AFTER_THE_END  # typing after the script gets a polite answer
    finally:
        ws.remove()


async def test_tui_tour_survives_a_declined_edit(hermetic: Path) -> None:
    # "No" ends the turn, as in Claude Code; the tour goes on when the user says so.
    ws, texts = await _tui_tour({"Edit": "n", "Bash": "y"}, afters=("go on",))
    try:
        assert "(len(values) - 1)" in (ws.project / "mathlib.py").read_text()
        assert any(t.startswith("You declined the edit") for t in texts), texts
        assert any("still fail, as expected" in t for t in texts), texts
    finally:
        ws.remove()


def test_an_unexpected_request_is_a_failure_the_demo_reports(tmp_path: Path) -> None:
    import json
    import urllib.error
    import urllib.request

    from agent_cli.frontends.demo.tour import server_problems

    with ScriptedServer(build_scenario(tmp_path)) as server:
        assert server_problems(server, print_mode=False) == []
        assert server_problems(server, print_mode=True), "print mode must play every turn"
        request = urllib.request.Request(
            server.base_url + "/v1/messages",
            data=json.dumps({"model": "x", "max_tokens": 1, "messages": []}).encode(),
            headers={"content-type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(request, timeout=10)
        problems = server_problems(server, print_mode=False)
    assert len(problems) == 1 and "unexpected request" in problems[0]
