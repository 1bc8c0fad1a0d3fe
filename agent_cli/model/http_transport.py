"""The first-party Messages transport: ``POST /v1/messages`` streamed over httpx + httpx-sse.

Headers as Claude Code sends them: ``x-api-key`` (``ANTHROPIC_API_KEY``), ``Authorization:
Bearer`` (``ANTHROPIC_AUTH_TOKEN``; an ``apiKeyHelper``'s key goes out as both),
``anthropic-version: 2023-06-01``, ``anthropic-beta`` when asked, ``ANTHROPIC_CUSTOM_HEADERS``.

The body is read as bytes and decoded strictly: bytes that are not UTF-8 are a broken stream
(the text and tool inputs after them cannot be trusted), not replacement characters. Lines that
are not server-sent events, and events whose data is not a JSON object, are skipped and
reported once through ``warn``. httpx's read timeout is the idle timeout: no byte for that long,
before the headers or between events, and the attempt counts as a lost connection.
"""

from __future__ import annotations

import codecs
import json
import ssl
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing, asynccontextmanager
from typing import Any

# httpx imports its command-line client (rich, click, pygments: ~60 ms) whenever those happen
# to be installed; Nerve never uses it, so it is kept out before httpx is first imported.
if "httpx" not in sys.modules:
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

import httpx
from httpx_sse._decoders import SSEDecoder, SSELineDecoder

from agent_cli import __version__
from agent_cli.model.config import ModelConfig
from agent_cli.model.errors import (
    AttemptError,
    BadStream,
    ErrorInfo,
    connection_lost,
    in_stream_error,
    status_error,
)
from agent_cli.model.key_helper import ApiKeyHelper
from agent_cli.model.transport import Warn

__all__ = ["ANTHROPIC_VERSION", "DEFAULT_BASE_URL", "HttpTransport", "sse_events"]

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_BASE_URL = "https://api.anthropic.com"
_SSE_FIELDS = frozenset({"event", "data", "id", "retry"})
_CONNECT_TIMEOUT_S = 10.0


class HttpTransport:
    """See the module docstring. ``client``: an ``httpx.AsyncClient`` to use (tests)."""

    def __init__(self, config: ModelConfig, *, client: httpx.AsyncClient | None = None) -> None:
        self.config = config
        self.url = (config.base_url or DEFAULT_BASE_URL).rstrip("/") + "/v1/messages"
        self.helper = ApiKeyHelper(config.key_helper) if config.key_helper else None
        idle = config.idle_timeout
        self._client = client or httpx.AsyncClient(
            verify=_tls_context(self.url),
            **_proxy_options(config.proxy),
            timeout=httpx.Timeout(
                connect=min(_CONNECT_TIMEOUT_S, idle) if idle else _CONNECT_TIMEOUT_S,
                read=idle,
                write=config.timeout,
                pool=config.timeout,
            ),
            follow_redirects=False,
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def reauthenticate(self) -> bool:
        if self.helper is None:
            return False
        self.helper.invalidate()
        return True

    async def headers(self) -> dict[str, str]:
        """The request headers (running the key helper when it is due)."""
        cfg = self.config
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            "anthropic-version": ANTHROPIC_VERSION,
            "user-agent": f"nerve/{__version__}",
        }
        if cfg.api_key:
            headers["x-api-key"] = cfg.api_key
        if cfg.auth_token:
            headers["authorization"] = f"Bearer {cfg.auth_token}"
        if self.helper is not None and not (cfg.api_key or cfg.auth_token):
            key = await self.helper.key()
            headers["x-api-key"] = key
            headers["authorization"] = f"Bearer {key}"
        if cfg.betas:
            headers["anthropic-beta"] = ",".join(cfg.betas)
        for name, value in cfg.headers:
            headers[name.lower()] = value
        return headers

    @asynccontextmanager
    async def stream(
        self, body: Mapping[str, Any], warn: Warn
    ) -> AsyncIterator[AsyncIterator[Mapping[str, Any]]]:
        # ensure_ascii: a lone surrogate in the conversation is sent escaped, never a crash
        payload = json.dumps({**body, "stream": True}).encode()
        request = self._client.build_request(
            "POST", self.url, content=payload, headers=await self.headers()
        )
        try:
            response = await self._client.send(request, stream=True)
        except httpx.ConnectTimeout:
            raise AttemptError(connection_lost(f"could not connect to {self.url}")) from None
        except httpx.TimeoutException:
            raise AttemptError(self._stalled("no response")) from None
        except httpx.TransportError as exc:
            raise AttemptError(connection_lost(_describe(exc))) from None
        events = None
        try:
            if response.status_code != 200:
                raise AttemptError(await self._status_error(response))
            ctype = response.headers.get("content-type", "")
            if "text/event-stream" not in ctype:
                raise BadStream(f"expected an event stream, got content-type {ctype or 'none'!r}")
            events = _Events(self._events(response, warn), response.headers.get("request-id"))
            yield events
        finally:
            if events is not None:
                await events.aclose()
            await response.aclose()

    async def _events(
        self, response: httpx.Response, warn: Warn
    ) -> AsyncGenerator[Mapping[str, Any], None]:
        request_id = response.headers.get("request-id")
        try:
            async with (
                aclosing(response.aiter_bytes()) as chunks,  # type: ignore[type-var]
                aclosing(sse_events(chunks, warn, request_id)) as events,
            ):
                async for event in events:
                    yield event
        except httpx.TimeoutException:
            raise AttemptError(self._stalled("the stream stalled")) from None
        except httpx.TransportError as exc:
            raise AttemptError(connection_lost(_describe(exc))) from None

    def _stalled(self, what: str) -> ErrorInfo:
        return connection_lost(f"{what}: no data for {self.config.idle_timeout:g} s")

    @staticmethod
    async def _status_error(response: httpx.Response) -> ErrorInfo:
        fallback = response.reason_phrase or "error"
        try:
            raw = await response.aread()
        except httpx.HTTPError:
            raw = b""
        try:
            body: Any = json.loads(raw)
        except ValueError:
            text = raw.decode(errors="replace").strip()
            body, fallback = None, (text[:300] or fallback)
        return status_error(response.status_code, body, response.headers, fallback)


