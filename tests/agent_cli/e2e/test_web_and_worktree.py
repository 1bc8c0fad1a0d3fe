"""WebFetch, WebSearch, AskUserQuestion and ``--worktree`` through a real ``nerve -p`` process:
the session wires the side model (fast model for WebFetch, the server-side web search for
WebSearch) and the worktree; the scripted server plays both the main and the side requests."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing import (
    Match,
    Scenario,
    Turn,
    server_tool_use,
    text,
    tool_use,
    web_search_result,
)
from tests.agent_cli.e2e.conftest import Harness
from tests.tools.builtin.web_support import PageServer

FAST = "claude-haiku-4-5"


@pytest.fixture
def pages() -> Iterator[PageServer]:
    with PageServer() as server:
        yield server


def _model_is(name: str) -> Match:
    return Match(predicate=lambda b: b.get("model") == name, description=f"model {name}")


def _result_text(body: dict[str, Any], tool_use_id: str) -> str:
    for block in body["messages"][-1]["content"]:
        if block.get("type") == "tool_result" and block.get("tool_use_id") == tool_use_id:
            content = block["content"]
            return content if isinstance(content, str) else json.dumps(content)
    raise AssertionError(f"no tool_result for {tool_use_id}")


def test_webfetch_answers_through_the_fast_model(harness: Harness, pages: PageServer) -> None:
    url = pages.url("/page")
    scenario = Scenario.of(
        Turn([tool_use("WebFetch", {"url": url, "prompt": "How to install?"}, id="f1")]),
        Turn([text("Run pip install nerve.")], match=_model_is(FAST)),
        Turn(
            [text("You install it with pip.")],
            match=Match(tool_result_for="f1", contains_text="Run pip install nerve."),
        ),
    )
    run = harness.run(
        ["-p", "how?", "--output-format", "json", "--allowedTools", "WebFetch(domain:127.0.0.1)"],
        scenario,
    )
    assert run.rc == 0, run.stderr
    result = run.json()
    assert result["result"] == "You install it with pip."
    assert "# Install" in str(run.server.requests[1].body["messages"][0]["content"])
    assert pages.hits["/page"] == 1


def test_webfetch_without_a_rule_is_denied_in_print_mode(
    harness: Harness, pages: PageServer
) -> None:
    url = pages.url("/page")
    scenario = Scenario.of(
        Turn([tool_use("WebFetch", {"url": url, "prompt": "?"}, id="f1")]),
        Turn([text("I could not fetch it.")], match=Match(tool_result_for="f1")),
    )
    run = harness.run(["-p", "fetch", "--output-format", "json"], scenario)
    assert run.rc == 0, run.stderr
    denial = run.json()["permission_denials"]
    assert [d["tool_name"] for d in denial] == ["WebFetch"]
    assert "not granted" in _result_text(run.server.requests[1].body, "f1")
    assert pages.hits["/page"] == 0


def test_websearch_renders_results_with_urls(harness: Harness) -> None:
    scenario = Scenario.of(
        Turn([tool_use("WebSearch", {"query": "nerve agent"}, id="s1")]),
        Turn(
            [
                server_tool_use("web_search", {"query": "nerve agent"}, id="srv1"),
                web_search_result("srv1", [("Nerve", "https://nerve.dev/")]),
                text("Nerve is an agent."),
            ],
            match=Match(
                predicate=lambda b: b["tools"][0]["type"] == "web_search_20250305",
                description="the server tool is requested",
            ),
        ),
        Turn(
            [text("See [Nerve](https://nerve.dev/).")],
            match=Match(tool_result_for="s1", contains_text="https://nerve.dev/"),
        ),
    )
    run = harness.run(["-p", "search", "--allowedTools", "WebSearch"], scenario)
    assert run.rc == 0, run.stderr
    assert run.stdout.strip() == "See [Nerve](https://nerve.dev/)."


def test_ask_user_question_says_no_one_can_answer_in_print_mode(harness: Harness) -> None:
    question = {
        "question": "Which database?",
        "header": "DB",
        "options": [{"label": "Postgres"}, {"label": "SQLite"}],
        "multiSelect": False,
    }
    scenario = Scenario.of(
        Turn([tool_use("AskUserQuestion", {"questions": [question]}, id="q1")]),
        Turn(
            [text("I will pick SQLite.")],
            match=Match(tool_result_for="q1", contains_text="No one can answer"),
        ),
    )
    run = harness.run(["-p", "set up a db"], scenario)
    assert run.rc == 0, run.stderr
    results = run.server.requests[1].body["messages"][-1]["content"]
    assert results[0]["is_error"] is True


def test_tools_lists_the_new_tools(harness: Harness) -> None:
    run = harness.run(["-p", "/tools"], Scenario.of())
    assert run.rc == 0, run.stderr
    for name in ("WebFetch", "WebSearch", "AskUserQuestion", "EnterWorktree", "ExitWorktree"):
        assert f"\n{name} " in run.stdout, run.stdout


def _git_project(harness: Harness) -> Path:
    project = harness.project
    env = {
        **harness.env,
        "GIT_AUTHOR_NAME": "T",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "T",
        "GIT_COMMITTER_EMAIL": "t@e",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "one"]):
        subprocess.run(["git", *args], cwd=project, env=env, check=True, capture_output=True)
    return project.resolve()


def test_worktree_flag_starts_in_a_worktree_and_exit_returns(harness: Harness) -> None:
    (harness.project / "README").write_text("hello\n")
    project = _git_project(harness)
    wt = project / ".nerve" / "worktrees" / "feat"

    def pwd_is(path: Path, call_id: str) -> Match:
        return Match(
            predicate=lambda b: _result_text(b, call_id).strip() == str(path),
            description=f"pwd is {path}",
        )

    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "pwd"}, id="p1")]),
        Turn([tool_use("ExitWorktree", {"action": "keep"}, id="x1")], match=pwd_is(wt, "p1")),
        Turn(
            [tool_use("Bash", {"command": "pwd"}, id="p2")],
            match=Match(tool_result_for="x1", contains_text=f"back in {project}"),
        ),
        Turn([text("Back home.")], match=pwd_is(project, "p2")),
    )
    run = harness.run(["--worktree", "feat", "-p", "where am I?"], scenario)
    assert run.rc == 0, run.stderr
    assert run.stdout.strip() == "Back home."
    assert (wt / "README").read_text() == "hello\n"
    branch = subprocess.run(
        ["git", "-C", str(wt), "branch", "--show-current"], capture_output=True, text=True
    )
    assert branch.stdout.strip() == "worktree-feat"


def test_worktree_flag_outside_git_is_a_clear_error(harness: Harness) -> None:
    run = harness.run(["--worktree", "feat", "-p", "hi"], Scenario.of())
    assert run.rc == 1
    assert "--worktree feat:" in run.stderr and "not inside a git repository" in run.stderr
