"""The first-party Messages transport: ``POST /v1/messages`` streamed over httpcore.

httpcore is httpx's own transport layer; this module uses it directly, with the server-sent
events parsed by ``agent_cli.model.sse``, because ``import httpx`` also imports httpx's
command-line client (click, Rich's console, Pygments: ~100 modules, ~10 % of a short
``nerve -p`` run). Only what the httpx client did on top of httpcore for this one request is
redone here: its default ``accept-encoding: gzip, deflate`` and ``connection: keep-alive``
headers and the decoding of a compressed body (``_Inflate``), its connection limits, its TLS
context (``_tls_context``), its proxy pools (``_pool``) and its timeouts.

Headers as Claude Code sends them: ``x-api-key`` (``ANTHROPIC_API_KEY``), ``Authorization:
Bearer`` (``ANTHROPIC_AUTH_TOKEN``; an ``apiKeyHelper``'s key goes out as both),
``anthropic-version: 2023-06-01``, ``anthropic-beta`` when asked, ``ANTHROPIC_CUSTOM_HEADERS``.

The body is read as bytes and decoded strictly: bytes that are not UTF-8 are a broken stream
(the text and tool inputs after them cannot be trusted), not replacement characters. Lines that
are not server-sent events, and events whose data is not a JSON object, are skipped and
reported once through ``warn``. The read timeout is the idle timeout: no byte for that long,
before the headers or between events, and the attempt counts as a lost connection.
"""

from __future__ import annotations

import codecs
import json
import os
import ssl
import zlib
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import AsyncExitStack, aclosing, asynccontextmanager
from typing import Any
from urllib.parse import unquote, urlsplit

import httpcore

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
from agent_cli.model.sse import FIELDS, EventReader, LineSplitter, ServerSentEvent
from agent_cli.model.warn import Warn

__all__ = ["ANTHROPIC_VERSION", "DEFAULT_BASE_URL", "HttpTransport", "sse_events"]

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_BASE_URL = "https://api.anthropic.com"
_CONNECT_TIMEOUT_S = 10.0
# what the httpx client sent on every request, and its connection limits (httpx.Limits())
_CLIENT_HEADERS = {"accept-encoding": "gzip, deflate", "connection": "keep-alive"}
_LIMITS: dict[str, Any] = {
    "max_connections": 100,
    "max_keepalive_connections": 20,
    "keepalive_expiry": 5.0,
}
# the failures httpx called transport errors, besides the timeouts
_TRANSPORT_ERRORS = (
    httpcore.NetworkError,
    httpcore.ProtocolError,
    httpcore.ProxyError,
    httpcore.UnsupportedProtocol,
)


