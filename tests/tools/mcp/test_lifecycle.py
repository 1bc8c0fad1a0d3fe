"""Server lifecycle: failures at start-up, crashes, timeouts, abort, and no orphans at close."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from permissions.types import PermissionContext, PermissionMode
from tests.tools.mcp.conftest import live_pids_with, make_manager, stdio, text_of
from tests.tools.pipeline_helpers import make_ctx
from tools.context import ToolUseContext
from tools.mcp import McpConfig, McpManager, McpServerConfig
from tools.pipeline.steps import CallOutcome, ToolCall, run_tool_call
from tools.registry import assemble_tool_pool, get_all_base_tools


def ctx_for(manager: McpManager, tmp_path: Path) -> ToolUseContext:
    pool = assemble_tool_pool(get_all_base_tools(), manager.tools(), PermissionContext())
    return make_ctx(pool, mode=PermissionMode.BYPASS, cwd=tmp_path, session_dir=tmp_path)


async def run(ctx: ToolUseContext, name: str, args: dict[str, Any]) -> CallOutcome:
    return await run_tool_call(ToolCall(id="t", name=name, input=args), ctx)


async def wait_for_status(manager: McpManager, name: str, status: str) -> None:
    for _ in range(600):
        if {v.name: v.status for v in manager.servers()}[name] == status:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{name} never became {status}: {manager.servers()}")


def content_text(out: CallOutcome) -> str:
    return text_of(out.tool_result["content"])


async def test_failing_servers_are_skipped_with_warnings_and_good_ones_work(
    tmp_path: Path, token: str
) -> None:
    manager = make_manager(
        tmp_path,
        stdio("good", args=[token]),
        stdio("exits", "exit_server.py", args=[token]),
        McpServerConfig(name="missing", scope="user", source="t", command="/no/such/binary"),
    )
    try:
        warnings = await manager.start()
        text = "\n".join(warnings)
        assert len(warnings) == 2, warnings
        assert "MCP server exits failed to start" in text
        assert "MCP server missing failed to start" in text and "/no/such/binary" in text
        # The server's stderr went to its log file, not to our terminal.
        log = (tmp_path / "mcp-logs" / "exits.log").read_text()
        assert "missing configuration, giving up" in log
        status = {v.name: v.status for v in manager.servers()}
        assert status == {"good": "connected", "exits": "failed", "missing": "failed"}
        assert {t.name.split("__")[1] for t in manager.tools() if t.is_mcp} == {"good"}
        out = await run(ctx_for(manager, tmp_path), "mcp__good__add", {"a": 1, "b": 2})
        assert content_text(out) == "3"
    finally:
        await manager.close()
    assert live_pids_with(token) == []


async def test_hanging_and_garbage_servers_are_skipped_after_the_timeout(
    tmp_path: Path, token: str, capfd: pytest.CaptureFixture[str]
) -> None:
    manager = make_manager(
        tmp_path,
        stdio("hang", "hang_server.py", args=[token]),
        stdio("garbage", "garbage_server.py", args=[token]),
        environ={"MCP_TIMEOUT": "1500"},
    )
    try:
        warnings = await manager.start()
        text = "\n".join(warnings)
        assert "MCP server hang failed to start: did not answer within 1.5 s" in text
        assert "MCP server garbage failed to start: did not answer within 1.5 s" in text
        assert "hang server" in (tmp_path / "mcp-logs" / "hang.log").read_text()
        assert manager.tools() == []
        # The SDK's complaints about the garbage go to a log file, never to the terminal.
        assert "Failed to parse" in (tmp_path / "mcp-logs" / "client.log").read_text()
        captured = capfd.readouterr()
        assert "Failed to parse" not in captured.err and "hang server" not in captured.err
        # Timed-out servers are stopped at once, not left running until close.
        assert live_pids_with(token) == []
    finally:
        await manager.close()


async def test_crash_mid_call_is_a_clean_error_then_the_server_is_restarted(
    tmp_path: Path, token: str
) -> None:
    manager = make_manager(tmp_path, stdio("demo", args=[token]), stdio("other", args=[token]))
    manager.connections["demo"].reconnect_delays_s = (2.0, 0.2)
    try:
        assert await manager.start() == []
        ctx = ctx_for(manager, tmp_path)
        out = await run(ctx, "mcp__demo__crash", {})
        assert out.is_error and "closed the connection during the call" in content_text(out)
        assert out.error_class == "tool_error"
        # Its tools stay listed; a call while it restarts is a clear error.
        assert "mcp__demo__add" in {t.name for t in manager.tools()}
        out = await run(ctx, "mcp__demo__add", {"a": 1, "b": 1})
        assert out.is_error and "MCP server demo is reconnecting" in content_text(out)
        assert {v.name: v.status for v in manager.servers()}["demo"] == "reconnecting"
        out = await run(ctx, "mcp__other__add", {"a": 1, "b": 1})
        assert not out.is_error and content_text(out) == "2"
        await wait_for_status(manager, "demo", "connected")
        assert manager.connections["demo"].reconnects == 1
        out = await run(ctx, "mcp__demo__add", {"a": 1, "b": 1})
        assert not out.is_error and content_text(out) == "2"
    finally:
        await manager.close()
    assert live_pids_with(token) == []


async def test_tool_timeout_and_abort(tmp_path: Path, token: str) -> None:
    manager = make_manager(
        tmp_path, stdio("demo", args=[token]), environ={"MCP_TOOL_TIMEOUT": "300"}
    )
    try:
        assert await manager.start() == []
        ctx = ctx_for(manager, tmp_path)
        out = await run(ctx, "mcp__demo__sleep", {"seconds": 1.0})
        assert out.is_error and out.error_class == "timeout"
        assert "timed out after 0.3 s" in content_text(out)
        # Ctrl+C during a call: cancelled at once, and the server still answers afterwards.
        ctx2 = ctx_for(manager, tmp_path)
        task = asyncio.ensure_future(run(ctx2, "mcp__demo__sleep", {"seconds": 0.2}))
        await asyncio.sleep(0.05)
        ctx2.abort.abort()
        out = await task
        assert out.cancelled
        await asyncio.sleep(0.3)  # the server finishes its blocking sleep
        out = await run(ctx, "mcp__demo__add", {"a": 2, "b": 2})
        assert content_text(out) == "4"
    finally:
        await manager.close()


async def test_server_environment(tmp_path: Path, token: str, monkeypatch: Any) -> None:
    manager = make_manager(
        tmp_path,
        stdio("demo", args=[token], env={"FROM_CONFIG": "configured"}),
        environ={"ANTHROPIC_API_KEY": "sk-secret", "INHERITED": "yes"},
    )
    try:
        assert await manager.start() == []
        ctx = ctx_for(manager, tmp_path)
        values = {}
        for name in ("FROM_CONFIG", "INHERITED", "ANTHROPIC_API_KEY", "CLAUDE_PROJECT_DIR"):
            out = await run(ctx, "mcp__demo__env", {"name": name})
            values[name] = content_text(out)
        assert values == {
            "FROM_CONFIG": "configured",
            "INHERITED": "yes",
            "ANTHROPIC_API_KEY": "<unset>",
            "CLAUDE_PROJECT_DIR": str(tmp_path),
        }
    finally:
        await manager.close()


async def test_close_leaves_no_server_process(tmp_path: Path, token: str) -> None:
    manager = make_manager(tmp_path, *(stdio(f"s{i}", args=[token]) for i in range(3)))
    assert await manager.start() == []
    assert len(live_pids_with(token)) == 3
    await manager.close()
    assert live_pids_with(token) == []
    await manager.close()  # idempotent
    assert {v.status for v in manager.servers()} == {"closed"}


async def test_close_during_startup_stops_servers(tmp_path: Path, token: str) -> None:
    manager = make_manager(
        tmp_path, stdio("hang", "hang_server.py", args=[token]), environ={"MCP_TIMEOUT": "30000"}
    )
    manager.start_soon()
    for _ in range(100):
        if live_pids_with(token):
            break
        await asyncio.sleep(0.02)
    await manager.close()
    assert live_pids_with(token) == []


async def test_streamable_http_server(tmp_path: Path, token: str) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    from tests.tools.mcp.conftest import SERVERS

    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(SERVERS / "demo_server.py"),
        token,
        "--http",
        str(port),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        for _ in range(200):
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            except OSError:
                await asyncio.sleep(0.05)
        url = f"http://127.0.0.1:{port}/mcp"
        manager = McpManager(
            McpConfig(
                servers=(
                    McpServerConfig(
                        name="web",
                        scope="user",
                        source="t",
                        type="http",
                        url=url,
                        headers={"X-Test": "1"},
                    ),
                )
            ),
            log_dir=tmp_path / "logs",
            project_dir=tmp_path,
        )
        try:
            assert await manager.start() == []
            out = await run(ctx_for(manager, tmp_path), "mcp__web__add", {"a": 20, "b": 22})
            assert content_text(out) == "42"
        finally:
            await manager.close()
    finally:
        proc.terminate()
        await proc.wait()
