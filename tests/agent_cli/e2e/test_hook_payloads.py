"""Hook payloads through a real ``nerve -p`` (issue 12 item 1): each built-in's ``tool_response``
has Claude Code's keys, ``permission_mode`` is a name users know, hooks run under ``sh -c`` with
Claude Code's marker variables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import Harness

# Claude Code's tool results (the ``toolUseResult`` of its transcripts, which is what its
# PostToolUse hooks get as ``tool_response``), key by key. Sources: Claude Code transcripts
# published in public repositories (Write/Read records, e.g. ``{"type": "create", "filePath":
# ..., "content": ..., "structuredPatch": [], "originalFile": null, "userModified": false}``),
# the hooks reference (Bash: stdout, stderr, interrupted, isImage) and the Edit result of
# Claude Code ports (filePath, oldString, newString, originalFile, structuredPatch,
# userModified, replaceAll).
REFERENCE_KEYS: dict[str, set[str]] = {
    "Bash": {"stdout", "stderr", "interrupted", "isImage"},
    "Write": {"type", "filePath", "content", "structuredPatch", "originalFile", "userModified"},
    "Edit": {
        "filePath",
        "oldString",
        "newString",
        "originalFile",
        "structuredPatch",
        "userModified",
        "replaceAll",
    },
    "Read": {"type", "file"},
    "Glob": {"filenames", "durationMs", "numFiles", "truncated"},
    "Grep": {"mode", "numFiles", "filenames"},
}
READ_FILE_KEYS = {"filePath", "content", "numLines", "startLine", "totalLines"}
HOOK_KEYS = {
    "session_id",
    "transcript_path",
    "cwd",
    "permission_mode",
    "hook_event_name",
    "tool_name",
    "tool_input",
    "tool_response",
    "tool_use_id",
}


def _user_settings(harness: Harness, data: dict[str, Any]) -> None:
    path = Path(harness.env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))


def _steps(project: Path) -> list[tuple[str, dict[str, Any]]]:
    f = str(project / "a.py")
    return [
        ("Write", {"file_path": f, "content": "x = 1\ny = 2\n"}),
        ("Edit", {"file_path": f, "old_string": "y = 2", "new_string": "y = 3"}),
        ("Read", {"file_path": f}),
        ("Glob", {"pattern": "*.py"}),
        ("Grep", {"pattern": "y = 3"}),
        ("Bash", {"command": "echo out; echo err >&2"}),
    ]


def test_tool_response_of_each_tool_has_claude_codes_keys(harness: Harness) -> None:
    log = harness.root / "post.jsonl"
    env_log = harness.root / "env.txt"
    # sh -c: the command line is POSIX shell; the markers are what hooks test for
    record = f'cat >> "{log}"; echo >> "{log}"'
    markers = f'echo "$CLAUDECODE $NERVE $CLAUDE_PROJECT_DIR" >> "{env_log}"'
    _user_settings(
        harness,
        {
            "permissions": {"allow": ["Write", "Edit", "Bash(echo *)"]},
            "hooks": {
                "PostToolUse": [
                    {"matcher": "*", "hooks": [{"type": "command", "command": record}]},
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": markers}]},
                ]
            },
        },
    )
    steps = _steps(harness.project)
    turns = [Turn([tool_use(name, inp, id=f"t{i}")]) for i, (name, inp) in enumerate(steps)]
    for i in range(1, len(turns)):
        turns[i] = Turn(turns[i].blocks, match=Match(tool_result_for=f"t{i - 1}"))
    turns.append(Turn([text("done")], match=Match(tool_result_for=f"t{len(steps) - 1}")))
    run = harness.run(["-p", "go", "--permission-mode", "acceptEdits"], Scenario.of(*turns))
    assert run.rc == 0, run.stderr
    payloads = [json.loads(ln) for ln in log.read_text().splitlines() if ln.strip()]
    by_tool = {p["tool_name"]: p for p in payloads}
    assert set(by_tool) == set(REFERENCE_KEYS), payloads
    for name, keys in REFERENCE_KEYS.items():
        p = by_tool[name]
        assert HOOK_KEYS <= set(p), (name, sorted(p))
        assert p["permission_mode"] == "acceptEdits"
        assert keys <= set(p["tool_response"]), (name, sorted(p["tool_response"]))
    assert READ_FILE_KEYS <= set(by_tool["Read"]["tool_response"]["file"])
    edit = by_tool["Edit"]["tool_response"]
    assert edit["originalFile"] == "x = 1\ny = 2\n" and edit["newString"] == "y = 3"
    assert any("+y = 3" in h["lines"] for h in edit["structuredPatch"])
    write = by_tool["Write"]["tool_response"]
    assert write["type"] == "create" and write["originalFile"] is None
    assert write["filePath"] == str(harness.project / "a.py")
    assert "y = 3" in by_tool["Read"]["tool_response"]["file"]["content"]
    assert by_tool["Glob"]["tool_response"]["filenames"]
    assert by_tool["Grep"]["tool_response"]["numFiles"] == 1
    bash = by_tool["Bash"]["tool_response"]
    assert "out" in bash["stdout"] and bash["interrupted"] is False and bash["isImage"] is False
    assert env_log.read_text().split() == ["1", "1", str(harness.project)]
