"""The runs the stream-json fixture was captured from, and how its frames are compared.

``bench/capture_claude_frames.py`` runs the real Claude Code CLI through each ``RUNS`` entry
against the scripted server and writes the field set of every kind of frame it printed to
``fixtures/stream_json_frames.json``; ``test_stream_json_schema.py`` runs ``nerve`` through the
same entries and checks its frames against that field set. Both sides see the same model answers,
so a difference is a difference in what the two programs write.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_cli.testing import (
    Fault,
    Match,
    Scenario,
    Turn,
    server_error,
    text,
    thinking,
    tool_use,
)

__all__ = ["RUNS", "StreamRun", "drive", "frame_kind", "missing_fields", "skeleton"]

_STREAM = ["--output-format", "stream-json", "--verbose"]
SLOW = "python3 -c 'import time; time.sleep(30)'"


@dataclass(frozen=True)
class StreamRun:
    """``args`` after the binary; ``scenario(project)`` the model's answers (``notes.txt`` in
    the project says ``alpha``); ``setup``: a run before it in the same project (its frames are
    not compared), with its own arguments and answers."""

    name: str
    args: list[str]
    scenario: Callable[[Path], Scenario]
    setup: tuple[list[str], Callable[[Path], Scenario]] | None = None
    interrupt: str | None = None  # stream-json input: this prompt, then an interrupt (drive)


def _notes(project: Path) -> dict[str, Any]:
    return {"file_path": str(project / "notes.txt")}


def _session_start_hook(project: Path) -> Scenario:
    """A project SessionStart hook that prints some context (the project must be trusted)."""
    (project / ".claude").mkdir()
    hook = {"type": "command", "command": "echo started-context"}
    settings = {"hooks": {"SessionStart": [{"hooks": [hook]}]}}
    (project / ".claude" / "settings.json").write_text(json.dumps(settings))
    return Scenario.of(Turn([text("hello")]))


RUNS = [
    StreamRun(  # a retried request, a text block and a tool call, the tool's result, an answer
        "tool",
        ["-p", "read notes", *_STREAM],
        lambda p: Scenario.of(
            Turn(
                [text("Reading."), tool_use("Read", _notes(p), id="t_read")],
                faults=[server_error(times=1)],
            ),
            Turn([text("It says alpha.")], match=Match(tool_result_for="t_read")),
        ),
    ),
    StreamRun(
        "max_turns",
        ["-p", "read it", *_STREAM, "--max-turns", "1"],
        lambda p: Scenario.of(Turn([tool_use("Read", _notes(p), id="t1")])),
    ),
    StreamRun(
        "partial",
        ["-p", "look", *_STREAM, "--include-partial-messages"],
        lambda p: Scenario.of(
            Turn([thinking("Let me look."), text("one two"), tool_use("Read", _notes(p), id="g1")]),
            Turn([text("done")]),
        ),
    ),
    StreamRun(
        "budget",
        ["-p", "read it", *_STREAM, "--max-budget-usd", "0.0001"],
        lambda p: Scenario.of(
            Turn([tool_use("Read", _notes(p), id="t1")], input_tokens=100_000),
            Turn([text("done")]),
        ),
    ),
    StreamRun(  # print mode cannot ask: the call is denied
        "denied",
        ["-p", "touch it", *_STREAM],
        lambda p: Scenario.of(
            Turn([tool_use("Bash", {"command": "touch x"}, id="b1")]), Turn([text("ok")])
        ),
    ),
    StreamRun(
        "json",
        ["-p", "hi", "--output-format", "json"],
        lambda p: Scenario.of(Turn([text("hello")])),
    ),
    StreamRun("session_start_hook", ["-p", "hi", *_STREAM], _session_start_hook),
    StreamRun(  # a command that runs without the model's turn: /compact of the last session
        "compact",
        ["-c", "-p", "/compact", *_STREAM],
        lambda p: Scenario.of(Turn([text("<summary>We said hello.</summary>")])),
        setup=(["-p", "hi"], lambda p: Scenario.of(Turn([text("hello")]))),
    ),
    StreamRun(  # the SDK's interrupt while a tool runs: error_during_execution
        "interrupt",
        ["-p", "--input-format", "stream-json", *_STREAM, "--allowedTools", "Bash(python3:*)"],
        lambda p: Scenario.of(Turn([tool_use("Bash", {"command": SLOW}, id="b1")])),
        interrupt="wait",
    ),
    StreamRun(  # an API error no retry helps (Claude Code run with CLAUDE_CODE_MAX_RETRIES=0)
        "api_error",
        ["-p", "hi", *_STREAM],
        lambda p: Scenario.of(
            Turn(
                [text("never")],
                faults=[Fault("http", 401, "authentication_error", "invalid x-api-key", times=5)],
            )
        ),
    ),
]


def drive(proc: subprocess.Popen[str], prompt: str) -> list[dict[str, Any]]:
    """An ``interrupt`` run: ``prompt`` as a stream-json user message; once an assistant frame
    asks for a tool (running by then), an ``interrupt`` control request; the frames up to the
    result (control frames left out); then stdin closes."""
    assert proc.stdin is not None and proc.stdout is not None
    message = {"role": "user", "content": prompt}
    first = {"type": "user", "message": message, "parent_tool_use_id": None, "session_id": ""}
    proc.stdin.write(json.dumps(first) + "\n")
    proc.stdin.flush()
    frames: list[dict[str, Any]] = []
    for line in proc.stdout:
        if not line.startswith("{"):
            continue
        frame = json.loads(line)
        if str(frame.get("type")).startswith("control_"):
            continue
        frames.append(frame)
        content = frame.get("message", {}).get("content") if frame["type"] == "assistant" else []
        if any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content or []):
            time.sleep(0.5)  # the tool has started
            stop = {"type": "control_request", "request_id": "int_1"}
            proc.stdin.write(json.dumps({**stop, "request": {"subtype": "interrupt"}}) + "\n")
            proc.stdin.flush()
        if frame["type"] == "result":
            break
    proc.stdin.close()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return frames


def frame_kind(frame: dict[str, Any]) -> str:
    """``system/init``, ``assistant``, ``assistant/api_error``, ``user/tool_result/error``,
    ``stream_event/message_start``, ``result/error_max_turns``, ``result/success/api_error``..."""
    kind = str(frame.get("type"))
    if kind == "system":
        return f"system/{frame.get('subtype')}"
    if kind == "result":
        api = "/api_error" if frame.get("api_error_status") is not None else ""
        local = "/local_command" if "local_command" in frame else ""
        return f"result/{frame.get('subtype')}{api}{local}"
    if kind == "assistant":
        return "assistant/api_error" if frame.get("is_api_error_message") else "assistant"
    if kind == "user":
        content = frame.get("message", {}).get("content")
        first = content[0] if isinstance(content, list) and content else {}
        if isinstance(first, dict) and first.get("type") == "tool_result":
            return "user/tool_result" + ("/error" if first.get("is_error") else "")
        return "user/replay" if frame.get("isReplay") else "user"
    if kind == "stream_event":
        return f"stream_event/{frame.get('event', {}).get('type')}"
    return kind


# Values that are the tool's or the conversation's own, not the frame's shape: only their
# presence is compared.
_OPAQUE = frozenset({"tool_use_result", "content", "input", "partial_json", "tool_input"})
# Objects keyed by a name (a model id): each entry has the shape under "*".
_BY_NAME = frozenset({"modelUsage", "model_usage_since_last_result"})
ANY = "<any>"


def skeleton(value: Any, key: str = "") -> Any:
    """``value``'s shape: its keys, in order, with a placeholder of each value's type
    ("" string, 0 number, false, null, [first item's shape]); ``ANY`` for opaque values."""
    if key in _OPAQUE:
        return ANY
    if isinstance(value, dict):
        if key in _BY_NAME:
            entries = [skeleton(v) for v in value.values()]
            return {"*": entries[0]} if entries else {}
        return {k: skeleton(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [skeleton(value[0], key)] if value else []
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return 0
    if value is None:
        return None
    return ""


def common(shapes: list[Any]) -> Any:
    """The shape every one of ``shapes`` has: keys all of them carry (a key some frames of a
    kind lack is conditional, and not part of the kind's field set)."""
    first = shapes[0]
    if isinstance(first, dict) and all(isinstance(s, dict) for s in shapes):
        keys = [k for k in first if all(k in s for s in shapes)]
        return {k: common([s[k] for s in shapes]) for k in keys}
    if isinstance(first, list) and all(isinstance(s, list) for s in shapes):
        items = [s[0] for s in shapes if s]
        return [common(items)] if items else []
    kinds = {type(s) for s in shapes}
    return first if len(kinds) == 1 else None


def missing_fields(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Where ``actual`` lacks a key of ``expected`` or has a value of another type. A null in
    ``expected`` (what the capture had there) takes any value; ``ANY`` any value."""
    if expected is None or expected == ANY:
        return []
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected an object, got {actual!r}"]
        out: list[str] = []
        for key, value in expected.items():
            if key == "*":
                for name, entry in actual.items():
                    out += missing_fields(value, entry, f"{path}.{name}")
            elif key not in actual:
                out.append(f"{path}.{key}: missing")
            else:
                out += missing_fields(value, actual[key], f"{path}.{key}")
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [f"{path}: expected a list, got {actual!r}"]
        if expected and actual:
            return missing_fields(expected[0], actual[0], f"{path}[0]")
        return []
    if isinstance(expected, bool):
        return [] if isinstance(actual, bool) else [f"{path}: expected a bool, got {actual!r}"]
    if isinstance(expected, (int, float)):
        ok = isinstance(actual, (int, float)) and not isinstance(actual, bool)
        return [] if ok else [f"{path}: expected a number, got {actual!r}"]
    return [] if isinstance(actual, str) else [f"{path}: expected a string, got {actual!r}"]
