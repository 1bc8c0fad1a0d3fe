"""Snapshot tests (pytest-textual-snapshot): the main screen, a tool widget, the permission modal.

Deterministic by construction: fixed size, fixed cwd and usage, no clock in the UI.
Regenerate with ``pytest tests/agent_cli/tui/test_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_cli.loop.events import TextDelta, ToolFinished, ToolProgress, ToolStarted, TurnFinished
from agent_cli.transcripts.history import PromptHistory
from agent_cli.tui.app import NerveApp
from agent_cli.tui.screens.permission import PermissionScreen
from agent_cli.tui.widgets.items import ToolCall
from tests.agent_cli.tui.conftest import wait_for
from tests.agent_cli.tui.fakes import Ask, FakeSession, ask_rule, bash_prompt

SIZE = (100, 30)
ANSWER = """I looked at the project. Here is the plan:

1. Run the **tests** with `pytest`
2. Fix the failing assertion in `calc.py`

```python
def add(a, b):
    return a + b
```
"""


def _app(session: FakeSession, tmp_path: Path) -> NerveApp:
    app = NerveApp(
        session,
        cwd=Path("/project"),
        history=PromptHistory("/project", tmp_path / "history.jsonl"),
        typing_pause_s=0.0,
        guard_s=0.0,
    )
    app.prompt_input.cursor_blink = False
    return app


async def _send(pilot: Any, text: str) -> None:
    pilot.app.prompt_input.load_text(text)
    await pilot.press("enter")


def test_conversation(snap_compare: Any, tmp_path: Path) -> None:
    session = FakeSession(
        turns=[
            [
                TextDelta(ANSWER),
                ToolStarted("t1", "Bash", {"command": "pytest -q"}, "Bash(pytest -q)"),
                ToolProgress("t1", None, "collecting"),
                ToolFinished("t1", "Bash", "F.\n1 failed, 1 passed\nE assert 4 == 5\nmore", True),
                TextDelta("One test fails; fixing it now."),
                TurnFinished("end_turn", 1),
            ]
        ]
    )
    app = _app(session, tmp_path)

    async def run_before(pilot: Any) -> None:
        await _send(pilot, "fix the failing test")
        await wait_for(pilot, lambda: not app.turn_running)
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
    session.check()


def test_tool_widget_expanded(snap_compare: Any, tmp_path: Path) -> None:
    output = "\n".join(f"src/module_{i}.py" for i in range(12))
    session = FakeSession(
        turns=[
            [
                ToolStarted("g1", "Glob", {"pattern": "src/**/*.py"}, "Glob(src/**/*.py)"),
                ToolFinished("g1", "Glob", output, False),
                TurnFinished("end_turn", 1),
            ]
        ]
    )
    session.set_mode("acceptEdits")
    app = _app(session, tmp_path)

    async def run_before(pilot: Any) -> None:
        await _send(pilot, "list python files")
        await wait_for(pilot, lambda: not app.turn_running)
        app.query_one(ToolCall).focus()
        await pilot.press("enter")
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
    session.check()


def test_permission_modal(snap_compare: Any, tmp_path: Path) -> None:
    prompt = bash_prompt(
        "npm test -- --coverage",
        suggestions=("npm test *",),
        reason="npm test runs project scripts",
        rule=ask_rule("npm *"),
    )
    session = FakeSession(turns=[[Ask(prompt)]])
    app = _app(session, tmp_path)

    async def run_before(pilot: Any) -> None:
        await _send(pilot, "run the tests")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
