"""Real MCP servers (Python scripts under ``servers/``) run with this interpreter."""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tools.mcp import McpConfig, McpManager, McpServerConfig

SERVERS = Path(__file__).parent / "servers"


def stdio(
    name: str,
    script: str = "demo_server.py",
    args: Sequence[str] = (),
    *,
    env: dict[str, str] | None = None,
    timeout_ms: int | None = None,
) -> McpServerConfig:
    """A stdio server config running ``servers/<script>`` with this Python."""
    return McpServerConfig(
        name=name,
        scope="user",
        source="test",
        command=sys.executable,
        args=(str(SERVERS / script), *args),
        env=env or {},
        timeout_ms=timeout_ms,
    )


def make_manager(
    tmp_path: Path, *servers: McpServerConfig, environ: dict[str, str] | None = None
) -> McpManager:
    env = dict(os.environ)
    env.update(environ or {})
    return McpManager(
        McpConfig(servers=servers),
        log_dir=tmp_path / "mcp-logs",
        project_dir=tmp_path,
        environ=env,
    )


def live_pids_with(token: str) -> list[int]:
    """Processes whose command line contains ``token`` (scanning /proc)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().split(")")[-1].split()[0]
        except OSError:
            continue
        if token.encode() in cmdline and state != "Z":
            pids.append(int(entry.name))
    return pids


@pytest.fixture
def token() -> str:
    """A unique server-name argument, so /proc scans find only this test's servers."""
    return f"demo-{uuid.uuid4().hex[:8]}"


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def serve_demo(token: str, transport: str) -> tuple[Any, int]:
    """Start ``demo_server.py`` over ``--http`` or ``--sse`` on 127.0.0.1; (process, port)."""
    import asyncio

    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(SERVERS / "demo_server.py"),
        token,
        transport,
        str(port),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    for _ in range(400):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            break
        except OSError:
            await asyncio.sleep(0.05)
    return proc, port
