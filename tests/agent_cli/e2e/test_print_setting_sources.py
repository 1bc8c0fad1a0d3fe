"""``--setting-sources`` decides more than the settings files, as the Agent SDK's
``settingSources`` does (code.claude.com/docs/en/agent-sdk/claude-code-features: "project" loads
the project's CLAUDE.md, rules and skills; "user" the user's CLAUDE.md, rules and skills;
"local" CLAUDE.local.md): what reaches the model's system prompt, which skills, commands and
agents the session offers, through a real ``nerve -p`` and the scripted server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing import Scenario, Turn, text
from tests.agent_cli.e2e.conftest import Harness

_MARKS = {
    "user": ["USER-MEMO", "USER-RULE", "uskill", "uagent"],
    "project": ["PROJECT-MEMO", "PROJECT-RULE", "pskill", "pagent"],
    "local": ["LOCAL-MEMO"],
}


def _skill(folder: Path, name: str) -> None:
    (folder / "skills" / name).mkdir(parents=True)
    (folder / "skills" / name / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: the {name} skill\n---\nDo {name}.\n"
    )


def _agent(folder: Path, name: str) -> None:
    (folder / "agents").mkdir(parents=True)
    (folder / "agents" / f"{name}.md").write_text(
        f"---\nname: {name}\ndescription: the {name} agent\n---\nYou are {name}.\n"
    )


def _rule(folder: Path, mark: str) -> None:
    (folder / "rules").mkdir(parents=True)
    (folder / "rules" / "style.md").write_text(f"{mark}: keep lines short.\n")


def _customize(harness: Harness) -> None:
    harness.env["NERVE_TRUST_ALL"] = "1"
    user = Path(harness.env["CLAUDE_CONFIG_DIR"])
    user.mkdir(parents=True, exist_ok=True)
    (user / "CLAUDE.md").write_text("USER-MEMO: answer in English.\n")
    _rule(user, "USER-RULE")
    _skill(user, "uskill")
    _agent(user, "uagent")
    project = harness.project / ".claude"
    (harness.project / "CLAUDE.md").write_text("PROJECT-MEMO: run make test.\n")
    (harness.project / "CLAUDE.local.md").write_text("LOCAL-MEMO: my sandbox URL.\n")
    _rule(project, "PROJECT-RULE")
    _skill(project, "pskill")
    _agent(project, "pagent")


@pytest.mark.parametrize(
    "sources, loaded",
    [
        (None, ["user", "project", "local"]),
        ("user", ["user"]),
        ("project", ["project"]),
        ("local", ["local"]),
        ("project,local", ["project", "local"]),
        ("", []),
    ],
)
def test_setting_sources_decide_memory_rules_skills_and_agents(
    harness: Harness, sources: str | None, loaded: list[str]
) -> None:
    _customize(harness)
    flags = [] if sources is None else ["--setting-sources", sources]
    run = harness.run(
        ["-p", "hi", "--output-format", "stream-json", "--verbose", *flags],
        Scenario.of(Turn([text("ok")])),
    )
    assert run.rc == 0, run.stderr
    system = json.dumps(run.server.requests[0].body["system"])
    init: dict[str, Any] = json.loads(run.stdout.splitlines()[0])
    offered = " ".join([*init["skills"], *init["agents"], *init["slash_commands"]])
    for source, marks in _MARKS.items():
        for mark in marks:
            where = offered if mark.islower() else system
            assert (mark in where) == (source in loaded), (source, mark, sources)
