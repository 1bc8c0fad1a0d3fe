"""A real HTTP server on 127.0.0.1 for WebFetch, and the real side model over the scripted API.

``PageServer`` serves fixed routes (HTML, text, redirects, 404, a slow page that waits for the
test, a huge page, binary) and counts hits per path. ``side_model_for`` is the session's own
``SessionSideModel`` on a real ``ModelClient`` talking to a ``ScriptedServer``.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agent_cli.testing import ScriptedServer

HTML = """<!doctype html><html><head><title>Nerve docs</title>
<style>body { color: red }</style><script>var secret = "do-not-show";</script></head>
<body><h1>Install</h1><p>Run <code>pip install nerve</code> to <a href="/more">install</a>.</p>
<ul><li>fast</li><li>safe</li></ul></body></html>"""

Route = Callable[["_Handler"], None]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        self.server.owner.hits[path] += 1
        route = self.server.owner.routes.get(path)
        if route is None:
            self.send_page(404, "text/plain", b"no such page")
            return
        route(self)

    def send_page(
        self, status: int, ctype: str | None, body: bytes, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        if ctype is not None:
            self.send_header("content-type", ctype)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: PageServer


class PageServer:
    """Routes by path; ``release`` frees a handler waiting in ``/slow``."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.release = threading.Event()
        self.routes: dict[str, Route] = {
            "/page": lambda h: h.send_page(200, "text/html; charset=utf-8", HTML.encode()),
            "/notes.txt": lambda h: h.send_page(200, "text/plain", b"line one\n<b>not html</b>\n"),
            "/data.json": lambda h: h.send_page(200, "application/json", b'{"version": "1.2.3"}'),
            "/old": lambda h: h.send_page(301, None, b"", {"location": "/page"}),
            "/away": lambda h: h.send_page(
                302, None, b"", {"location": f"http://localhost:{self.port}/page"}
            ),
            "/loop": lambda h: h.send_page(302, None, b"", {"location": "/loop"}),
            "/gone": lambda h: h.send_page(404, "text/html", b"<h1>Not here</h1>"),
            "/boom": lambda h: h.send_page(500, "text/plain", b"internal failure"),
            "/slow": self._slow,
            "/huge": self._huge,
            "/logo.png": lambda h: h.send_page(200, "image/png", b"\x89PNG\r\n\x1a\n" + bytes(64)),
            "/blob": lambda h: h.send_page(200, None, b"\x00\x01\x02binary" * 200),
        }
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.01,), daemon=True)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def _slow(self, h: _Handler) -> None:
        self.release.wait(10)  # until the test is done with it
        h.send_page(200, "text/plain", b"finally")

    def _huge(self, h: _Handler) -> None:
        chunk = b"<p>" + b"word " * 2000 + b"</p>\n"
        h.send_response(200)
        h.send_header("content-type", "text/html")
        h.send_header("transfer-encoding", "chunked")
        h.end_headers()
        try:
            for _ in range(200):  # ~2 MB, far past the test's cap
                h.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            h.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading at its cap

    def __enter__(self) -> PageServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def side_model_for(server: ScriptedServer, *, usage: list[Any] | None = None) -> Any:
    """The session's side model on a real client to ``server`` (fast model: haiku)."""
    from agent_cli.model.client import ModelClient
    from agent_cli.model.config import ModelConfig
    from agent_cli.model.retry import RetryPolicy
    from agent_cli.session.side_model import SessionSideModel

    client = ModelClient(
        ModelConfig(api_key="test-key", base_url=server.base_url),
        policy=RetryPolicy(max_attempts=1),
    )
    return SessionSideModel(
        client,
        main_model=lambda: "claude-sonnet-4-5",
        fast="claude-haiku-4-5",
        on_usage=(lambda m, u: usage.append((m, u))) if usage is not None else None,
    )
