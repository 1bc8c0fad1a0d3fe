"""The scripted "model" of ``nerve demo``: it fixes the bug in the bundled sample project.

The model reads the failing test, greps for the function, reads the module, edits the bug, tries
``rm -rf build`` (the project's deny rule stops it) and runs the tests. Every turn after the
first matches only on the tool_result of the previous call, which exists whether the call ran,
was declined by the user or was denied by a rule, so the script survives any choice the user
makes at a permission prompt.

A scripted answer cannot think, but it can look: each turn's ``Match.predicate`` is a narrator
that reads the previous results from the request and rewrites the turn's opening text before the
server streams it, so what the "model" says matches what really happened (edit declined, tests
still failing, ...). The predicate always accepts; the match itself is ``tool_result_for``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from agent_cli.testing.scenario import Match, Scenario, Turn, text, tool_use
from tools.records import datarecord

__all__ = [
    "DEMO_PROMPT",
    "RM_COMMAND",
    "TEST_COMMAND",
    "TEST_RULE",
    "Outcome",
    "build_scenario",
    "classify_result",
]

DEMO_PROMPT = "The tests in this project fail. Find the bug and fix it."
TEST_COMMAND = "python3 -m unittest -v test_mathlib"
TEST_RULE = "Bash(python3 -m unittest *)"
RM_COMMAND = "rm -rf build"
BUG = "return total(values) / (len(values) - 1)"
FIX = "return total(values) / len(values)"
# Turns served after the script ends (the TUI lets the user keep typing).
AFTER_THE_END = (
    "This is the offline demo: the scripted model has finished its script and has nothing more "
    "to say. Press Ctrl+D twice to leave. To work with a real model, set ANTHROPIC_API_KEY and "
    "run `nerve` in your own project."
)
EXTRA_TURNS = 50

Outcome = Literal["ok", "declined", "denied", "error", "missing"]


@datarecord(frozen=True)
class _Result:
    outcome: Outcome
    text: str


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, Mapping) and isinstance(block.get("text"), str):
                parts.append(block["text"])
    return "\n".join(parts)


def classify_result(body: Mapping[str, Any], tool_use_id: str) -> tuple[Outcome, str]:
    """How the call ``tool_use_id`` went, judged from the request body the client sent."""
    messages = body.get("messages")
    for msg in reversed(messages if isinstance(messages, list) else []):
        content = msg.get("content") if isinstance(msg, Mapping) else None
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, Mapping) or block.get("type") != "tool_result":
                continue
            if block.get("tool_use_id") != tool_use_id:
                continue
            body_text = _result_text(block.get("content"))
            if not block.get("is_error"):
                return "ok", body_text
            if "The tool use was rejected" in body_text:
                return "declined", body_text
            if "has been denied" in body_text or "was not granted" in body_text:
                return "denied", body_text
            return "error", body_text
    return "missing", ""


def _first_line(value: str) -> str:
    line = value.strip().splitlines()[0] if value.strip() else ""
    return line if len(line) <= 240 else line[:237] + "..."


def _denial_cause(message: str) -> str:
    """``the deny rule Bash(rm *) from projectSettings`` out of a denial message, if named."""
    found = re.search(r"by (the deny rule .+? from \w+)", message)
    return found.group(1) if found else _first_line(message)


def _tests_passed(output: str) -> bool | None:
    """True/False from unittest's summary line; None when there is no summary."""
    if re.search(r"^FAILED\b", output, re.MULTILINE):
        return False
    if re.search(r"^OK\b", output, re.MULTILINE):
        return True
    return None


Narrate = Callable[[Mapping[str, Any]], str]


def _narrated(turn: Turn, after: str, narrate: Narrate) -> Turn:
    """Give ``turn`` a match on ``after``'s result whose predicate rewrites its opening text."""
    first = turn.blocks[0]

    def predicate(body: Mapping[str, Any]) -> bool:
        first["text"] = narrate(body)
        return True

    turn.match = Match(tool_result_for=after, predicate=predicate, description="demo narrator")
    return turn


def _after_edit(body: Mapping[str, Any]) -> str:
    outcome, detail = classify_result(body, "demo_edit")
    lead = {
        "ok": "Fixed: mean() now divides by len(values).",
        "declined": (
            "You declined the edit, so mathlib.py is unchanged. (A real model would stop here "
            "and wait for you; the demo carries on so you can see the remaining steps.)"
        ),
    }.get(outcome, f"The edit did not happen: {_first_line(detail)}")
    return f"{lead} Before running the tests, let me clear any stale build output."


