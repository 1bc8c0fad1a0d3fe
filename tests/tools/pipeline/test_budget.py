"""Result budgets: the persisted-output wrapper, sizes, previews, the conversation budget."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from tests.tools.pipeline_helpers import TextIn, make_ctx, read_only_tool
from tools.pipeline import budget as b
from tools.pipeline.steps import run_tool_call
from tools.pipeline.types import ToolCall
from tools.result import ToolResult


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0 bytes"),
        (1023, "1023 bytes"),
        (1024, "1KB"),
        (12_595, "12.3KB"),
        (1536 * 1024, "1.5MB"),
        (2 * 1024**2, "2MB"),
        (3 * 1024**3, "3GB"),
    ],
)
def test_format_size(n: int, text: str) -> None:
    assert b.format_size(n) == text


def test_preview_cut_rule() -> None:
    short = "abc\ndef"
    assert b.preview_text(short) == (short, False)
    # A newline past half-way: cut back to it.
    late = "x" * 1500 + "\n" + "y" * 1000
    assert b.preview_text(late) == ("x" * 1500, True)
    # A newline before half-way: keep the full 2000 chars.
    early = "x" * 500 + "\n" + "y" * 3000
    assert b.preview_text(early) == (early[:2000], True)
    exact = "z" * 2000
    assert b.preview_text(exact) == (exact, False)


def test_wrapper_format_is_exact(tmp_path: Path) -> None:
    content = "line\n" * 20_000  # 100,000 chars
    p = b.persist_result(content, "toolu_01", tmp_path)
    assert p.path == tmp_path / "tool-results" / "toolu_01.txt"
    assert p.path.read_text() == content
    preview = ("line\n" * 400)[:-1]  # 2000 chars cut back to the last newline
    assert p.wrapper == (
        "<persisted-output>\n"
        f"Output too large (97.7KB). Full output saved to: {p.path}\n"
        "\n"
        "Preview (first 2KB):\n"
        f"{preview}\n"
        "...\n"
        "</persisted-output>"
    )


def test_wrapper_without_more_has_no_ellipsis() -> None:
    assert b.persisted_wrapper(10, "/p", "all", False) == (
        "<persisted-output>\nOutput too large (10 bytes). Full output saved to: /p\n\n"
        "Preview (first 2KB):\nall\n</persisted-output>"
    )


def test_block_results_are_saved_as_pretty_json(tmp_path: Path) -> None:
    blocks = [{"type": "text", "text": "a" * 10}, {"type": "text", "text": "b"}]
    p = b.persist_result(blocks, "toolu_02", tmp_path)
    assert p.path.name == "toolu_02.json"
    assert json.loads(p.path.read_text()) == blocks
    assert p.path.read_text() == json.dumps(blocks, indent=2)
    assert "Preview (first 2KB):\n" + "a" * 10 + "\nb\n</persisted-output>" in p.wrapper


def test_odd_ids_do_not_escape_the_directory(tmp_path: Path) -> None:
    p = b.persist_result("x", "../../etc/passwd", tmp_path)
    assert p.path.parent == tmp_path / "tool-results"
    assert p.path.name.startswith("id-")


def test_no_session_dir_uses_a_process_temp_dir() -> None:
    first = b.tool_results_dir(None)
    assert first == b.tool_results_dir(None) and first.is_dir()


def test_limits() -> None:
    assert b.result_limit(30_000) == 30_000
    assert b.result_limit(100_000) == b.GLOBAL_LIMIT_CHARS
    assert math.isinf(b.result_limit(math.inf))


async def _big_tool_outcome(tmp_path: Path, limit: float | None, data: Any) -> Any:
    async def call(inp: TextIn, _c: Any, _p: Any) -> ToolResult:
        return ToolResult(data)

    tool = read_only_tool("Read", call=call, max_result_size_chars=limit)
    return await run_tool_call(ToolCall("t1", "Read", {}), make_ctx([tool], session_dir=tmp_path))


async def test_read_is_never_persisted(tmp_path: Path) -> None:
    outcome = await _big_tool_outcome(tmp_path, None, "r" * 200_000)
    assert outcome.tool_result["content"] == "r" * 200_000
    assert not (tmp_path / "tool-results").exists()


async def test_images_are_never_persisted(tmp_path: Path) -> None:
    blocks = [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}},
        {"type": "text", "text": "t" * 60_000},
    ]
    outcome = await _big_tool_outcome(tmp_path, 1000, blocks)
    assert outcome.tool_result["content"] == blocks


async def test_global_cap_applies_over_a_larger_tool_limit(tmp_path: Path) -> None:
    outcome = await _big_tool_outcome(tmp_path, 100_000, "g" * 60_000)
    assert outcome.tool_result["content"].startswith("<persisted-output>")


# conversation budget -------------------------------------------------------------------------


def conversation(sizes: list[tuple[str, str, int]]) -> list[dict[str, Any]]:
    """One assistant tool_use + user tool_result pair per (id, tool name, size)."""
    msgs: list[dict[str, Any]] = []
    for tid, name, size in sizes:
        msgs.append(
            {"role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": name}]}
        )
        msgs.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": tid, "content": "c" * size}],
            }
        )
    return msgs


def test_conversation_budget_replaces_largest_older_results(tmp_path: Path) -> None:
    budget = b.ConversationBudget(max_chars=100_000, session_dir=tmp_path)
    msgs = conversation(
        [
            ("t1", "Grep", 30_000),
            ("t2", "Read", 45_000),  # largest, but Read is never persisted
            ("t3", "Bash", 30_000),  # ties with t1: the older goes first
            ("t4", "Bash", 40_000),  # newest: never replaced
        ]
    )
    assert budget.enforce(msgs) == ["t1", "t3"]
    contents = [m["content"][0]["content"] for m in msgs if m["role"] == "user"]
    assert contents[0].startswith("<persisted-output>")
    assert contents[1] == "c" * 45_000
    assert contents[2].startswith("<persisted-output>")
    assert contents[3] == "c" * 40_000
    assert (tmp_path / "tool-results" / "t1.txt").read_text() == "c" * 30_000


def test_conversation_budget_stops_as_soon_as_it_fits(tmp_path: Path) -> None:
    budget = b.ConversationBudget(max_chars=100_000, session_dir=tmp_path)
    msgs = conversation([("t1", "Grep", 30_000), ("t2", "Bash", 50_000), ("t3", "Bash", 40_000)])
    assert budget.enforce(msgs) == ["t2"]
    assert budget.enforce(msgs) == []  # already fits


def test_conversation_budget_is_deterministic_and_sticky(tmp_path: Path) -> None:
    spec = [("t1", "Grep", 30_000), ("t2", "Bash", 50_000), ("t3", "Bash", 40_000)]
    first, second = conversation(spec), conversation(spec)
    b1 = b.ConversationBudget(max_chars=100_000, session_dir=tmp_path)
    b2 = b.ConversationBudget(max_chars=100_000, session_dir=tmp_path)
    assert b1.enforce(first) == b2.enforce(second) == ["t2"]
    assert first == second
    # A conversation rebuilt from the transcript gets the same replacement again.
    rebuilt = conversation(spec)
    assert b1.enforce(rebuilt) == []
    assert rebuilt == first
    # A clone (sub-agent) carries the decisions.
    assert b1.clone().replaced == b1.replaced


def test_under_budget_changes_nothing(tmp_path: Path) -> None:
    msgs = conversation([("t1", "Bash", 10)])
    before = json.dumps(msgs)
    assert b.ConversationBudget(session_dir=tmp_path).enforce(msgs) == []
    assert json.dumps(msgs) == before