class HttpTransport:
    """See the module docstring. ``pool``: an ``httpcore.AsyncConnectionPool`` to use (tests)."""

    def __init__(
        self, config: ModelConfig, *, pool: httpcore.AsyncConnectionPool | None = None
    ) -> None:
        self.config = config
        self.url = (config.base_url or DEFAULT_BASE_URL).rstrip("/") + "/v1/messages"
        self.helper = ApiKeyHelper(config.key_helper) if config.key_helper else None
        idle = config.idle_timeout
        self._timeout = {
            "connect": min(_CONNECT_TIMEOUT_S, idle) if idle else _CONNECT_TIMEOUT_S,
            "read": idle,
            "write": config.timeout,
            "pool": config.timeout,
        }
        self._pool = pool or _pool(self.url, config.proxy)

    async def aclose(self) -> None:
        await self._pool.aclose()

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
        sent = {"host": _host(self.url)} | _CLIENT_HEADERS | await self.headers()
        headers = [(name.encode("ascii"), value.encode("ascii")) for name, value in sent.items()]
        async with AsyncExitStack() as stack:
            response = await self._send(stack, headers, payload)
            found = _response_headers(response)
            inflate = _Inflate(found.get("content-encoding", ""))
            if response.status != 200:
                raise AttemptError(await self._status_error(response, found, inflate))
            ctype = found.get("content-type", "")
            if "text/event-stream" not in ctype:
                raise BadStream(f"expected an event stream, got content-type {ctype or 'none'!r}")
            request_id = found.get("request-id")
            events = _Events(self._events(response, inflate, warn, request_id), request_id)
            try:
                yield events
            finally:
                await events.aclose()

    async def _send(
        self, stack: AsyncExitStack, headers: list[tuple[bytes, bytes]], payload: bytes
    ) -> httpcore.Response:
        """The response (its body still to read, closed with ``stack``), or ``AttemptError``."""
        request = self._pool.stream(
            "POST",
            self.url,
            headers=headers,
            content=payload,
            extensions={"timeout": self._timeout},
        )
        try:
            return await stack.enter_async_context(request)
        except httpcore.ConnectTimeout:
            raise AttemptError(connection_lost(f"could not connect to {self.url}")) from None
        except httpcore.TimeoutException:
            raise AttemptError(self._stalled("no response")) from None
        except _TRANSPORT_ERRORS as exc:
            raise AttemptError(connection_lost(_describe(exc))) from None

    async def _events(
        self, response: httpcore.Response, inflate: _Inflate, warn: Warn, request_id: str | None
    ) -> AsyncGenerator[Mapping[str, Any], None]:
        try:
            async with (
                aclosing(inflate.chunks(response.aiter_stream())) as chunks,
                aclosing(sse_events(chunks, warn, request_id)) as events,
            ):
                async for event in events:
                    yield event
        except httpcore.TimeoutException:
            raise AttemptError(self._stalled("the stream stalled")) from None
        except _TRANSPORT_ERRORS as exc:
            raise AttemptError(connection_lost(_describe(exc))) from None

    def _stalled(self, what: str) -> ErrorInfo:
        return connection_lost(f"{what}: no data for {self.config.idle_timeout:g} s")

    @staticmethod
    async def _status_error(
        response: httpcore.Response, headers: Mapping[str, str], inflate: _Inflate
    ) -> ErrorInfo:
        phrase = response.extensions.get("reason_phrase", b"")
        fallback = phrase.decode("ascii", errors="ignore") or "error"
        try:
            raw = inflate.all(await response.aread())
        except (httpcore.TimeoutException, *_TRANSPORT_ERRORS, BadStream):
            raw = b""
        try:
            body: Any = json.loads(raw)
        except ValueError:
            text = raw.decode(errors="replace").strip()
            body, fallback = None, (text[:300] or fallback)
        return status_error(response.status, body, headers, fallback)


class _Events:
    """A response's events, and its ``request-id`` (the assistant frames of stream-json say it)."""

    def __init__(
        self, events: AsyncGenerator[Mapping[str, Any], None], request_id: str | None
    ) -> None:
        self._events = events
        self.request_id = request_id

    def __aiter__(self) -> _Events:
        return self

    async def __anext__(self) -> Mapping[str, Any]:
        return await self._events.__anext__()

    async def aclose(self) -> None:
        await self._events.aclose()


class _Inflate:
    """Undoes the body's ``content-encoding`` as httpx did: ``gzip`` and ``deflate`` (zlib, or
    raw deflate when the first bytes are not zlib), applied last-first; any other coding is left
    as it is. Bytes that do not inflate raise ``BadStream``."""

    def __init__(self, content_encoding: str) -> None:
        codings = [c.strip().lower() for c in content_encoding.split(",")]
        self._steps = [_Decompress(c) for c in reversed(codings) if c in ("gzip", "deflate")]

    async def chunks(self, raw: AsyncIterator[bytes]) -> AsyncGenerator[bytes, None]:
        async with aclosing(raw) as chunks:  # type: ignore[type-var]
            async for chunk in chunks:
                yield self._run(chunk, final=False)
        yield self._run(b"", final=True)

    def all(self, raw: bytes) -> bytes:
        return self._run(raw, final=False) + self._run(b"", final=True)

    def _run(self, data: bytes, *, final: bool) -> bytes:
        for step in self._steps:
            data = step.decode(data) + (step.flush() if final else b"")
        return data


class _Decompress:
    def __init__(self, coding: str) -> None:
        self._raw_fallback = coding == "deflate"  # "deflate" is zlib-wrapped, or (often) raw
        self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 16 if coding == "gzip" else zlib.MAX_WBITS)

    def decode(self, data: bytes) -> bytes:
        try:
            out = self._zlib.decompress(data)
        except zlib.error as exc:
            if not (self._raw_fallback and data):
                raise BadStream(f"the body does not decompress ({exc})") from None
            self._raw_fallback, self._zlib = False, zlib.decompressobj(-zlib.MAX_WBITS)
            out = self.decode(data)
        if data:
            self._raw_fallback = False
        return out

    def flush(self) -> bytes:
        try:
            return self._zlib.flush()
        except zlib.error as exc:
            raise BadStream(f"the body does not decompress ({exc})") from None


