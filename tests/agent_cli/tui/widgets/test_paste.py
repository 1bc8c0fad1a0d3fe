"""Big pastes in the app (issue 21): the input and the conversation show ``[Pasted text #N +M
lines]``, the request the scripted server receives has the text whole; small pastes go in as
text; a deleted placeholder sends nothing; history recall and ``!cmd`` expand too; a resumed
conversation shows a big stored prompt's head, not all of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import events

from agent_cli.testing import Scenario, Turn, text
from agent_cli.tui.widgets.conversation import entries_from_messages
from agent_cli.tui.widgets.items import UserMessage
from agent_cli.tui.widgets.paste import PastedTexts, is_big_paste, stored_prompt_view
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import _app, project, serve  # noqa: F401

BIG = "".join(f"line {i}\n" for i in range(10_000))


def _sent(server: Any, n: int = 0) -> str:
    """The user text of the ``n``-th request's last message."""
    content = server.requests[n].body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if b.get("type") == "text")


async def _paste(app: Any, pilot: Any, pasted: str) -> None:
    app.post_message(events.Paste(pasted))  # as a terminal's bracketed paste arrives
    await pilot.pause()


async def test_a_10000_line_paste_is_a_placeholder_and_the_model_gets_it_whole(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
) -> None:
    server = serve(Scenario.of(Turn([text("10,000 lines, counted.")])))
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"count these: ")
        await _paste(app, pilot, BIG)
        await wait_for(pilot, lambda: "[Pasted" in app.prompt_input.text)
        assert app.prompt_input.text == "count these: [Pasted text #1 +10000 lines]"
        assert app.prompt_input.document.line_count == 1
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.turn_running and bool(server.requests), timeout=20)
        shown = [m.prompt_text for m in app.query(UserMessage)]
        assert shown == ["count these: [Pasted text #1 +10000 lines]"]
    server.assert_done()
    assert _sent(server) == "count these: " + BIG


async def test_a_small_paste_goes_in_as_text_and_a_deleted_placeholder_sends_nothing(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
) -> None:
    server = serve(Scenario.of(Turn([text("ok")])))
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await _paste(app, pilot, "two\nlines")
        assert app.prompt_input.text == "two\nlines"
        await _paste(app, pilot, "x" * 1500)  # one long line is big too
        assert app.prompt_input.text == "two\nlines[Pasted text #1]"
        app.prompt_input.load_text("two lines")  # the placeholder deleted
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.turn_running and bool(server.requests), timeout=20)
    server.assert_done()
    assert _sent(server) == "two lines"


async def test_a_recalled_prompt_expands_again_and_a_shell_command_runs_whole(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
) -> None:
    server = serve(Scenario.of(Turn([text("first")]), Turn([text("second")])))
    script = "".join(f"echo shell-{i}\n" for i in range(12))
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await _paste(app, pilot, "".join(f"row {i}\n" for i in range(20)))
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.turn_running and len(server.requests) == 1, 20)
        await pilot.press("up")  # history: the placeholder as typed
        assert app.prompt_input.text == "[Pasted text #1 +20 lines]"
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.turn_running and len(server.requests) == 2, 20)
        app.prompt_input.load_text("!")
        app.prompt_input.move_cursor((0, 1))
        await _paste(app, pilot, script)
        assert app.prompt_input.text == "![Pasted text #2 +12 lines]"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "shell-11" in _shell_output(app), timeout=20)
        assert all(f"shell-{i}" in _shell_output(app) for i in range(12))
    server.assert_done()
    rows = "".join(f"row {i}\n" for i in range(20))
    assert _sent(server, 0) == rows
    assert _sent(server, 1) == rows


def _shell_output(app: Any) -> str:
    from agent_cli.tui.widgets.items import ToolCall

    return "\n".join(str(getattr(w, "result_text", "")) for w in app.query(ToolCall))


def test_the_store_expands_only_its_own_placeholders() -> None:
    store = PastedTexts()
    first = store.add("a\nb\n")
    assert first == "[Pasted text #1 +2 lines]"
    assert store.expand(f"see {first} and {first}") == "see a\nb\n and a\nb\n"
    assert store.expand("[Pasted text #1 +9 lines]") == "[Pasted text #1 +9 lines]"  # not ours
    assert store.expand("[Pasted text #7]") == "[Pasted text #7]"
    assert store.add("[Pasted text #1 +2 lines]") == "[Pasted text #2]"
    assert store.expand("[Pasted text #2]") == "[Pasted text #1 +2 lines]"  # not re-expanded
    assert not is_big_paste("\n".join("x" * 10)) and is_big_paste("\n".join("x" * 11))


def test_a_resumed_big_prompt_shows_its_head() -> None:
    [entry] = entries_from_messages([{"role": "user", "content": BIG}])
    assert entry.text == BIG  # the entry keeps what was sent
    view = stored_prompt_view(entry.text)
    assert view.splitlines()[:10] == [f"line {i}" for i in range(10)]
    assert view.endswith("… +9990 lines") and len(view.splitlines()) == 11
    assert stored_prompt_view("short\nprompt") == "short\nprompt"


async def test_pasted_cr_line_breaks_are_newlines(project: Path, serve: Any) -> None:  # noqa: F811
    serve(Scenario.of())
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await _paste(app, pilot, "one\rtwo\r\nthree")
        assert app.prompt_input.text == "one\ntwo\nthree"
        app.prompt_input.load_text("")
        await _paste(app, pilot, "\r".join(f"r{i}" for i in range(30)))
        assert app.prompt_input.text == "[Pasted text #1 +29 lines]"
        assert app.prompt_input.pasted_texts.texts[1] == "\n".join(f"r{i}" for i in range(30))
