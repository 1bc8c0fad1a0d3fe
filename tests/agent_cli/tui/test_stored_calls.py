"""Stored tool calls shown as live: the user's summary from the kept output fields, rejections
as the user read them, the session's header with a safe fallback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_cli.session.restored_calls import restored_calls, view_fields
from agent_cli.tui.stored_calls import StoredCalls
from agent_cli.tui.widgets.conversation import entries_from_messages
from tools.pipeline.permission import REJECT_MESSAGE, REJECT_WITH_FEEDBACK

CWD = Path("/proj")


def _call(tid: str, name: str, inp: dict[str, Any], content: str, err: bool = False) -> list[Any]:
    return [
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": tid, "name": name, "input": inp}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": tid, "content": content, "is_error": err}
            ],
        },
    ]


def test_rejections_read_as_the_user_saw_them() -> None:
    edit = {"file_path": "/proj/a.py", "old_string": "x", "new_string": "y"}
    messages = [
        *_call("e1", "Edit", edit, REJECT_MESSAGE, True),
        *_call("e2", "Edit", edit, REJECT_WITH_FEEDBACK + "use b.py", True),
        *_call("b1", "Bash", {"command": "rm -rf x"}, REJECT_WITH_FEEDBACK + "no", True),
        *_call("b2", "Bash", {"command": "cat notes"}, REJECT_MESSAGE, False),  # only text
    ]
    entries = entries_from_messages(messages, StoredCalls(cwd=CWD))
    assert [e.text for e in entries] == [
        "Rejected edit of a.py",
        "Rejected edit of a.py: use b.py",
        "Rejected: no",
        REJECT_MESSAGE,
    ]


def test_kept_output_fields_give_the_summary_and_the_model_text_stays_for_ctrl_o() -> None:
    numbered = "     1\tone\n     2\ttwo\n     3\tthree"
    records = [
        {
            "type": "user",
            "toolUseResult": {
                "tool_use_id": "r1",
                "tool_name": "Read",
                "output": {
                    "kind": "text",
                    "file_path": "/proj/a.py",
                    "content": "one\ntwo\n",
                    "num_lines": 3,
                    "start_line": 1,
                },
            },
        },
        {"type": "user", "toolUseResult": {"stdout": "claude code's own shape"}},
    ]
    outputs = restored_calls(records)
    assert outputs == {"r1": {"kind": "text", "file_path": "/proj/a.py", "num_lines": 3}}
    [entry] = entries_from_messages(
        _call("r1", "Read", {"file_path": "/proj/a.py"}, numbered), StoredCalls(outputs, cwd=CWD)
    )
    assert entry.text == "Read 3 lines" and entry.detail == numbered
    assert entry.header == "Read(/proj/a.py)"


def test_a_header_that_fails_falls_back_to_the_plain_one() -> None:
    def broken(name: str, tool_input: Any) -> str:
        raise RuntimeError("no such tool")

    [entry] = entries_from_messages(
        _call("g1", "Glob", {"pattern": "*.py"}, "a.py"), StoredCalls(describe=broken)
    )
    assert entry.header == "Glob(*.py)" and entry.text == "a.py"


def test_view_fields_reads_models_and_drops_the_file_content() -> None:
    from tools.builtin.read import ReadOutput

    out = ReadOutput(kind="text", file_path="/a", content="secret", num_lines=1)
    assert view_fields(out) == {"kind": "text", "file_path": "/a", "num_lines": 1, "partial": False}
    assert view_fields("plain text") == {} and view_fields(None) == {}
