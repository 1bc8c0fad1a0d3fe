"""The first-party transport on httpcore (agent_cli.model.http_transport).

Most cases hand ``HttpTransport`` a connection pool that answers from memory (``_Canned``: the
request it got is kept, the response is what the case says) so what httpx used to do on top of
httpcore can be checked byte by byte: the headers and body sent, the timeouts, compressed
bodies, the status errors and how each transport failure is classified. One case runs a turn
over real loopback HTTP in a fresh interpreter and checks httpx is never imported.
"""

from __future__ import annotations

import gzip
import json
import ssl
import subprocess
import sys
import zlib
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

import certifi
import httpcore
import pytest

from agent_cli import __version__
from agent_cli.model import ModelConfig
from agent_cli.model.errors import AttemptError, BadStream
from agent_cli.model.http_transport import HttpTransport, _pool, _tls_context
from agent_cli.testing import Scenario, ScriptedServer, text

SSE = (
    b"event: message_start\r\n"
    b'data: {"type": "message_start", "message": {"id": "m"}}\r\n\r\n'
    b": a comment\r\n"
    b'event: ping\r\ndata: {"type": "ping"}\r\n\r\n'
    b'data: {"type": "message_stop"}\r\n\r\n'
)
TYPES = ["message_start", "ping", "message_stop"]
SSE_HEADERS = [(b"Content-Type", b"text/event-stream; charset=utf-8"), (b"request-id", b"req_1")]


class _Canned(httpcore.AsyncConnectionPool):
    """A pool that answers every request with ``answer(request)`` and keeps the requests."""

    def __init__(self, answer: Callable[[httpcore.Request], httpcore.Response]) -> None:
        super().__init__()
        self.answer = answer
        self.requests: list[tuple[httpcore.Request, bytes]] = []
        self.closed = False

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        body = b"".join([chunk async for chunk in request.stream])  # type: ignore[union-attr]
        self.requests.append((request, body))
        return self.answer(request)

    async def aclose(self) -> None:
        self.closed = True
        await super().aclose()


def _respond(
    body: bytes | AsyncIterator[bytes] = SSE,
    status: int = 200,
    headers: list[tuple[bytes, bytes]] | None = None,
    reason: bytes = b"OK",
) -> Callable[[httpcore.Request], httpcore.Response]:
    def answer(request: httpcore.Request) -> httpcore.Response:
        return httpcore.Response(
            status,
            headers=SSE_HEADERS if headers is None else headers,
            content=body,
            extensions={"reason_phrase": reason},
        )

    return answer


def _raise(exc: Exception) -> Callable[[httpcore.Request], httpcore.Response]:
    def answer(request: httpcore.Request) -> httpcore.Response:
        raise exc

    return answer


async def _pieces(*chunks: bytes, then: Exception | None = None) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk
    if then is not None:
        raise then


