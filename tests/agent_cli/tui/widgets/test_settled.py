"""The finished parts of a long streamed answer live in ONE widget of pre-rendered lines
(``tui/settled.py``), rendered once each; an append waits for a just-typed key's echo."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from textual import events

from agent_cli.loop.events import TextDelta, TurnFinished
from agent_cli.tui.widgets.markdown import (
    APPEND_INTERVAL_S,
    KEY_QUIET_S,
    MAX_KEY_DEFER_S,
    TYPING_APPEND_INTERVAL_S,
    TYPING_POLL_S,
    AssistantMessage,
    append_pause,
    key_defer,
)
from agent_cli.tui.widgets.settled import SettledParts
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.fakes import FakeSession

LINES = [f"line {i:05d}: the quick brown fox jumps over the dog" for i in range(1500)]
TEXT = "".join(line + "\n" for line in LINES)  # one endless paragraph: cut at line ends


def _chunks(text: str, size: int = 40) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _answer_with(session: FakeSession, text: str) -> None:
    session.turns = [[*(TextDelta(d) for d in _chunks(text)), TurnFinished("end_turn", 1)]]


async def _stream_it(pilot: Any, app: Any) -> None:
    """Send a prompt and wait until the whole answer has streamed."""
    app.prompt_input.load_text("stream it")
    await pilot.press("enter")
    await wait_for(pilot, lambda: not app.turn_running, timeout=30)


def _screen_text(settled: SettledParts) -> str:
    return " ".join(settled.render_line(y).text.strip() for y in range(len(settled._lines)))


async def test_a_long_answer_keeps_its_finished_parts_in_one_widget_rendered_once(
    session: FakeSession, make_app: Any
) -> None:
    _answer_with(session, TEXT)
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await _stream_it(pilot, app)
        await pilot.pause()
        kinds = [type(w).__name__ for w in app.conversation.children]
        # welcome, prompt, the finished parts, the last part: not one widget per part
        assert kinds == ["NoticeLine", "UserMessage", "SettledParts", "AssistantMessage"]
        settled = app.query_one(SettledParts)
        last = app.conversation.children[-1]
        assert isinstance(last, AssistantMessage)
        assert len(settled.parts) >= 3
        # each part rendered when it finished, and all once more when the scrollbar took a
        # column; never on later appends and layouts
        assert settled.rendered_parts <= 2 * len(settled.parts)
        rendered = settled.rendered_parts
        for _ in range(3):
            app.conversation.refresh(layout=True)
            app.say("more below")
            await pilot.pause()
        assert settled.rendered_parts == rendered
        assert settled.source + "\n" + last.source == TEXT  # every cut took one line end
        assert settled.size.height == len(settled._lines) > 0
        shown = _screen_text(settled)
        retired = settled.source.splitlines()
        for line in (retired[0], retired[len(retired) // 2], retired[-1]):
            assert line in shown  # a paragraph of soft breaks: the lines run on, all there


async def test_a_paragraph_break_between_two_parts_stays_a_blank_line(
    session: FakeSession, make_app: Any
) -> None:
    para = "word " * 200 + "\n\n"
    text = para * 20
    _answer_with(session, text)
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.load_text("paragraphs")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.turn_running, timeout=30)
        settled = app.query_one(SettledParts)
        assert len(settled.parts) >= 2
        blank = [y for y in range(len(settled._lines)) if not settled.render_line(y).text.strip()]
        # one blank line per paragraph break, inside a part or cut out between two, and one
        # after the last part (the break before the part still on screen as it streamed)
        assert len(blank) == settled.source.count("\n\n") + 1
        assert blank[-1] == len(settled._lines) - 1
        assert all(b - a > 1 for a, b in itertools.pairwise(blank))


async def test_a_new_width_renders_the_finished_parts_again(
    session: FakeSession, make_app: Any
) -> None:
    _answer_with(session, TEXT)
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await _stream_it(pilot, app)
        settled = app.query_one(SettledParts)
        before, height = settled.rendered_parts, len(settled._lines)
        await pilot.resize_terminal(60, SIZE[1])
        await wait_for(pilot, lambda: settled.rendered_parts == before + len(settled.parts))
        assert len(settled._lines) > height  # narrower: more lines
        assert all(len(settled.render_line(y).text) <= 60 for y in range(len(settled._lines)))
        assert settled.source.splitlines()[-1] in _screen_text(settled)


def test_an_append_waits_for_the_echo_of_a_key_just_typed() -> None:
    now = 100.0
    assert key_defer(now, now, 0.0) == KEY_QUIET_S  # just typed: wait for its frame
    assert 0 < key_defer(now, now - KEY_QUIET_S / 2, 0.0) < KEY_QUIET_S
    assert key_defer(now, now - 1.0, 0.0) == 0.0  # no recent key: go now
    assert key_defer(now, 0.0, 0.0) == 0.0  # no key yet
    # fast typing never holds the answer back for more than MAX_KEY_DEFER_S in a row
    assert key_defer(now, now, MAX_KEY_DEFER_S) == 0.0
    assert key_defer(now, now, MAX_KEY_DEFER_S - 0.01) <= 0.01 + 1e-9


def test_while_typing_the_next_append_follows_a_key_not_the_clock() -> None:
    started, ended = 100.0, 100.5  # the last append
    # not typing: a steady cadence after the last append
    assert append_pause(ended, started, ended, 0.0, False) == pytest.approx(APPEND_INTERVAL_S)
    assert append_pause(ended + APPEND_INTERVAL_S, started, ended, 0.0, False) == 0.0
    # typing, no key since the append began: look again soon, never past the longest interval
    assert append_pause(ended + 0.1, started, ended, started - 0.2, True) == pytest.approx(
        TYPING_POLL_S
    )
    late = ended + TYPING_APPEND_INTERVAL_S
    assert append_pause(late - 0.003, started, ended, started - 0.2, True) < TYPING_POLL_S
    assert append_pause(late, started, ended, started - 0.2, True) == 0.0
    # a key since it began (even while it ran): the next append goes right behind its echo
    assert append_pause(ended + 0.1, started, ended, started + 0.01, True) == 0.0


async def test_the_streamed_answer_knows_when_the_last_key_was_typed(
    session: FakeSession, make_app: Any
) -> None:
    session.turns = [[TextDelta("hello "), TextDelta("world"), TurnFinished("end_turn", 1)]]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hi")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.turn_running and app.query(AssistantMessage))
        answer = app.query(AssistantMessage).last()
        assert not answer.typing()  # the Enter that sent the prompt left no draft
        await pilot.press("x")
        assert answer.typing()  # a draft, just typed: appends follow the keys
        assert answer.last_key() == app.prompt_input.last_key_time > 0
        # a key the terminal delivered but the app has not handled yet counts from its arrival
        app.post_message(events.Key("y", "y"))
        assert answer.last_key() == app.key_arrived > app.prompt_input.last_key_time
