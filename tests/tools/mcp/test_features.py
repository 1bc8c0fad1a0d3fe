"""MCP features with real servers: SSE, progress, elicitation, roots, resources, kill mid-call,
a 10 MB result, and a third-party server from PyPI (``mcp-server-time``)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from permissions.types import PermissionContext, PermissionMode
from tests.tools.mcp.conftest import live_pids_with, make_manager, serve_demo, stdio, text_of
from tests.tools.pipeline_helpers import make_ctx
from tools.context import ToolUseContext
from tools.mcp import McpConfig, McpManager, McpServerConfig
from tools.pipeline.steps import CallOutcome, ToolCall, run_tool_call
from tools.questions import QuestionPrompt, QuestionResponse
from tools.registry import assemble_tool_pool, get_all_base_tools


def ctx_for(
    manager: McpManager, tmp_path: Path, progress: list[tuple[str, Any]] | None = None
) -> ToolUseContext:
    pool = assemble_tool_pool(get_all_base_tools(), manager.tools(), PermissionContext())
    return make_ctx(
        pool, mode=PermissionMode.BYPASS, cwd=tmp_path, session_dir=tmp_path, progress=progress
    )


async def run(ctx: ToolUseContext, name: str, args: dict[str, Any]) -> CallOutcome:
    return await run_tool_call(ToolCall(id="t", name=name, input=args), ctx)


def text(out: CallOutcome) -> str:
    return text_of(out.tool_result["content"])


async def test_legacy_sse_transport(tmp_path: Path, token: str) -> None:
    proc, port = await serve_demo(token, "--sse")
    server = McpServerConfig(
        name="legacy", scope="user", source="t", type="sse", url=f"http://127.0.0.1:{port}/sse"
    )
    manager = McpManager(McpConfig(servers=(server,)), log_dir=tmp_path, project_dir=tmp_path)
    try:
        assert await manager.start() == []
        assert {v.transport for v in manager.servers()} == {"sse"}
        out = await run(ctx_for(manager, tmp_path), "mcp__legacy__add", {"a": 40, "b": 2})
        assert not out.is_error and text(out) == "42"
    finally:
        await manager.close()
        proc.terminate()
        await proc.wait()


async def test_progress_notifications_are_tool_progress(tmp_path: Path, token: str) -> None:
    manager = make_manager(tmp_path, stdio("demo", args=[token]))
    progress: list[tuple[str, Any]] = []
    try:
        assert await manager.start() == []
        out = await run(ctx_for(manager, tmp_path, progress), "mcp__demo__steps", {"n": 3})
        assert not out.is_error and text(out) == "did 3 steps"
        assert [p for _, p in progress] == ["1/3 step 1", "2/3 step 2", "3/3 step 3"]
        assert {tid for tid, _ in progress} == {"t"}
    finally:
        await manager.close()


async def test_roots_are_the_working_directories(tmp_path: Path, token: str) -> None:
    extra = tmp_path / "other dir"
    extra.mkdir()
    manager = make_manager(tmp_path, stdio("demo", args=[token]))
    manager.set_roots([tmp_path, extra])
    try:
        assert await manager.start() == []
        out = await run(ctx_for(manager, tmp_path), "mcp__demo__roots", {})
        assert text(out).splitlines() == [tmp_path.as_uri(), extra.as_uri()]
    finally:
        await manager.close()


async def test_elicitation_asks_through_the_question_port(tmp_path: Path, token: str) -> None:
    manager = make_manager(tmp_path, stdio("demo", args=[token]))
    seen: list[QuestionPrompt] = []

    async def ask_user(prompt: QuestionPrompt) -> QuestionResponse:
        seen.append(prompt)
        q = [x.question for x in prompt.questions]
        return QuestionResponse({q[0]: "Ada", q[1]: "green", q[2]: "36", q[3]: "Yes"})

    try:
        assert await manager.start() == []
        ctx = ctx_for(manager, tmp_path)
        from dataclasses import replace

        asking = replace(ctx, callbacks=replace(ctx.callbacks, ask_user=ask_user))
        out = await run(asking, "mcp__demo__ask_name", {})
        assert not out.is_error and text(out) == "hello Ada, 36, green, subscribe=True"
        (prompt,) = seen
        assert prompt.questions[0].question.startswith("Who are you?\n")
        assert [o.label for o in prompt.questions[1].options] == ["red", "green"]
        assert [o.label for o in prompt.questions[3].options] == ["Yes", "No"]
        # With no one to ask (print mode, headless) the form is declined, the call goes on.
        out = await run(ctx, "mcp__demo__ask_name", {})
        assert not out.is_error and text(out) == "elicitation decline"
    finally:
        await manager.close()


async def test_resources_are_listed_and_read(tmp_path: Path, token: str) -> None:
    manager = make_manager(tmp_path, stdio("demo", args=[token]))
    try:
        assert await manager.start() == []
        ctx = ctx_for(manager, tmp_path)
        out = await run(ctx, "ListMcpResourcesTool", {})
        items = json.loads(text(out))
        readme = next(i for i in items if i["uri"] == "demo://readme")
        assert readme["server"] == "demo" and readme["mimeType"] == "text/markdown"
        out = await run(ctx, "ReadMcpResource", {"server": "demo", "uri": "demo://readme"})
        (content,) = json.loads(text(out))["contents"]
        assert content["text"].startswith("# Demo")
        out = await run(ctx, "ReadMcpResourceTool", {"server": "nope", "uri": "demo://readme"})
        assert out.is_error and 'MCP server "nope" not found' in text(out)
        out = await run(ctx, "ReadMcpResourceTool", {"server": "demo", "uri": "demo://none"})
        assert out.is_error and "MCP server demo" in text(out)
        # Bigger than the result limit: saved whole by the pipeline, a preview inline.
        out = await run(ctx, "ReadMcpResourceTool", {"server": "demo", "uri": "demo://big"})
        saved = Path(text(out).split("Full output saved to: ")[1].split("\n")[0])
        assert "r" * 120_000 in json.loads(saved.read_text())["contents"][0]["text"]
    finally:
        await manager.close()


async def test_ten_megabyte_result_is_saved_whole(tmp_path: Path, token: str) -> None:
    manager = make_manager(tmp_path, stdio("demo", args=[token]))
    try:
        assert await manager.start() == []
        ctx = ctx_for(manager, tmp_path)
        out = await run(ctx, "mcp__demo__big", {"n": 10_000_000})
        body = text(out)
        assert not out.is_error and len(body) < 5_000
        assert "[OUTPUT TRUNCATED - exceeded 25000 token limit]" in body
        saved = Path(body.split("Full output saved to: ")[1].split("\n")[0])
        assert saved.stat().st_size == 10_000_000
        out = await run(ctx, "mcp__demo__add", {"a": 1, "b": 2})  # the session goes on
        assert text(out) == "3"
    finally:
        await manager.close()


async def test_server_killed_mid_call_then_restarted(tmp_path: Path, token: str) -> None:
    manager = make_manager(tmp_path, stdio("demo", args=[token]))
    manager.connections["demo"].reconnect_delays_s = (0.2,)
    try:
        assert await manager.start() == []
        ctx = ctx_for(manager, tmp_path)
        first_pid = int(text(await run(ctx, "mcp__demo__pid", {})))
        call = asyncio.create_task(run(ctx, "mcp__demo__sleep", {"seconds": 60}))
        await asyncio.sleep(0.3)  # let the call reach the server
        os.kill(first_pid, signal.SIGKILL)
        out = await call
        assert out.is_error and "closed the connection during the call" in text(out)
        for _ in range(600):
            if manager.connections["demo"].connected:
                break
            await asyncio.sleep(0.05)
        second_pid = int(text(await run(ctx, "mcp__demo__pid", {})))
        assert second_pid != first_pid
    finally:
        await manager.close()
    assert live_pids_with(token) == []


async def test_restarts_give_up_and_say_so(tmp_path: Path, token: str) -> None:
    marker = tmp_path / "once"
    script = tmp_path / "once.py"
    # Serves once; every restart exits at once (a server that keeps crashing).
    script.write_text(
        "import os, runpy, sys\n"
        f"m = {str(marker)!r}\n"
        "if os.path.exists(m): sys.exit(5)\n"
        "open(m, 'w').close()\n"
        f"sys.argv = ['demo', {token!r}]\n"
        f"runpy.run_path({str(Path(__file__).parent / 'servers' / 'demo_server.py')!r}, "
        "run_name='__main__')\n"
    )
    server = McpServerConfig(
        name="flaky", scope="user", source="t", command=sys.executable, args=(str(script), token)
    )
    manager = McpManager(McpConfig(servers=(server,)), log_dir=tmp_path, project_dir=tmp_path)
    manager.connections["flaky"].reconnect_delays_s = (0.1, 0.1)
    try:
        assert await manager.start() == []
        out = await run(ctx_for(manager, tmp_path), "mcp__flaky__crash", {})
        assert out.is_error
        for _ in range(600):
            if manager.servers()[0].status == "failed":
                break
            await asyncio.sleep(0.05)
        view = manager.servers()[0]
        assert view.status == "failed" and view.error and "gave up after 2 restarts" in view.error
    finally:
        await manager.close()


TIME_SERVER = Path(sys.executable).parent / "mcp-server-time"


@pytest.mark.skipif(not TIME_SERVER.exists(), reason="pip install -e '.[test]' installs it")
async def test_third_party_server_from_pypi(tmp_path: Path) -> None:
    server = McpServerConfig(
        name="time",
        scope="user",
        source="t",
        command=str(TIME_SERVER),
        args=("--local-timezone", "UTC"),
    )
    manager = McpManager(McpConfig(servers=(server,)), log_dir=tmp_path, project_dir=tmp_path)
    try:
        assert await manager.start() == []
        names = {t.name for t in manager.tools()}
        assert {"mcp__time__get_current_time", "mcp__time__convert_time"} <= names
        ctx = ctx_for(manager, tmp_path)
        out = await run(ctx, "mcp__time__get_current_time", {"timezone": "Europe/Warsaw"})
        assert not out.is_error and json.loads(text(out))["timezone"] == "Europe/Warsaw"
        out = await run(ctx, "mcp__time__get_current_time", {"timezone": "Not/AZone"})
        assert out.is_error and "Not/AZone" in text(out)
    finally:
        await manager.close()
