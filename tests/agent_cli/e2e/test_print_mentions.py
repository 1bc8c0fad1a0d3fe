"""``nerve -p "explain @a.py"``: the request carries the file; a denied one is not sent."""

from __future__ import annotations

import json

from agent_cli.testing import Scenario, Turn, text
from tests.agent_cli.e2e.conftest import Harness


def test_a_mentioned_file_goes_with_the_prompt(harness: Harness) -> None:
    (harness.project / "a.py").write_text("def answer():\n    return 42\n")
    run = harness.run(["-p", "explain @a.py"], Scenario.of(Turn([text("it returns 42")])))
    assert run.rc == 0, run.stderr
    assert run.stdout.strip() == "it returns 42"
    blocks = run.server.requests[0].body["messages"][0]["content"]
    assert blocks[0] == {"type": "text", "text": "explain @a.py"}
    sent = json.dumps(blocks)
    assert "Called the Read tool" in sent
    assert "     1\\tdef answer():\\n     2\\t    return 42" in sent


def test_a_denied_file_is_not_sent_and_the_user_is_told(harness: Harness) -> None:
    secrets = harness.project / "secrets"
    secrets.mkdir()
    (secrets / "token.txt").write_text("sk-VERY-SECRET\n")
    (harness.project / ".claude").mkdir(exist_ok=True)
    settings = {"permissions": {"deny": ["Read(./secrets/**)"]}}
    (harness.project / ".claude" / "settings.json").write_text(json.dumps(settings))
    run = harness.run(
        ["-p", "print @secrets/token.txt"], Scenario.of(Turn([text("I cannot see it")]))
    )
    assert run.rc == 0, run.stderr
    sent = json.dumps(run.server.requests[0].body["messages"])
    assert "sk-VERY-SECRET" not in sent
    assert "@secrets/token.txt was not attached" in sent
    assert "@secrets/token.txt was not attached" in run.stderr
