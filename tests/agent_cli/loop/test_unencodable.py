"""Text UTF-8 cannot encode (a lone surrogate in the model's JSON) never breaks the session."""

from __future__ import annotations

from pathlib import Path

from agent_cli.loop.events import TurnFinished
from agent_cli.loop.messages import encodable, normalize_messages_for_api
from agent_cli.testing import Match, Scenario, ScriptedServer, Turn, text, tool_use
from agent_cli.transcripts.transcript import TranscriptReader
from tests.agent_cli.e2e.conftest import Harness, harness
from tests.agent_cli.loop.test_agent_loop import _collect, _session, env

__all__ = ["env", "harness"]


def test_encodable_escapes_only_what_needs_it() -> None:
    plain = {"a": ["ok", {"b": "ünï"}], "n": 3}
    assert encodable(plain) is plain
    assert encodable({"a": ["x\ud83dy"]}) == {"a": ["x\\ud83dy"]}
    out = normalize_messages_for_api([{"role": "user", "content": "file b\udcffd.txt"}])
    assert out == [{"role": "user", "content": [{"type": "text", "text": "file b\\udcffd.txt"}]}]


async def test_half_an_emoji_in_the_model_text_does_not_fail_the_next_request(env: Path) -> None:
    scenario = Scenario.of(
        Turn([text("Looking \ud83d."), tool_use("Glob", {"pattern": "*.py"}, id="t1")]),
        Turn([text("Nothing there.")], match=Match(tool_result_for="t1")),
        Turn([text("Still here.")], match=Match(contains_text="again")),
    )
    with ScriptedServer(scenario) as server:
        session = await _session(server, env, permission_mode="bypassPermissions")
        first = await _collect(session, "go")
        second = await _collect(session, "again")
        transcript = session.transcript
        await session.close()
    server.assert_done()
    for events, answer in ((first, "Nothing there."), (second, "Still here.")):
        fin = events[-1]
        assert isinstance(fin, TurnFinished) and not fin.is_error, events
        assert fin.result_text == answer
    sent = server.requests[1].body["messages"][1]["content"]
    assert sent[0] == {"type": "text", "text": "Looking \\ud83d."}
    # The transcript keeps what the model sent, readable.
    assert transcript is not None
    reader = TranscriptReader.load(transcript.path)
    assert reader.warnings == []
    assert reader.messages[1]["content"][0] == {"type": "text", "text": "Looking \ud83d."}


def test_a_prompt_argument_with_an_undecodable_byte(harness: Harness) -> None:
    run = harness.run(
        ["-p", "what is in b\udcffd.txt?", "--output-format", "json"],
        Scenario.of(Turn([text("A file.")], match=Match(contains_text="b\\udcffd.txt"))),
    )
    assert run.rc == 0, run.stderr
    assert run.json()["result"] == "A file."