async def sse_events(
    chunks: AsyncIterator[bytes], warn: Warn, request_id: str | None = None
) -> AsyncGenerator[Mapping[str, Any], None]:
    """The JSON events of a server-sent-event body. ``event: error`` raises ``AttemptError``;
    bytes that are not UTF-8 raise ``BadStream``; unreadable lines are skipped and warned of."""
    utf8 = codecs.getincrementaldecoder("utf-8")()
    lines, reader = LineSplitter(), EventReader()
    skipped: list[str] = []
    try:
        async for chunk in chunks:
            try:
                text = utf8.decode(chunk)
            except UnicodeDecodeError as exc:
                raise BadStream(f"the stream is not valid UTF-8 ({exc.reason})") from None
            for line in lines.feed(text):
                data = _json_event(reader.line(line), line, skipped, request_id)
                if data is not None:
                    yield data
        try:
            utf8.decode(b"", final=True)
        except UnicodeDecodeError:
            raise BadStream("the stream ended inside a UTF-8 character") from None
    finally:
        if skipped:
            more = f" (and {len(skipped) - 1} more)" if len(skipped) > 1 else ""
            warn(f"skipped unreadable lines in the model's stream: {skipped[0][:80]!r}{more}")


def _json_event(
    sse: ServerSentEvent | None, line: str, skipped: list[str], request_id: str | None
) -> Mapping[str, Any] | None:
    """The JSON object of the event ``line`` completed (``sse``; None while an event is still
    being read), or None: nothing yet, or skipped (noted in ``skipped``).
    ``event: error`` raises ``AttemptError``."""
    if sse is None:
        if line and not line.startswith(":") and line.partition(":")[0] not in FIELDS:
            skipped.append(line)
        return None
    try:
        data: Any = json.loads(sse.data) if sse.data else None
    except ValueError:
        data = None
    if sse.event == "error":
        raise AttemptError(in_stream_error(data or sse.data, request_id))
    if not isinstance(data, Mapping) or not isinstance(data.get("type"), str):
        if sse.data or sse.event not in ("", "ping"):
            skipped.append(f"{sse.event or 'message'}: {sse.data}")
        return None
    return data


def _response_headers(response: httpcore.Response) -> dict[str, str]:
    """The response's headers by lower-case name, repeated ones joined by ", " (as httpx's
    ``Headers.get``); values decoded as httpx decodes them (UTF-8, else Latin-1)."""
    found: dict[str, str] = {}
    for raw_name, raw_value in response.headers:
        name, value = raw_name.decode("latin-1").lower(), _header_text(raw_value)
        found[name] = f"{found[name]}, {value}" if name in found else value
    return found


def _header_text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _host(url: str) -> str:
    """The ``host`` header as httpx wrote it: an IPv6 address in brackets, no default port."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return host if parts.port in (None, default) else f"{host}:{parts.port}"


def _pool(url: str, proxy: str | None) -> httpcore.AsyncConnectionPool:
    """The connection pool: through the proxy ``ModelConfig`` chose from the session environment
    (settings ``env`` over the shell's), else direct. Never a proxy of ``os.environ`` by itself:
    httpcore reads none. The proxy pools are httpx's: HTTP(S) proxies tunnel https with
    ``CONNECT``, SOCKS needs ``socksio``; credentials in the proxy URL go as its auth."""
    tls = _tls_context(url)
    if not proxy:
        return httpcore.AsyncConnectionPool(ssl_context=tls, **_LIMITS)
    parts = urlsplit(proxy)
    if parts.scheme not in ("http", "https", "socks5", "socks5h"):
        raise ValueError(f"Unknown scheme for proxy URL {proxy!r}")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    address = httpcore.URL(
        scheme=parts.scheme, host=parts.hostname or "", port=parts.port, target=target
    )
    auth = None
    if parts.username or parts.password:
        user, password = unquote(parts.username or ""), unquote(parts.password or "")
        auth = (user.encode(), password.encode())
    if parts.scheme in ("http", "https"):
        return httpcore.AsyncHTTPProxy(address, proxy_auth=auth, ssl_context=tls, **_LIMITS)
    return httpcore.AsyncSOCKSProxy(address, proxy_auth=auth, ssl_context=tls, **_LIMITS)


def _tls_context(url: str) -> ssl.SSLContext:
    """Certificate checks as usual for https, with the CAs httpx's default ``verify`` trusts:
    ``SSL_CERT_FILE``, else ``SSL_CERT_DIR``, else certifi's bundle. For a plain-http endpoint (a
    local proxy) a client context that trusts nothing, so the ~30 ms of loading the CA bundle is
    not paid for a connection that never does TLS (and any TLS it did would fail closed)."""
    if url.startswith("http://"):
        return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if cafile := os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=cafile)
    if capath := os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=capath)
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