def _after_rm(body: Mapping[str, Any]) -> str:
    outcome, detail = classify_result(body, "demo_rm")
    lead = {
        "ok": "Cleared build/.",
        "declined": "You declined the rm; fine, nothing needed deleting.",
        "denied": (
            f"The permission engine refused that ({_denial_cause(detail)}). A deny rule wins "
            "over any allow rule and any mode. Nothing was deleted, and nothing needed to be."
        ),
    }.get(outcome, f"That failed: {_first_line(detail)}")
    return f"{lead} Now the tests."


def _summary(body: Mapping[str, Any], project: Path, print_mode: bool) -> str:
    edit, _ = classify_result(body, "demo_edit")
    rm, rm_detail = classify_result(body, "demo_rm")
    test, output = classify_result(body, "demo_test")
    passed = _tests_passed(output) if test in ("ok", "error") else None
    lines: list[str] = []
    if test == "declined":
        lines.append("You declined running the tests, so I cannot confirm the fix.")
    elif passed is True:
        lines.append("All 4 tests pass now.")
    elif passed is False and edit != "ok":
        lines.append("The tests still fail, as expected: the edit was not applied.")
    elif passed is False:
        lines.append("The tests still fail; that is unexpected after the fix.")
    else:
        lines.append(f"The test command did not report a result: {_first_line(output)}")
    lines.append("")
    lines.append("What happened, step by step:")
    lines.append("- Read and Grep ran without asking: reading inside the project is allowed.")
    applied = "was applied (acceptEdits mode allows edits in the project)"
    if not print_mode:
        applied = "was applied after you allowed it"
    edit_word = {"ok": applied, "declined": "was declined by you"}.get(edit, "did not run")
    lines.append(
        f"- The Edit of mathlib.py (`len(values) - 1` -> `len(values)`) {edit_word}; "
        "Edit refuses to touch a file the model has not read first."
    )
    rm_word = {
        "denied": f"was denied ({_denial_cause(rm_detail)})",
        "declined": "was declined by you",
        "ok": "ran",
    }.get(rm, f"failed: {_first_line(rm_detail)}")
    lines.append(f"- `{RM_COMMAND}` {rm_word}.")
    ran = f"ran (allowed by the rule {TEST_RULE})" if print_mode else "ran after you allowed it"
    test_word = {"ok": ran, "error": ran, "declined": "was declined by you"}.get(test, "failed")
    lines.append(f"- `{TEST_COMMAND}` {test_word}.")
    lines.append("")
    lines.append(f"The project copy is at {project}.")
    return "\n".join(lines)


def build_scenario(project: Path, *, print_mode: bool = True, extra_turns: int = 0) -> Scenario:
    """The demo script for the sample project copied to ``project``.

    ``print_mode`` only changes how the summary explains why calls were allowed (by mode and
    rule there, by the user in the TUI). ``extra_turns`` appends polite "the script is over" answers for users who keep typing (the
    TUI); print mode uses 0 so that any extra request is a failure.
    """
    test_file = str(project / "test_mathlib.py")
    module = str(project / "mathlib.py")
    turns = [
        Turn(
            [
                text("I'll start with the failing test to see what it expects."),
                tool_use("Read", {"file_path": test_file}, id="demo_read_test"),
            ]
        ),
        Turn(
            [
                text("The tests call `mean` and `total`. Let me find where `mean` is defined."),
                tool_use(
                    "Grep",
                    {
                        "pattern": r"def mean\(",
                        "path": str(project),
                        "output_mode": "content",
                        "line_numbers": True,
                    },
                    id="demo_grep",
                ),
            ],
            match=Match(tool_result_for="demo_read_test"),
        ),
        Turn(
            [
                text("It is defined in mathlib.py. Reading the module."),
                tool_use("Read", {"file_path": module}, id="demo_read_module"),
            ],
            match=Match(tool_result_for="demo_grep"),
        ),
        Turn(
            [
                text(
                    "Found the bug: `mean()` divides by `len(values) - 1` instead of "
                    "`len(values)`, so mean([2, 4, 6]) is 6 and mean([5]) divides by zero. "
                    "Fixing it."
                ),
                tool_use(
                    "Edit",
                    {"file_path": module, "old_string": BUG, "new_string": FIX},
                    id="demo_edit",
                ),
            ],
            match=Match(tool_result_for="demo_read_module"),
        ),
        _narrated(
            Turn([text(""), tool_use("Bash", {"command": RM_COMMAND}, id="demo_rm")]),
            "demo_edit",
            _after_edit,
        ),
        _narrated(
            Turn(
                [
                    text(""),
                    tool_use(
                        "Bash",
                        {"command": TEST_COMMAND, "description": "Run the unit tests"},
                        id="demo_test",
                    ),
                ]
            ),
            "demo_rm",
            _after_rm,
        ),
        _narrated(Turn([text("")]), "demo_test", lambda body: _summary(body, project, print_mode)),
    ]
    turns += [Turn([text(AFTER_THE_END)]) for _ in range(extra_turns)]
    return Scenario(turns)