def _cut(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def _transport(pool: httpcore.AsyncConnectionPool, **config: Any) -> HttpTransport:
    defaults: dict[str, Any] = {"api_key": "sk-test", "base_url": "http://127.0.0.1:9"}
    return HttpTransport(ModelConfig(**(defaults | config)), pool=pool)


async def _run(transport: HttpTransport) -> tuple[list[Mapping[str, Any]], list[str]]:
    warnings: list[str] = []
    async with transport.stream({"model": "m", "messages": []}, warnings.append) as events:
        found = [event async for event in events]
        assert getattr(events, "request_id", None) == "req_1"
    return found, warnings


async def _failure(pool: _Canned, **config: Any) -> AttemptError:
    with pytest.raises(AttemptError) as raised:
        await _run(_transport(pool, **config))
    return raised.value


async def test_the_request_carries_the_headers_body_and_timeouts_httpx_sent() -> None:
    pool = _Canned(_respond())
    transport = _transport(
        pool, betas=("b1", "b2"), headers=(("X-Custom", "v"),), timeout=42.0, idle_timeout=3.0
    )
    events, warnings = await _run(transport)
    assert [e["type"] for e in events] == TYPES and warnings == []
    [(request, body)] = pool.requests
    assert (request.method, bytes(request.url)) == (b"POST", b"http://127.0.0.1:9/v1/messages")
    assert json.loads(body) == {"model": "m", "messages": [], "stream": True}
    assert {k.decode().lower(): v.decode() for k, v in request.headers} == {
        "host": "127.0.0.1:9",
        "content-length": str(len(body)),
        "accept-encoding": "gzip, deflate",
        "connection": "keep-alive",
        "content-type": "application/json",
        "accept": "text/event-stream",
        "anthropic-version": "2023-06-01",
        "user-agent": f"nerve/{__version__}",
        "x-api-key": "sk-test",
        "anthropic-beta": "b1,b2",
        "x-custom": "v",
    }
    assert request.extensions["timeout"] == {
        "connect": 3.0,
        "read": 3.0,
        "write": 42.0,
        "pool": 42.0,
    }
    await transport.aclose()
    assert pool.closed


@pytest.mark.parametrize(
    ("base_url", "host"),
    [
        ("http://[::1]:8080", "[::1]:8080"),
        ("https://API.example.com:443/prefix", "api.example.com"),
        ("http://localhost:80", "localhost"),
    ],
)
async def test_the_host_header_is_written_as_httpx_wrote_it(base_url: str, host: str) -> None:
    pool = _Canned(_respond())
    await _run(_transport(pool, base_url=base_url))
    [(request, _)] = pool.requests
    assert [v.decode() for k, v in request.headers if k.lower() == b"host"] == [host]


async def test_the_connect_timeout_is_ten_seconds_unless_the_idle_timeout_is_shorter() -> None:
    pool = _Canned(_respond())
    await _run(_transport(pool, idle_timeout=300.0, timeout=600.0))
    assert pool.requests[0][0].extensions["timeout"] == {
        "connect": 10.0,
        "read": 300.0,
        "write": 600.0,
        "pool": 600.0,
    }


@pytest.mark.parametrize(
    ("encoding", "compress"),
    [
        (b"gzip", gzip.compress),
        (b"deflate", zlib.compress),
        (b"deflate", lambda data: zlib.compress(data)[2:-4]),  # raw deflate, as some servers send
        (b"gzip, deflate", lambda data: zlib.compress(gzip.compress(data))),
        (b"br", lambda data: data),  # a coding httpx could not undo is passed through as it is
    ],
)
async def test_a_compressed_event_stream_is_inflated_across_chunks(
    encoding: bytes, compress: Callable[[bytes], bytes]
) -> None:
    body = _pieces(*_cut(compress(SSE), 5))
    pool = _Canned(_respond(body, headers=[*SSE_HEADERS, (b"Content-Encoding", encoding)]))
    events, _ = await _run(_transport(pool))
    assert [e["type"] for e in events] == TYPES


async def test_a_body_that_does_not_inflate_is_a_bad_stream() -> None:
    pool = _Canned(
        _respond(b"not gzip at all", headers=[*SSE_HEADERS, (b"content-encoding", b"gzip")])
    )
    with pytest.raises(BadStream, match="does not decompress"):
        await _run(_transport(pool))


async def test_a_status_error_reads_the_body_for_the_error_info() -> None:
    error = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    headers = [
        (b"content-type", b"application/json"),
        (b"Content-Encoding", b"gzip"),
        (b"Retry-After", b"7"),
        (b"request-id", b"req_9"),
    ]
    pool = _Canned(_respond(gzip.compress(json.dumps(error).encode()), 429, headers, b"Too Many"))
    info = (await _failure(pool)).info
    assert (info.status, info.retryable, info.error_type) == (429, True, "rate_limit_error")
    assert (info.message, info.retry_after, info.request_id) == ("slow down", 7.0, "req_9")
    assert info.reason == "rate limited (429): slow down"


async def test_a_status_error_without_json_says_the_text_or_the_reason_phrase() -> None:
    pool = _Canned(_respond(b"  <html>bad gateway</html> ", 502, [], b"Bad Gateway"))
    info = (await _failure(pool)).info
    assert info.retryable and info.message == "<html>bad gateway</html>"
    empty = (await _failure(_Canned(_respond(b"", 400, [], b"Bad Request")))).info
    assert not empty.retryable and empty.reason == "error (400): Bad Request"
    hinted = [(b"x-should-retry", b"false")]
    assert not (await _failure(_Canned(_respond(b"", 500, hinted, b"")))).info.retryable


async def test_a_status_error_whose_body_breaks_off_still_classifies() -> None:
    body = _pieces(b'{"error": ', then=httpcore.ReadError("reset"))
    info = (await _failure(_Canned(_respond(body, 529, [], b"")))).info
    assert info.status == 529 and info.reason == "overloaded (529): error"


async def test_a_reply_that_is_not_an_event_stream_is_a_bad_stream() -> None:
    pool = _Canned(_respond(b"{}", headers=[(b"content-type", b"application/json")]))
    with pytest.raises(BadStream, match="application/json"):
        await _run(_transport(pool))


@pytest.mark.parametrize(
    ("exc", "reason"),
    [
        (
            httpcore.ConnectTimeout(),
            "connection lost: could not connect to http://127.0.0.1:9/v1/messages",
        ),
        (httpcore.ReadTimeout(), "connection lost: no response: no data for 2.5 s"),
        (httpcore.PoolTimeout(), "connection lost: no response: no data for 2.5 s"),
        (httpcore.ConnectError("refused"), "connection lost: refused"),
        (httpcore.RemoteProtocolError(""), "connection lost: RemoteProtocolError"),
        (httpcore.ProxyError("407"), "connection lost: 407"),
        (httpcore.UnsupportedProtocol("ftp"), "connection lost: ftp"),
    ],
)
async def test_failures_before_the_response_are_lost_connections(
    exc: Exception, reason: str
) -> None:
    info = (await _failure(_Canned(_raise(exc)), idle_timeout=2.5)).info
    assert info.retryable and info.reason == reason


@pytest.mark.parametrize(
    ("exc", "reason"),
    [
        (httpcore.ReadTimeout(), "connection lost: the stream stalled: no data for 2.5 s"),
        (httpcore.ReadError("reset by peer"), "connection lost: reset by peer"),
        (httpcore.RemoteProtocolError("peer closed"), "connection lost: peer closed"),
    ],
)
async def test_failures_in_the_stream_are_lost_connections(exc: Exception, reason: str) -> None:
    body = _pieces(SSE[:80], then=exc)
    info = (await _failure(_Canned(_respond(body)), idle_timeout=2.5)).info
    assert info.retryable and info.reason == reason


async def test_unreadable_lines_are_warned_of_once_and_an_error_event_raises() -> None:
    body = b"garbage line\ndata: not json\n\nnonsense\n" + SSE
    events, warnings = await _run(_transport(_Canned(_respond(body))))
    assert [e["type"] for e in events] == TYPES
    assert warnings == [
        "skipped unreadable lines in the model's stream: 'garbage line' (and 2 more)"
    ]
    error = b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error"}}\n\n'
    info = (await _failure(_Canned(_respond(error)))).info
    assert info.retryable and info.error_type == "overloaded_error" and info.request_id == "req_1"


def test_the_pool_connects_directly_unless_the_config_names_a_proxy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:1")  # this process's: never read by itself
    direct = _pool("https://api.anthropic.com/v1/messages", None)
    assert type(direct) is httpcore.AsyncConnectionPool
    proxied = _pool("https://api.anthropic.com/v1/messages", "http://us%40r:p%3Ass@proxy:3128")
    assert isinstance(proxied, httpcore.AsyncHTTPProxy)
    assert proxied._proxy_url.origin == httpcore.Origin(b"http", b"proxy", 3128)
    # the URL's credentials go as Basic auth, percent-decoded ("us@r", "p:ss")
    assert (b"Proxy-Authorization", b"Basic dXNAcjpwOnNz") in proxied._proxy_headers
    with pytest.raises(ValueError, match="Unknown scheme"):
        _pool("https://api.anthropic.com/v1/messages", "proxy.corp:3128")


def test_tls_checks_certificates_for_https_and_loads_no_bundle_for_plain_http(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    plain = _tls_context("http://127.0.0.1:8080/v1/messages")
    assert plain.verify_mode == ssl.CERT_REQUIRED and plain.cert_store_stats()["x509_ca"] == 0
    https = _tls_context("https://api.anthropic.com/v1/messages")
    assert https.verify_mode == ssl.CERT_REQUIRED and https.check_hostname
    assert https.cert_store_stats()["x509_ca"] > 100  # certifi's bundle
    # SSL_CERT_FILE (as httpx honoured it): only the CAs it names
    bundle = Path(certifi.where()).read_text()
    one = tmp_path / "one.pem"
    one.write_text(
        bundle[bundle.index("-----BEGIN") : bundle.index("-----END CERTIFICATE-----") + 25]
    )
    monkeypatch.setenv("SSL_CERT_FILE", str(one))
    assert _tls_context("https://llm.corp/v1/messages").cert_store_stats()["x509_ca"] == 1


def test_a_turn_over_loopback_never_imports_httpx() -> None:
    code = (
        "import asyncio, sys\n"
        "from agent_cli.model import ModelConfig, TurnRequest\n"
        "from agent_cli.model.client import ModelClient\n"
        "async def main():\n"
        "    client = ModelClient(ModelConfig(api_key='k', base_url=sys.argv[1]))\n"
        "    try:\n"
        "        turn = await client.stream_turn(TurnRequest(None, [{'role': 'user', 'content': 'hi'}]))\n"
        "    finally:\n"
        "        await client.aclose()\n"
        "    print('TEXT', turn.text)\n"
        "asyncio.run(main())\n"
        "heavy = ('httpx', 'httpx_sse', 'click', 'pygments', 'anthropic', 'httpx2')\n"
        "print('LOADED', sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
        "print('CORE', 'httpcore' in sys.modules)\n"
    )
    with ScriptedServer(Scenario.of([text("over httpcore")])) as srv:
        proc = subprocess.run(
            [sys.executable, "-c", code, srv.base_url],
            capture_output=True,
            text=True,
            timeout=60,
        )
        srv.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["TEXT over httpcore", "LOADED []", "CORE True"], proc.stdout
