"""The parts ``AgentSession`` holds, through a real session built from an isolated home: who
answers an ask, the model of a command's turn, the warnings list the parts share, the mode."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agent_cli.options import RunOptions
from agent_cli.session.agent_session import AgentSession
from tests.agent_cli.session.test_trust import isolated  # noqa: F401  (fixture)
from tools.context import PermissionAnswer


@pytest.fixture
async def session(isolated: Path) -> AsyncIterator[AgentSession]:  # noqa: F811
    made = AgentSession.create(RunOptions(), cwd=isolated, record=False)
    yield made
    await made.close()


async def test_without_a_handler_an_ask_is_denied_and_no_ui_is_attached(
    session: AgentSession,
) -> None:
    prompt = SimpleNamespace(tool_name="Bash", verdict=SimpleNamespace(reason="needs approval"))
    assert not session.approvals.attached
    response = await session.loop.permission_handler(prompt)
    assert response.answer is PermissionAnswer.DENY
    assert "non-interactively" in response.feedback

    async def allow(_: Any) -> str:
        return "answered"

    session.set_permission_handler(allow)
    assert session.approvals.attached
    assert await session.loop.permission_handler(prompt) == "answered"


def test_a_commands_model_holds_for_its_turn_only(session: AgentSession) -> None:
    session.set_model("claude-one")
    with session.models.for_turn("claude-two"):
        assert session.loop.model_name == "claude-two"
        assert session.model == "claude-one"  # the session's model is not the turn's
    assert session.loop.model_name == "claude-one"
    with session.models.for_turn(None):
        assert session.loop.model_name == "claude-one"


def test_take_warnings_drains_the_list_the_parts_add_to(session: AgentSession) -> None:
    shared = session.warnings
    session.take_warnings()
    shared.append("from a part")  # as the idle notification does
    assert session.take_warnings() == ["from a part"]
    assert session.warnings is shared and shared == []


def test_the_mode_is_the_permission_parts(session: AgentSession) -> None:
    assert session.mode == session.permissions.mode == "default"
    session.set_mode("plan")
    assert session.ctx.permissions.mode.value == "plan"
    assert session.cycle_mode() == session.mode
