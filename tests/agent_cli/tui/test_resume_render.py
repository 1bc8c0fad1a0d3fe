"""A resumed session renders as it did live (issue 21): the same tool headers and summary
lines ("Updated hello.py: 1 addition, 1 removal" with the diff, "Rejected edit of hello.py"),
results collapsed the same, the same Markdown table and code. A session runs under Pilot over
the real loop and the scripted server; a new app opens it with ``-c``; the conversation's
rendered lines are compared (notices aside: the welcome, "Resumed session ..." differ)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from textual.geometry import Region
from textual.widget import Widget

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from agent_cli.tui.screens.permission import PermissionScreen
from agent_cli.tui.widgets.items import NoticeLine
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import _app, project, serve  # noqa: F401

ANSWER = """It prints **hello** now.

| file | change |
|------|--------|
| hello.py | spelling |
| README | none |

```python
print("hello")
```
"""


TODOS = [
    {"content": "Fix the typo", "status": "completed", "activeForm": "Fixing the typo"},
    {"content": "Say hi", "status": "pending", "activeForm": "Saying hi"},
]


def _lines(widget: Widget) -> list[str]:
    """What ``widget`` paints, line by line (its children's, for a container), each line as
    its text and the styles of its runs."""
    if widget.children:
        return [ln for child in widget.children for ln in _lines(child)]
    width, height = widget.size
    if not width or not height:
        return []
    strips = widget.render_lines(Region(0, 0, width, height))
    return [
        "".join(f"{seg.text}" if not seg.style else f"[{seg.style}]{seg.text}" for seg in strip)
        for strip in strips
    ]


def _kind(widget: Widget) -> str:
    name = type(widget).__name__  # a finished live answer and a stored one: the same painting
    return "assistant" if name in ("AssistantMessage", "MarkdownText") else name


def _shown(app: Any) -> list[tuple[str, list[str]]]:
    return [
        (_kind(w), _lines(w)) for w in app.conversation.children if not isinstance(w, NoticeLine)
    ]


async def _answer(pilot: Any, key: str) -> None:
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, PermissionScreen), timeout=15)
    await pilot.press(key)


def _scenario(hello: Path) -> Scenario:
    edit = {"file_path": str(hello), "old_string": "helo", "new_string": "hello"}
    rename = {"file_path": str(hello), "old_string": "hello", "new_string": "hi"}
    bash = {"command": "python3 hello.py && seq 1 30", "description": "Run hello.py"}
    return Scenario.of(
        Turn([text("Let me look."), tool_use("Read", {"file_path": str(hello)}, id="r1")]),
        Turn(
            [text("I'll fix the typo."), tool_use("Edit", edit, id="e1")],
            match=Match(tool_result_for="r1"),
        ),
        Turn([tool_use("Bash", bash, id="b1")], match=Match(tool_result_for="e1")),
        Turn([tool_use("TodoWrite", {"todos": TODOS}, id="t1")], match=Match(tool_result_for="b1")),
        Turn([text(ANSWER)], match=Match(tool_result_for="t1")),
        Turn([tool_use("Edit", rename, id="e2")], match=Match(contains_text="say hi")),
    )


async def test_a_resumed_session_renders_as_it_did_live(project: Path, serve: Any) -> None:  # noqa: F811
    hello = project / "hello.py"
    hello.write_text('print("helo")\n')
    server = serve(_scenario(hello))
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.load_text("fix hello.py and run it")
        await pilot.press("enter")
        await _answer(pilot, "y")  # the edit
        await _answer(pilot, "y")  # the command
        await wait_for(pilot, lambda: not app.turn_running and len(server.requests) == 5, 15)
        app.prompt_input.load_text("now say hi")
        await pilot.press("enter")
        await _answer(pilot, "n")  # rejected: the turn ends
        await wait_for(pilot, lambda: not app.turn_running and len(server.requests) == 6, 15)
        await pilot.pause()
        live = _shown(app)
    server.assert_done()
    assert hello.read_text() == 'print("hello")\n'

    again = _app(project, continue_session=True)
    async with again.run_test(size=SIZE) as pilot:
        await wait_for(
            pilot,
            lambda: any(n.notice_text.startswith("Resumed") for n in again.query(NoticeLine)),
            timeout=15,
        )
        await pilot.pause()
        resumed = _shown(again)

    flat = "\n".join(ln for _, lines in live for ln in lines)
    flat = re.sub(r"\[[^\]]*\]", "", flat)  # the text without its styles
    assert "Updated hello.py: 1 addition, 1 removal" in flat
    assert "Rejected edit of hello.py" in flat and "Read 1 line" in flat
    assert "… +" in flat  # the long Bash output is collapsed
    assert "TodoWrite(2 items)" in flat and "Say hi" in flat  # the tool's header, the checklist
    assert [kind for kind, _ in resumed] == [kind for kind, _ in live]
    for (kind, shown_live), (_, shown_resumed) in zip(live, resumed, strict=True):
        assert shown_resumed == shown_live, kind


async def test_the_conversation_reloaded_by_rewind_shows_the_calls_as_live(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
) -> None:
    from agent_cli.tui.screens.rewind import RewindScreen

    target = project / "a.txt"
    target.write_text("old\n")
    server = serve(
        Scenario.of(
            Turn([tool_use("Read", {"file_path": str(target)}, id="r1")]),
            Turn(
                [tool_use("Write", {"file_path": str(target), "content": "new\n"}, id="w1")],
                match=Match(tool_result_for="r1"),
            ),
            Turn([text("Rewrote it.")], match=Match(tool_result_for="w1")),
            Turn([text("Hello.")], match=Match(contains_text="second")),
        )
    )
    app = _app(project, permission_mode="bypassPermissions", dangerously_skip_permissions=True)
    async with app.run_test(size=SIZE) as pilot:
        for prompt, requests in (("rewrite a.txt", 3), ("second", 4)):
            app.prompt_input.load_text(prompt)
            await pilot.press("enter")
            await wait_for(
                pilot, lambda n=requests: not app.turn_running and len(server.requests) == n, 15
            )
        first_turn = _shown(app)[:4]  # the prompt, two calls, the answer; then "second"
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RewindScreen), timeout=5)
        await pilot.press("enter")  # the newest prompt ("second")
        await pilot.press("down", "enter")  # the conversation only
        await wait_for(pilot, lambda: app.prompt_input.text == "second", timeout=5)
        await pilot.pause()
        reloaded = _shown(app)
    server.assert_done()
    assert target.read_text() == "new\n"
    flat = re.sub(r"\[[^\]]*\]", "", "\n".join(ln for _, lines in first_turn for ln in lines))
    assert "Read 1 line" in flat and "Updated a.txt: 1 addition, 1 removal" in flat
    assert reloaded == first_turn
