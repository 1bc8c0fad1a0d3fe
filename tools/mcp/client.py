"""Connections to MCP servers, each owned by one long-lived task.

The ``mcp`` client is context-manager based and built on anyio: a cancel scope must be exited
by the task that entered it. So each server gets its own task that enters the transport and
the ``ClientSession``, lists the tools, reports ready and then waits for ``close()``; calls from
other tasks only send requests over the session's streams (safe across tasks). ``close()`` wakes
the owner, which leaves the contexts in order — the SDK closes the server's stdin, waits, then
kills its process group, so no server outlives the session.

Failures never escape: a server that cannot start, hangs past ``MCP_TIMEOUT`` or speaks
garbage ends up ``FAILED`` with a one-line ``error``; its stderr is in ``log_path``. A server
that was connected and then loses its connection (it crashed, it was killed) is
``RECONNECTING``: it is started again with exponential backoff (``RECONNECT_DELAYS_S``) while
its tools stay listed; a call meanwhile is a clear error. ``mcp`` is imported only here, inside
functions (it costs ~0.4 s).

What the server may ask of us: ``roots/list`` answers the working directories (``roots``);
``elicitation/create`` goes to ``elicit`` (the UI's form, set by whoever owns the session), or
is declined when no one can answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

from tools.mcp.config import McpServerConfig
from tools.mcp.sdk_transport import SDK_ONLY, SdkMcpSend, sdk_client

__all__ = [
    "DEFAULT_STARTUP_TIMEOUT_MS",
    "DEFAULT_TOOL_TIMEOUT_MS",
    "RECONNECT_DELAYS_S",
    "ElicitFn",
    "McpCallError",
    "McpCallTimeout",
    "McpConnection",
    "McpNotConnected",
    "ProgressFn",
    "ServerStatus",
    "env_ms",
    "quiet_sdk_logging",
]

DEFAULT_STARTUP_TIMEOUT_MS = 30_000
DEFAULT_TOOL_TIMEOUT_MS = 600_000
_CLOSE_GRACE_S = 8.0  # the SDK's own escalation (stdin close, SIGTERM, SIGKILL) takes <= ~6 s
_CONNECTION_CLOSED = -32000
_REQUEST_TIMEOUT = -32001
# Credentials of our own model provider are not handed to third-party servers.
_WITHHELD_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
# Waits before each restart of a server that lost its connection; then it stays FAILED.
RECONNECT_DELAYS_S: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)

# (message, requested JSON schema) -> the answers (accept), or None (declined / no one there).
ElicitFn = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | None]]
# (progress, total, message) from ``notifications/progress``.
ProgressFn = Callable[[float, float | None, str | None], None]


def env_ms(environ: Mapping[str, str], name: str, default: int) -> int:
    """A positive integer of milliseconds from the environment, else ``default``."""
    try:
        value = int(environ.get(name, "").strip())
    except ValueError:
        return default
    return value if value > 0 else default


class ServerStatus(StrEnum):
    PENDING = "pending"
    CONNECTED = "connected"
    RECONNECTING = "reconnecting"
    FAILED = "failed"
    CLOSED = "closed"
    DISABLED = "disabled"


class McpCallError(Exception):
    """A call failed on the protocol level (timeout, server error); ``str`` is model-facing."""


class McpNotConnected(McpCallError):
    """The server is not (or no longer) connected."""


class McpCallTimeout(McpCallError):
    """The server did not answer the call in time."""


def _leaf(exc: BaseException) -> BaseException:
    """The first real exception inside (anyio wraps task failures in groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    exc = _leaf(exc)
    error = getattr(exc, "error", None)
    message = getattr(error, "message", None) or str(exc).strip()
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return text if len(text) <= 300 else text[:300] + "…"


class McpConnection:
    """One configured server: start, list tools, serve calls, close (see module docstring)."""

    def __init__(
        self,
        config: McpServerConfig,
        *,
        log_path: Path,
        project_dir: Path,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.name = config.name
        self.log_path = log_path
        self.project_dir = project_dir
        self.environ = dict(os.environ if environ is None else environ)
        self.status = ServerStatus.PENDING
        self.error: str | None = None
        self.tools: tuple[Any, ...] = ()  # mcp_types.Tool
        self.server_info: tuple[str, str] | None = None  # (name, version) from initialize
        self.instructions: str | None = None
        self.startup_s: float | None = None
        self._session: Any = None
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._closing = asyncio.Event()  # close(): stop for good
        self._stop_owner = asyncio.Event()  # this generation's owner should leave
        self._reconnect: asyncio.Task[None] | None = None
        self._log: IO[str] | None = None
        self.startup_timeout_s = DEFAULT_STARTUP_TIMEOUT_MS / 1000
        self.reconnect_delays_s: Sequence[float] = RECONNECT_DELAYS_S
        self.reconnects = 0  # successful restarts after a lost connection
        self.has_resources = False
        self.prompts: tuple[Any, ...] = ()  # mcp_types.Prompt
        self.roots: tuple[Path, ...] = (project_dir,)
        self.elicit: ElicitFn | None = None
        self.sdk_send: SdkMcpSend | None = None  # the SDK mode's route to a "type": "sdk" server

    @property
    def connected(self) -> bool:
        return self.status is ServerStatus.CONNECTED and self._session is not None

    # -- start -----------------------------------------------------------------------------

    async def start(self, timeout_s: float) -> bool:
        """Connect, initialise and list tools within ``timeout_s``; never raises."""
        self.startup_timeout_s = timeout_s
        started = time.perf_counter()
        loop = asyncio.get_running_loop()
        self._closing = asyncio.Event()
        self._stop_owner = asyncio.Event()
        self.error = None
        self._ready = loop.create_future()
        self._task = loop.create_task(self._own(), name=f"mcp-{self.name}")
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), timeout_s)
        except TimeoutError:
            self._fail(f"did not answer within {timeout_s:g} s (MCP_TIMEOUT)")
            await self._stop_task()
        except Exception as exc:  # the owner task reported why it could not connect
            self._fail(str(exc))
            await self._stop_task()
        self.startup_s = time.perf_counter() - started
        return self.connected

    def _fail(self, why: str) -> None:
        if self.status not in (ServerStatus.CLOSED, ServerStatus.DISABLED):
            self.status = ServerStatus.FAILED
        self.error = self.error or why
        self._session = None

    def _lost(self, why: str) -> None:
        """A connected server lost its connection: restart it in the background."""
        if self.status is not ServerStatus.CONNECTED:
            return
        self.status = ServerStatus.RECONNECTING
        self.error = why
        self._session = None
        self._stop_owner.set()
        if not self._closing.is_set() and (self._reconnect is None or self._reconnect.done()):
            self._reconnect = asyncio.get_running_loop().create_task(
                self._reconnect_loop(), name=f"mcp-reconnect-{self.name}"
            )

    async def _reconnect_loop(self) -> None:
        await self._stop_task(grace_s=_CLOSE_GRACE_S)
        why = self.error or "the connection was lost"
        for delay in self.reconnect_delays_s:
            await asyncio.sleep(delay)
            if self._closing.is_set() or self.status is not ServerStatus.RECONNECTING:
                return
            self.error = None
            if await self.start(self.startup_timeout_s):
                self.reconnects += 1
                return
            why = self.error or why
            if self.status in (ServerStatus.CLOSED, ServerStatus.DISABLED):
                return
            self.status = ServerStatus.RECONNECTING
            self.error = f"{why} (restarting)"
        self.status = ServerStatus.FAILED
        self.error = f"gave up after {len(self.reconnect_delays_s)} restarts: {why}"

    async def _own(self) -> None:
        """The owner task: holds the transport and session contexts for the whole session."""
        assert self._ready is not None
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await self._open_transport(stack)
                from mcp import ClientSession
                from mcp.types import Implementation

                session = await stack.enter_async_context(
                    ClientSession(
                        read,
                        write,
                        client_info=Implementation(name="nerve", version="0"),
                        list_roots_callback=self._list_roots,  # type: ignore[arg-type]
                        elicitation_callback=self._elicitation,  # type: ignore[arg-type]
                    )
                )
                init = await session.initialize()
                info = init.server_info
                self.server_info = (info.name, info.version) if info else None
                self.instructions = init.instructions
                self.tools = await _list_all_tools(session)
                caps = init.capabilities
                self.has_resources = getattr(caps, "resources", None) is not None
                if getattr(caps, "prompts", None) is not None:
                    self.prompts = await _list_all(session, "list_prompts", "prompts")
                self._session = session
                self.status = ServerStatus.CONNECTED
                if not self._ready.done():
                    self._ready.set_result(None)
                await self._stop_owner.wait()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(RuntimeError(_describe(exc)))
            else:
                self._lost(f"connection ended: {_describe(exc)}")
        finally:
            self._session = None
            if self._log is not None:
                self._log.close()
                self._log = None

    async def _open_transport(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
        config = self.config
        if config.type == "sdk":
            if self.sdk_send is None:
                raise RuntimeError(SDK_ONLY)
            return await stack.enter_async_context(sdk_client(config.name, self.sdk_send))
        if config.type == "sse":
            from mcp.client.sse import sse_client

            streams = await stack.enter_async_context(
                sse_client(config.url, headers=dict(config.headers))
            )
            return streams[0], streams[1]
        if config.type == "http":
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            http = await stack.enter_async_context(
                create_mcp_http_client(headers=dict(config.headers))
            )
            streams = await stack.enter_async_context(
                streamable_http_client(config.url, http_client=http)
            )
            return streams[0], streams[1]
        from mcp import StdioServerParameters, stdio_client

        env = {k: v for k, v in self.environ.items() if k not in _WITHHELD_ENV}
        env.update(config.env)
        env.setdefault("CLAUDE_PROJECT_DIR", str(self.project_dir))
        env.setdefault("NERVE_PROJECT_DIR", str(self.project_dir))
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "a", encoding="utf-8")  # closed by _own
        params = StdioServerParameters(
            command=config.command,
            args=list(config.args),
            env=env,
            cwd=config.cwd or str(self.project_dir),
            encoding_error_handler="replace",
        )
        streams = await stack.enter_async_context(stdio_client(params, errlog=self._log))
        return streams[0], streams[1]

    # -- what the server asks of us --------------------------------------------------------

    async def _list_roots(self, _context: Any) -> Any:
        from mcp.types import ListRootsResult, Root

        roots = [
            Root(uri=p.resolve().as_uri(), name=p.name or str(p))  # type: ignore[arg-type]
            for p in self.roots
        ]
        return ListRootsResult(roots=roots)

    async def _elicitation(self, _context: Any, params: Any) -> Any:
        from mcp.types import ElicitResult

        schema = getattr(params, "requested_schema", None)
        if self.elicit is None or not isinstance(schema, dict):
            return ElicitResult(action="decline")
        try:
            answers = await self.elicit(str(getattr(params, "message", "")), schema)
        except Exception:
            return ElicitResult(action="cancel")
        if answers is None:
            return ElicitResult(action="decline")
        return ElicitResult(action="accept", content=answers)

    # -- calls -----------------------------------------------------------------------------

    def _unavailable(self) -> McpNotConnected:
        if self.status is ServerStatus.RECONNECTING:
            return McpNotConnected(
                f"MCP server {self.name} is reconnecting ({self.error or 'connection lost'}); "
                "its tools are back once it has restarted — try again shortly"
            )
        if self.status is ServerStatus.DISABLED:
            return McpNotConnected(f"MCP server {self.name} is disabled (/mcp enables it)")
        why = f" ({self.error})" if self.error else ""
        return McpNotConnected(f"MCP server {self.name} is not connected{why}")

    async def request(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """Any other session request (``list_resources``, ``read_resource``, ``get_prompt``...)
        with the same error handling as ``call_tool``."""
        session = self._session
        if not self.connected or session is None:
            raise self._unavailable()
        try:
            return await getattr(session, method)(*args, **kwargs)
        except Exception as exc:
            raise self._call_error(exc, method, self.startup_timeout_s) from None

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        timeout_s: float,
        progress: ProgressFn | None = None,
    ) -> Any:
        """``tools/call``; raises ``McpNotConnected`` / ``McpCallError`` with a model-facing text."""
        session = self._session
        if not self.connected or session is None:
            raise self._unavailable()

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            if progress is not None:
                try:
                    progress(value, total, message)
                except Exception:
                    pass  # a UI failure is not the call's

        try:
            return await session.call_tool(
                tool, arguments, read_timeout_seconds=timeout_s, progress_callback=on_progress
            )
        except Exception as exc:
            raise self._call_error(exc, tool, timeout_s) from None

    def _call_error(self, exc: Exception, tool: str, timeout_s: float) -> McpCallError:
        leaf = _leaf(exc)
        code = getattr(getattr(leaf, "error", None), "code", None)
        if code == _REQUEST_TIMEOUT:
            return McpCallTimeout(
                f"MCP tool {tool} on server {self.name} timed out after {timeout_s:g} s"
            )
        closed = (ConnectionError, EOFError)
        if code == _CONNECTION_CLOSED or isinstance(leaf, closed) or _is_closed(leaf):
            self._lost("the server closed the connection")
            return McpNotConnected(
                f"MCP server {self.name} closed the connection during the call (it exited "
                "or crashed); it is being restarted — the call was not completed"
            )
        return McpCallError(f"MCP server {self.name}: {_describe(leaf)}")

    # -- close -----------------------------------------------------------------------------

    async def close(self, status: ServerStatus = ServerStatus.CLOSED) -> None:
        """Leave the session and stop the server (bounded); idempotent. ``status`` is what it
        shows afterwards (``DISABLED`` for ``/mcp disable``)."""
        was_connected = self.connected
        if status is ServerStatus.DISABLED or self.status is not ServerStatus.FAILED:
            self.status = status
        self._session = None
        self._closing.set()
        self._stop_owner.set()
        reconnect = self._reconnect
        if reconnect is not None and not reconnect.done():
            reconnect.cancel()
            await asyncio.wait({reconnect}, timeout=_CLOSE_GRACE_S)
        # A connected owner wakes on ``_closing`` and leaves cleanly; one still starting may be
        # stuck in ``initialize`` with a silent server, so it is cancelled at once.
        await self._stop_task(grace_s=_CLOSE_GRACE_S if was_connected else 0.0)

    async def _stop_task(self, grace_s: float = 0.0) -> None:
        task = self._task
        if task is None or task.done():
            return
        self._stop_owner.set()
        if grace_s > 0:
            done, _ = await asyncio.wait({task}, timeout=grace_s)
            if done:
                return
        task.cancel()
        # Cancellation runs the SDK's shielded shutdown (close stdin, SIGTERM, SIGKILL).
        await asyncio.wait({task}, timeout=_CLOSE_GRACE_S)


def _is_closed(exc: BaseException) -> bool:
    """anyio's ClosedResourceError / BrokenResourceError: the transport is gone."""
    return type(exc).__name__ in ("ClosedResourceError", "BrokenResourceError", "EndOfStream")


async def _list_all_tools(session: Any) -> tuple[Any, ...]:
    return await _list_all(session, "list_tools", "tools")


async def _list_all(session: Any, method: str, field: str) -> tuple[Any, ...]:
    from mcp.types import PaginatedRequestParams

    items: list[Any] = []
    cursor: str | None = None
    for _ in range(100):  # a server paging forever is not our problem to follow
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await getattr(session, method)(params=params)
        items.extend(getattr(page, field))
        cursor = page.next_cursor
        if not cursor:
            break
    return tuple(items)


def quiet_sdk_logging(log_file: Path | None) -> logging.Handler | None:
    """Send the ``mcp`` logger to a file, not the terminal (Python's last-resort handler
    would print its parse errors over the UI). Returns the handler to remove at close."""
    logger = logging.getLogger("mcp")
    logger.propagate = False
    if log_file is None:
        handler: logging.Handler = logging.NullHandler()
    else:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(log_file, encoding="utf-8", delay=True)
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    return handler
