"""A long streamed answer moves on to fresh widgets (``tui/stream_split.py``): at paragraph
breaks, else at line ends; a code fence cut in two is closed and reopened."""

from __future__ import annotations

from typing import Any

from agent_cli.loop.events import TextDelta, TurnFinished
from agent_cli.tui.widgets.stream_split import (
    LINE_SPLIT_CHARS,
    SPLIT_CHARS,
    FenceTracker,
    split_point,
)
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.fakes import FakeSession


def _chunks(text: str, size: int = 6) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _stream(text: str) -> list[str]:
    """The widgets' texts when ``text`` streams in 6-character deltas (as the scripted server
    sends it)."""
    parts, fed, fence = [""], 0, FenceTracker()
    for delta in _chunks(text):
        cut = split_point(fed, fence, delta)
        if cut is not None:
            parts[-1] += cut[0]
            parts.append(cut[1])
            fed = len(cut[1])
        else:
            parts[-1] += delta
            fed += len(delta)
    return parts


def test_a_fence_marker_cut_across_deltas_is_still_seen() -> None:
    fence = FenceTracker()
    for delta in ("in", "tro\n``", "`py", "thon\nx = 1\n", "``", "`\nafter\n"):
        fence.feed(delta)
        if delta == "thon\nx = 1\n":
            assert fence.opener == "```python"
    assert fence.opener is None


def test_endless_lines_split_at_line_ends_without_losing_a_character() -> None:
    text = "".join(f"line {i:05d}: the quick brown fox\n" for i in range(2000))
    parts = _stream(text)
    assert len(parts) > 5 and all(len(p) < LINE_SPLIT_CHARS + 100 for p in parts)
    assert "\n".join(parts) == text  # each cut took exactly one line end


def test_a_paragraph_break_is_preferred_and_a_short_answer_stays_whole() -> None:
    para = "word " * 200 + "\n\n"
    assert _stream(para * 3) == [para * 3]  # under SPLIT_CHARS: one widget
    parts = _stream(para * 12)
    assert len(parts) >= 2 and all(p.endswith("word ") or p == parts[-1] for p in parts)
    assert "\n\n".join(parts) == para * 12
    assert all(len(p) < SPLIT_CHARS + len(para) for p in parts[:-1])


def test_a_huge_code_block_is_closed_and_reopened_with_its_language() -> None:
    body = "".join(f"print({i})\n\n" for i in range(3000))  # blank lines inside: no paragraph cut
    text = f"Here:\n\n```python\n{body}```\n\nDone.\n"
    parts = _stream(text)
    assert len(parts) > 3
    for part in parts:
        assert part.count("```") % 2 == 0, part[:80]  # each widget renders its own code block
    code = [p for p in parts if "print(" in p]
    assert all(p.startswith("```python\n") for p in code[1:])  # reopened with its language
    assert all(p.endswith("\n```\n") for p in code[:-1])  # closed where it was cut
    assert parts[-1] == "Done.\n" and parts[0].startswith("Here:\n\n```python\n")
    printed = [line for p in parts for line in p.splitlines() if line.startswith("print(")]
    assert printed == [f"print({i})" for i in range(3000)]  # nothing lost, nothing repeated


async def test_the_app_streams_a_huge_code_block_into_parts_that_each_render_as_code(
    session: FakeSession, make_app: Any
) -> None:
    from agent_cli.tui.widgets.markdown import MarkdownText
    from agent_cli.tui.widgets.settled import SettledParts

    body = "".join(f"value_{i} = {i}\n" for i in range(2000))
    text = f"```python\n{body}```\n"
    session.turns = [[*(TextDelta(d) for d in _chunks(text, 40)), TurnFinished("end_turn", 1)]]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.load_text("dump it")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.turn_running, timeout=30)
        await wait_for(pilot, lambda: len(app.query(MarkdownText)) >= 1, timeout=30)
        # the finished parts in one widget above the last part (tui/settled.py)
        settled = app.query_one(SettledParts)
        sources = [*settled.parts, app.query(".assistant").last().source]  # type: ignore[attr-defined]
        assert len(sources) >= 3
        assert all(s.startswith("```python\n") for s in sources)
        assert sum(s.count("value_") for s in sources) == 2000
        assert app.stream_stats.backlog == 0
