"""The session's side model: wired for the tools (and sub-agents), its tokens in the session's
totals, the fast model from Claude Code's variables."""

from __future__ import annotations

import os
from pathlib import Path

from agent_cli.loop.events import ToolFinished
from agent_cli.options import RunOptions
from agent_cli.session.agent_session import AgentSession
from agent_cli.session.side_model import fast_model
from agent_cli.testing import Match, Scenario, ScriptedServer, Turn, text, tool_use
from tests.agent_cli.loop.test_agent_loop import _collect, env  # noqa: F401  (fixture)
from tests.tools.builtin.web_support import PageServer
from tools.context import create_subagent_context
from tools.side_model import get_side_model


def test_fast_model_follows_claude_codes_variables() -> None:
    assert fast_model({}) == "claude-haiku-4-5"
    assert fast_model({"ANTHROPIC_SMALL_FAST_MODEL": "claude-3-5-haiku"}) == "claude-3-5-haiku"
    assert fast_model({"ANTHROPIC_DEFAULT_HAIKU_MODEL": "my-haiku"}) == "my-haiku"
    # Claude Code's getSmallFastModel(): ANTHROPIC_SMALL_FAST_MODEL || the haiku default
    both = {"ANTHROPIC_DEFAULT_HAIKU_MODEL": "my-haiku", "ANTHROPIC_SMALL_FAST_MODEL": "old"}
    assert fast_model(both) == "old"
    assert fast_model({"ANTHROPIC_DEFAULT_HAIKU_MODEL": "sonnet"}) == "claude-sonnet-4-6"


async def test_webfetch_side_request_counts_in_the_session(env: Path) -> None:  # noqa: F811
    with (
        PageServer() as pages,
        ScriptedServer(
            Scenario.of(
                Turn([tool_use("WebFetch", {"url": pages.url("/page"), "prompt": "?"}, id="f1")]),
                Turn([text("an answer")], input_tokens=500, output_tokens=40),
                Turn([text("done")], match=Match(tool_result_for="f1", contains_text="an answer")),
            )
        ) as server,
    ):
        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        options = RunOptions(allowed_tools=["WebFetch(domain:127.0.0.1)"])
        session = AgentSession.create(options, cwd=env)
        child = create_subagent_context(session.ctx, agent_id="a1", system_prompt="")
        assert get_side_model(child) is session.ctx.options.services.side_model
        events = await _collect(session, "read the page")
        server.assert_done()
        (finished,) = [e for e in events if isinstance(e, ToolFinished)]
        assert not finished.is_error and finished.content == "an answer"
        usage = session.usage_summary()
        assert usage["input_tokens"] == 10 + 500 + 10 and usage["output_tokens"] == 5 + 40 + 5
        assert session.loop.usage.by_model["claude-haiku-4-5"].input == 500
        await session.close()
