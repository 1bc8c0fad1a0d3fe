"""``--system-prompt`` / ``--append-system-prompt`` end to end: what reaches the server."""

from __future__ import annotations

import json

from agent_cli.testing import Scenario, Turn, text
from tests.agent_cli.e2e.conftest import Harness, harness

__all__ = ["harness"]


def _system(harness: Harness, *flags: str) -> str:
    (harness.project / "CLAUDE.md").write_text("Project rule: say hello.")
    run = harness.run(["-p", "hi", *flags], Scenario.of(Turn([text("ok")])))
    assert run.rc == 0, run.stderr
    assert run.stdout.strip() == "ok"
    return json.dumps(run.server.requests[0].body["system"])


def test_system_prompt_replaces_the_default_and_memory_still_follows(harness: Harness) -> None:
    system = _system(harness, "--system-prompt", "You are a pirate.")
    assert "You are a pirate." in system
    assert "You are Nerve" not in system and "Tools available in this session" not in system
    assert "Project rule: say hello." in system


def test_an_empty_system_prompt_keeps_the_default(harness: Harness) -> None:
    # The Agent SDK passes --system-prompt "" when the caller set none.
    system = _system(harness, "--system-prompt", "")
    assert "You are Nerve" in system and "Project rule: say hello." in system


def test_append_system_prompt_goes_after_the_default_or_the_replacement(harness: Harness) -> None:
    system = _system(harness, "--append-system-prompt", "Always end with 'Arr.'")
    assert "You are Nerve" in system
    assert system.index("Project rule") < system.index("Always end with")
    both = _system(harness, "--system-prompt", "Be terse.", "--append-system-prompt", "Arr.")
    assert "Be terse." in both and "Arr." in both and "You are Nerve" not in both
