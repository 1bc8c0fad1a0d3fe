"""Background tasks under the real Agent SDK: ``task_started`` / ``task_updated`` /
``task_notification`` frames parse as the SDK's typed messages, and ``stop_task(task_id)`` ends a
running ``Bash(run_in_background=true)`` task's process group (through the scripted API)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import Harness, harness
from tests.agent_cli.frontends.sdk.test_query import options

sdk = pytest.importorskip(
    "claude_agent_sdk", reason="claude-agent-sdk is not installed (the test extra brings it)"
)

__all__ = ["harness"]


def _running(marker: str) -> bool:
    """Whether any process's command line still holds ``marker``."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            return True
    return False


async def _until(messages: AsyncIterator[Any], kind: type, timeout: float = 60.0) -> list[Any]:
    """Messages up to and including the first of ``kind`` (a hang fails instead of blocking)."""
    got: list[Any] = []

    async def read() -> None:
        async for message in messages:
            got.append(message)
            if isinstance(message, kind):
                return
        raise AssertionError(f"the stream ended before a {kind.__name__}: {got}")

    await asyncio.wait_for(read(), timeout)
    return got


def _background_scenario(command: str, description: str) -> Scenario:
    call = {"command": command, "description": description, "run_in_background": True}
    return Scenario.of(
        Turn([tool_use("Bash", call, id="bg")]),
        Turn([text("Started it.")], match=Match(tool_result_for="bg")),
    )


async def test_stop_task_ends_a_running_background_command(harness: Harness) -> None:
    marker = "31.4159"  # a sleep no other test runs
    server = harness.server(_background_scenario(f"sleep {marker}", "Wait a long while"))
    opts = options(harness, server, allowed_tools=["Bash"])
    try:
        async with sdk.ClaudeSDKClient(options=opts) as client:
            await client.query("start the long wait")
            turn = [m async for m in client.receive_response()]
            (started,) = [m for m in turn if isinstance(m, sdk.TaskStartedMessage)]
            assert _running(marker)
            with pytest.raises(Exception, match="no background task 'nope'"):
                await client.stop_task("nope")
            await client.stop_task(started.task_id)
            after = await _until(client.receive_messages(), sdk.TaskNotificationMessage)
            with pytest.raises(Exception, match="is not running"):
                await client.stop_task(started.task_id)
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    assert started.description == "Wait a long while" and started.task_type == "local_bash"
    assert started.session_id == turn[-1].session_id
    (updated,) = [m for m in after if isinstance(m, sdk.TaskUpdatedMessage)]
    assert updated.task_id == started.task_id and updated.status == "killed"
    assert updated.status in sdk.types.TERMINAL_TASK_STATUSES
    note = after[-1]
    assert note.task_id == started.task_id and note.status == "stopped"
    assert "was stopped" in note.summary and Path(note.output_file).is_file()
    assert not _running(marker)  # stop_task ended the whole group before it answered


async def test_a_task_that_ends_by_itself_is_reported_with_its_status(harness: Harness) -> None:
    server = harness.server(_background_scenario("echo done-here; exit 3", ""))
    opts = options(harness, server, allowed_tools=["Bash"])
    try:
        async with sdk.ClaudeSDKClient(options=opts) as client:
            await client.query("run it in the background")
            got = await _until(client.receive_messages(), sdk.TaskNotificationMessage)
            if not any(isinstance(m, sdk.ResultMessage) for m in got):
                got += [m async for m in client.receive_response()]
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    (started,) = [m for m in got if isinstance(m, sdk.TaskStartedMessage)]
    assert started.description == "echo done-here; exit 3"  # no description: the command
    (updated,) = [m for m in got if isinstance(m, sdk.TaskUpdatedMessage)]
    assert updated.status == "failed" and isinstance(updated.patch["end_time"], int)
    (note,) = [m for m in got if isinstance(m, sdk.TaskNotificationMessage)]
    assert note.status == "failed" and "exit code 3" in note.summary
    assert "done-here" in Path(note.output_file).read_text()
