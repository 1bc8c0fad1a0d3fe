"""``nerve permissions check`` through the real console script, in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
NERVE = Path(sys.executable).parent / "nerve"
CORPUS = ROOT / "tests" / "data" / "bash-permissions-public.jsonl"


def nerve(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(NERVE), "permissions", "check", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_text_output_names_decision_rule_and_trace(tmp_path: Path) -> None:
    r = nerve("--deny", "Bash(rm:*)", "--", "ls && rm -rf build", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "decision: deny" in r.stdout
    assert "rule:     Bash(rm:*) (cliArg)" in r.stdout
    assert "trace:" in r.stdout and "rm -rf build" in r.stdout


def test_json_output(tmp_path: Path) -> None:
    r = nerve(
        "--json",
        "--allow",
        "Bash(git status:*)",
        "--",
        "git",
        "status",
        "--short",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert set(out) == {"decision", "reason", "rule", "source", "kind", "trace"}
    assert out["decision"] == "allow"
    assert isinstance(out["trace"], list) and out["trace"]


def test_json_ask_for_unknown_command_and_modes(tmp_path: Path) -> None:
    r = nerve("--json", "--", "make deploy", cwd=tmp_path)
    assert json.loads(r.stdout)["decision"] == "ask"
    r = nerve("--json", "--mode", "dontAsk", "--", "make deploy", cwd=tmp_path)
    assert json.loads(r.stdout)["decision"] == "deny"
    r = nerve("--json", "--mode", "bypassPermissions", "--", "make deploy", cwd=tmp_path)
    assert json.loads(r.stdout)["decision"] == "allow"
    r = nerve("--json", "--mode", "plan", "--", "make deploy", cwd=tmp_path)
    out = json.loads(r.stdout)
    assert out["decision"] == "deny" and "plan mode" in out["reason"]


@pytest.mark.parametrize(
    ("tool", "target", "flags", "decision"),
    [
        ("Read", "src/a.py", [], "allow"),
        ("Read", "/etc/hostname", [], "ask"),
        ("Read", "deep/dir/.env", ["--deny", "Read(.env)"], "deny"),
        ("Edit", "src/a.py", ["--mode", "acceptEdits"], "allow"),
        ("Write", ".git/config", ["--mode", "acceptEdits", "--allow", "Edit"], "ask"),
        (
            "WebFetch",
            "https://docs.python.org/3/",
            ["--allow", "WebFetch(domain:*.python.org)"],
            "allow",
        ),
        ("WebFetch", "https://python.org/", ["--allow", "WebFetch(domain:*.python.org)"], "ask"),
        ("Agent", '{"subagent_type": "Explore"}', ["--allow", "Agent(Explore)"], "allow"),
        ("mcp__gh__get_issue", "", ["--allow", "mcp__gh"], "allow"),
    ],
)
def test_other_tools(
    tmp_path: Path, tool: str, target: str, flags: list[str], decision: str
) -> None:
    r = nerve("--json", "--tool", tool, *flags, "--", target, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["decision"] == decision, r.stdout


def test_cwd_flag_and_settings_file(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    settings = tmp_path / "s.json"
    settings.write_text(json.dumps({"permissions": {"deny": ["Edit(/locked/**)"]}}))
    args = ["--json", "--tool", "Edit", "--mode", "acceptEdits", "--cwd", str(proj)]
    r = nerve(*args, "--settings", str(settings), "--", "locked/x.txt", cwd=tmp_path)
    out = json.loads(r.stdout)
    # `/locked/**` in a --settings file is anchored at that file's directory, not the cwd
    assert out["decision"] == "allow"
    r = nerve(*args, "--settings", str(settings), "--", "../locked/x.txt", cwd=tmp_path)
    out = json.loads(r.stdout)
    assert out["decision"] == "deny" and out["source"] == "cliArg"


def test_bad_rule_warns_and_bad_usage_fails(tmp_path: Path) -> None:
    r = nerve("--json", "--allow", "Bash(git status", "--", "git status", cwd=tmp_path)
    assert r.returncode == 0 and "warning:" in r.stderr
    assert nerve(cwd=tmp_path).returncode == 2
    assert nerve("--mode", "nope", "--", "ls", cwd=tmp_path).returncode == 2


def test_jsonl_bad_lines_fail_closed(tmp_path: Path) -> None:
    batch = tmp_path / "b.jsonl"
    batch.write_text(
        "\n".join(
            [
                json.dumps({"id": "ok", "command": "ls", "allow": [], "deny": []}),
                "{not json",
                json.dumps({"id": "no-cmd", "allow": []}),
                json.dumps({"id": "bad-mode", "command": "ls", "mode": "yolo"}),
                json.dumps({"id": "bad-rules", "command": "ls", "allow": "Bash"}),
                json.dumps(["a list"]),
                json.dumps(
                    {"id": "edit", "command": "a.txt", "tool": "Edit", "mode": "acceptEdits"}
                ),
                # a lone surrogate (valid JSON escape, not encodable): judged and printed
                '{"id": "surrogate", "command": "rm \\ud800", "deny": ["Bash(rm:*)"]}',
            ]
        )
        + "\n"
    )
    r = nerve("--jsonl", str(batch), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(rows) == 8
    assert rows[0] == {"id": "ok", "decision": "allow", "reason": rows[0]["reason"], "rule": None}
    for row in rows[1:6]:
        assert row["decision"] == "ask" and "cannot judge" in row["reason"], row
    assert rows[6]["decision"] == "allow"
    assert rows[7]["id"] == "surrogate" and rows[7]["decision"] == "deny"


def test_public_corpus_scores(tmp_path: Path) -> None:
    """Scored from the CLI output exactly like the before-stop hook scores it."""
    r = nerve("--jsonl", str(CORPUS), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    want = {c["id"]: c for c in map(json.loads, CORPUS.read_text().splitlines()) if c}
    got: dict[str, str | None] = {}
    for line in r.stdout.splitlines():
        row = json.loads(line)
        got[row["id"]] = row.get("decision")
    allow = [i for i, c in want.items() if c["expected"] == "allow"]
    risky = [i for i, c in want.items() if c["expected"] != "allow"]
    deny = [i for i, c in want.items() if c["expected"] == "deny"]
    unsafe = [i for i in risky if got.get(i) == "allow"]
    recall = sum(got.get(i) == "allow" for i in allow)
    assert not [i for i in want if i not in got]
    assert unsafe == []
    assert all(got.get(i) == "deny" for i in deny), [i for i in deny if got.get(i) != "deny"]
    assert recall >= 0.95 * len(allow), f"allow recall {recall}/{len(allow)}"


def test_jsonl_flag_rules_apply_to_every_line(tmp_path: Path) -> None:
    batch = tmp_path / "b.jsonl"
    lines = [{"id": "a", "command": "make build"}, {"id": "b", "command": "make test"}]
    batch.write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = nerve("--jsonl", str(batch), "--deny", "Bash(make test)", cwd=tmp_path)
    rows = {row["id"]: row for row in map(json.loads, r.stdout.splitlines())}
    assert rows["a"]["decision"] == "ask"
    assert rows["b"]["decision"] == "deny" and rows["b"]["rule"] == "Bash(make test)"


def test_a_reader_that_leaves_early_gets_no_traceback(tmp_path: Path) -> None:
    heldout = ROOT / "tests" / "data" / "bash-permissions-heldout.jsonl"
    r = subprocess.run(
        f"'{NERVE}' permissions check --jsonl '{heldout}' | head -1",
        shell=True,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 1
    assert "Traceback" not in r.stderr and "BrokenPipe" not in r.stderr