class _Events:
    """A response's events, and its ``request-id`` (the assistant frames of stream-json say it)."""

    def __init__(self, events: AsyncGenerator[Mapping[str, Any], None], request_id: Any) -> None:
        self._events = events
        self.request_id = request_id if isinstance(request_id, str) else None

    def __aiter__(self) -> _Events:
        return self

    async def __anext__(self) -> Mapping[str, Any]:
        return await self._events.__anext__()

    async def aclose(self) -> None:
        await self._events.aclose()


async def sse_events(
    chunks: AsyncIterator[bytes], warn: Warn, request_id: str | None = None
) -> AsyncGenerator[Mapping[str, Any], None]:
    """The JSON events of a server-sent-event body. ``event: error`` raises ``AttemptError``;
    bytes that are not UTF-8 raise ``BadStream``; unreadable lines are skipped and warned of."""
    utf8 = codecs.getincrementaldecoder("utf-8")()
    lines, decoder = SSELineDecoder(), SSEDecoder()
    skipped: list[str] = []
    try:
        async for chunk in chunks:
            try:
                text = utf8.decode(chunk)
            except UnicodeDecodeError as exc:
                raise BadStream(f"the stream is not valid UTF-8 ({exc.reason})") from None
            if not text:
                continue
            for line in lines.decode(text):
                sse = decoder.decode(line)
                if sse is None:
                    if (
                        line
                        and not line.startswith(":")
                        and line.partition(":")[0] not in _SSE_FIELDS
                    ):
                        skipped.append(line)
                    continue
                try:
                    data: Any = json.loads(sse.data) if sse.data else None
                except ValueError:
                    data = None
                if sse.event == "error":
                    raise AttemptError(in_stream_error(data or sse.data, request_id))
                if not isinstance(data, Mapping) or not isinstance(data.get("type"), str):
                    if sse.data or sse.event not in ("", "ping"):
                        skipped.append(f"{sse.event or 'message'}: {sse.data}")
                    continue
                yield data
        try:
            utf8.decode(b"", final=True)
        except UnicodeDecodeError:
            raise BadStream("the stream ended inside a UTF-8 character") from None
    finally:
        if skipped:
            more = f" (and {len(skipped) - 1} more)" if len(skipped) > 1 else ""
            warn(f"skipped unreadable lines in the model's stream: {skipped[0][:80]!r}{more}")


def _proxy_options(proxy: str | None) -> dict[str, Any]:
    """The proxy ``ModelConfig`` chose from the session environment (settings ``env`` over the
    shell's), never the one httpx would read from ``os.environ`` by itself: mounts without a
    transport connect directly, over any proxy variable of this process."""
    if proxy:
        return {"proxy": proxy}
    return {"mounts": {"all://": None, "http://": None, "https://": None}}


def _tls_context(url: str) -> ssl.SSLContext | bool:
    """Certificate checks as usual for https; for a plain-http endpoint (a local proxy) a client
    context that trusts nothing, so the ~30 ms of loading the CA bundle is not paid for a
    connection that never does TLS (and any TLS it did would fail closed)."""
    if url.startswith("http://"):
        return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    return True


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
