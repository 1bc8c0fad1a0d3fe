"""``.claude/`` folders shaped like real repositories', through a real ``nerve -p``."""

from __future__ import annotations

import json
from typing import Any

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.customize.showcase import make_showcase
from tests.agent_cli.e2e.conftest import Harness


def _texts(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content if b.get("type") == "text"]


def _system(body: dict[str, Any]) -> str:
    return json.dumps(body.get("system"))


def test_pr_review_123_is_sent_as_claude_code_sends_it(harness: Harness) -> None:
    make_showcase(harness.project)
    run = harness.run(["-p", "/pr-review 123"], Scenario.of(Turn([text("hello")])))
    assert run.rc == 0, run.stderr
    assert run.stdout.strip() == "hello"
    [first] = run.server.requests[0].body["messages"]
    header, body = _texts(first)
    assert "<command-message>pr-review</command-message>" in header
    assert "<command-name>/pr-review</command-name>" in header
    assert "<command-args>123</command-args>" in header
    assert "Review the pull request: 123" in body and "gh pr diff 123" in body
    assert "/pr-review 123" not in json.dumps(first)  # not the literal text
    # The broken command file was reported, naming its line.
    assert ".claude/commands/broken.md:2: invalid YAML frontmatter" in run.stderr


def test_bang_lines_run_before_the_prompt_is_sent(harness: Harness) -> None:
    make_showcase(harness.project)
    run = harness.run(
        ["-p", "/commit wip", "--output-format", "json"],
        Scenario.of(Turn([text("committed")])),
    )
    assert run.rc == 0, run.stderr
    assert run.json()["result"] == "committed"
    body = _texts(run.server.requests[0].body["messages"][0])[1]
    assert "- Current branch: main" in body and "Message hint: wip" in body
    assert "!`" not in body


def test_a_command_line_print_mode_may_not_run_stops_the_turn(harness: Harness) -> None:
    commands = harness.project / ".claude/commands"
    commands.mkdir(parents=True)
    (commands / "mk.md").write_text("---\ndescription: make a file\n---\nMade: !`touch made.txt`\n")
    run = harness.run(["-p", "/mk"], Scenario.of())
    assert run.rc == 1
    assert "/mk was not run: its command `touch made.txt` was denied" in run.stderr
    assert run.server.requests == [] and not (harness.project / "made.txt").exists()

    # allowed-tools frontmatter pre-approves it, for a folder the user trusts.
    (commands / "mk.md").write_text(
        "---\nallowed-tools: Bash(touch:*)\n---\nMade: !`touch made.txt`"
    )
    run = harness.run(["-p", "/mk"], Scenario.of())
    assert run.rc == 1 and "allowed-tools (Bash(touch:*)) not applied until you trust" in run.stderr
    assert not (harness.project / "made.txt").exists()
    harness.env["NERVE_TRUST_ALL"] = "1"
    run = harness.run(["-p", "/mk"], Scenario.of(Turn([text("ok")])))
    assert run.rc == 0, run.stderr
    assert (harness.project / "made.txt").exists()


def test_help_lists_custom_commands_and_skills(harness: Harness) -> None:
    make_showcase(harness.project)
    run = harness.run(["-p", "/help"], None)
    assert run.rc == 0, run.stderr
    lines = run.stdout.splitlines()
    review = next(line for line in lines if line.startswith("/pr-review"))
    assert "[pr-number] Review a pull request against the project checklist (project)" in review
    assert any(line.startswith("/frontend:component") for line in lines)
    assert any("Draft release notes" in line and "skill" in line for line in lines)
    assert any(line.startswith("/init") for line in lines)
    assert any(line.startswith("/agents") for line in lines)
    assert not any(line.startswith("/broken") for line in lines)


def test_rules_files_are_memory_and_agents_are_found_from_a_subdirectory(
    harness: Harness,
) -> None:
    make_showcase(harness.project)
    harness.project = harness.project / "src"
    scenario = Scenario.of(
        Turn(
            [
                tool_use(
                    "Agent",
                    {"subagent_type": "reviewer", "description": "review", "prompt": "SUBPROMPT"},
                    id="ag",
                )
            ]
        ),
        Turn([text("sub done")], match=Match(contains_text="SUBPROMPT")),
        Turn([text("done")], match=Match(tool_result_for="ag")),
    )
    run = harness.run(["-p", "review", "--output-format", "json"], scenario)
    assert run.rc == 0, run.stderr
    system = _system(run.server.requests[0].body)
    assert "RULE-UNCONDITIONAL-MARKER" in system and "MEMORY-MARKER" in system
    assert "RULE-REACT-MARKER" not in system  # a paths: rule waits for a matching read
    assert (
        "- reviewer: Use this agent to review a change. It reads the diff and the files around it."
        in system
    )
    assert "You review changes for bugs and style." in _system(run.server.requests[1].body)


def test_agents_lists_each_type_with_its_source(harness: Harness) -> None:
    make_showcase(harness.project)
    run = harness.run(["-p", "/agents"], Scenario.of())
    assert run.rc == 0, run.stderr
    lines = run.stdout.splitlines()
    assert any(
        line.startswith("reviewer") and "(project: .claude/agents/reviewer.md)" in line
        for line in lines
    )
    assert any(line.startswith("Explore") and "(built-in)" in line for line in lines)


def test_init_in_print_mode_asks_the_model_and_writes_per_the_mode(harness: Harness) -> None:
    (harness.project / "CLAUDE.md").write_text("old notes\n")
    target = harness.project / "CLAUDE.md"
    edit = {"file_path": str(target), "old_string": "old notes", "new_string": "# Notes\nfresh"}
    scenario = Scenario.of(
        Turn([tool_use("Read", {"file_path": str(target)}, id="r")]),
        Turn([tool_use("Edit", edit, id="e")], match=Match(tool_result_for="r")),
        Turn([text("Improved CLAUDE.md.")], match=Match(tool_result_for="e")),
    )
    run = harness.run(["-p", "/init", "--permission-mode", "acceptEdits"], scenario)
    assert run.rc == 0, run.stderr
    body = _texts(run.server.requests[0].body["messages"][0])[1]
    assert f"improve the existing {target}" in body
    assert target.read_text() == "# Notes\nfresh\n"


def test_an_unknown_slash_word_still_goes_to_the_model_as_typed(harness: Harness) -> None:
    make_showcase(harness.project)
    run = harness.run(["-p", "/nosuch 1"], Scenario.of(Turn([text("ok")])))
    assert run.rc == 0, run.stderr
    assert _texts(run.server.requests[0].body["messages"][0]) == ["/nosuch 1"]


def test_the_skill_tool_is_offered_only_with_something_to_load(harness: Harness) -> None:
    run = harness.run(["-p", "hi"], Scenario.of(Turn([text("ok")])))
    assert run.rc == 0, run.stderr
    assert "Skill" not in {t["name"] for t in run.server.requests[0].body["tools"]}
    make_showcase(harness.project)
    run = harness.run(["-p", "hi"], Scenario.of(Turn([text("ok")])))
    assert "Skill" in {t["name"] for t in run.server.requests[0].body["tools"]}
    assert "- release-notes: Draft release notes" in _system(run.server.requests[0].body)


def test_memory_needs_the_interactive_app(harness: Harness) -> None:
    run = harness.run(["-p", "/memory"], Scenario.of())
    assert run.rc == 1 and "/memory works only in the interactive app" in run.stderr
