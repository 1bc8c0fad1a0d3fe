"""A real HTTP server on 127.0.0.1 that plays a scripted Anthropic Messages API.

``POST /v1/messages`` answers the next turn of a ``Scenario``: an SSE stream with chunked
transfer encoding (event order as the real API: ``message_start``, ``ping``, per block
``content_block_start`` / ``content_block_delta``... / ``content_block_stop``, ``message_delta``,
``message_stop``) or, without ``"stream": true``, a full Message JSON. Every request is recorded.

It fails loudly: a request it did not expect (scenario exhausted, ``match`` failed, or a body the
real API would reject) gets HTTP 500 with ``x-should-retry: false`` and a body saying
``scripted server: unexpected request #N: ...``, and is recorded; ``assert_done()`` raises on any
such failure and on any turn that was never served.

    with ScriptedServer(Scenario.of([text("hi")])) as srv:
        client = AsyncAnthropic(api_key="test", base_url=srv.base_url)
        ...
        srv.assert_done()

Run as a process: ``python -m agent_cli.testing.scripted_server --scenario FILE --port-file PATH
[--report PATH]`` serves until SIGTERM/SIGINT, then writes the report.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from agent_cli.testing.checks import check_request, check_thinking, summarize_request
from agent_cli.testing.clouds import BEDROCK_CONTENT_TYPE, bedrock_frame, cloud_route
from agent_cli.testing.events import message_json, turn_events
from agent_cli.testing.scenario import Fault, Scenario, ScenarioError, Turn
from agent_cli.testing.wire import chunk, encode_event, faulty_events, wait_until_client_leaves
from tools.records import datarecord

__all__ = ["RecordedRequest", "ScriptedServer", "main"]


@datarecord
class RecordedRequest:
    """One request as the server saw it, and what it answered."""

    index: int  # 1-based, over all requests
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    turn: int | None = None  # index of the scenario turn it was answered with (or faulted on)
    outcome: str = ""  # "turn", "fault:<kind>", "unexpected"
    provider: str = "anthropic"  # or "vertex" / "bedrock", by the path (agent_cli.testing.clouds)

    def to_dict(self) -> dict[str, Any]:
        keys = ("index", "method", "path", "turn", "outcome", "body")  # headers hold the key
        return {k: getattr(self, k) for k in keys}


@datarecord
class _Plan:
    record: RecordedRequest
    turn: Turn | None = None
    fault: Fault | None = None
    error: str | None = None
    stream: bool = False
    model: str = ""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30  # frees idle keep-alive threads
    disable_nagle_algorithm = True  # one small write per event: no 40 ms Nagle stalls
    server: _Server

    def do_POST(self) -> None:
        self.server.owner._handle(self)

    do_GET = do_PUT = do_DELETE = do_POST

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: ScriptedServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client killed mid-request (the kill tests do it on purpose) is not a server error.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class ScriptedServer:
    """The scripted Messages API server. See the module docstring."""

    def __init__(
        self,
        scenario: Scenario,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        gate_timeout: float = 5.0,
        text_chunk: int = 6,
        json_chunk: int = 7,
    ) -> None:
        self.scenario = scenario
        self.host = host
        self.gate_timeout = gate_timeout
        self.text_chunk = text_chunk
        self.json_chunk = json_chunk
        self.requests: list[RecordedRequest] = []
        self.failures: list[str] = []
        self._thoughts: dict[str, list[dict[str, Any]]] = {}  # tool_use id -> thinking sent
        self.marks: list[str] = []  # server-side log: events sent, gates opened
        self._lock = threading.Lock()
        self._next_turn = 0
        self._faults_left = {i: [f.times for f in t.faults] for i, t in enumerate(scenario.turns)}
        self._gates: dict[str, threading.Event] = {}
        self._stopping = threading.Event()
        self._port = port
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> ScriptedServer:
        httpd = _Server((self.host, self._port), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self._port = httpd.server_address[1]
        self._thread = threading.Thread(
            target=httpd.serve_forever, args=(0.01,), name="scripted-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    async def astart(self) -> ScriptedServer:
        return await asyncio.to_thread(self.start)

    async def astop(self) -> None:
        await asyncio.to_thread(self.stop)

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> ScriptedServer:
        return await self.astart()

    async def __aexit__(self, *exc: object) -> None:
        await self.astop()

    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self._port}"

    def gate(self, name: str) -> threading.Event:
        """The gate a turn's ``holds`` waits on; ``.set()`` it to let the stream go on."""
        with self._lock:
            return self._gates.setdefault(name, threading.Event())

    # -- verdicts ------------------------------------------------------------------------------
    def unconsumed_turns(self) -> list[int]:
        with self._lock:
            return list(range(self._next_turn, len(self.scenario.turns)))

    def assert_done(self) -> None:
        """Raise AssertionError if any request was unexpected or any turn was never served."""
        problems = list(self.failures)
        left = self.unconsumed_turns()
        if left:
            problems.append(f"scripted server: turn(s) {left} never served")
        if problems:
            raise AssertionError("\n".join(problems))

    def report(self) -> dict[str, Any]:
        return {
            "requests": [r.to_dict() for r in self.requests],
            "failures": list(self.failures),
            "unconsumed_turns": self.unconsumed_turns(),
            "ok": not self.failures and not self.unconsumed_turns(),
        }

    # -- serving -------------------------------------------------------------------------------
    def _plan(self, method: str, path: str, headers: dict[str, str], body: Any) -> _Plan:
        with self._lock:
            rec = RecordedRequest(len(self.requests) + 1, method, path, headers, body)
            self.requests.append(rec)
            plan = _Plan(rec, stream=isinstance(body, dict) and body.get("stream") is True)
            route = cloud_route(path, body) if method == "POST" else None
            if route is not None:
                rec.provider, body, plan.stream = route
            if method != "POST" or (path != "/v1/messages" and route is None):
                plan.error = f"{method} {path} is not POST /v1/messages"
            elif not isinstance(body, dict):
                plan.error = "body is not a JSON object"
            elif problems := check_request(body) + check_thinking(body, self._thoughts):
                plan.error = "invalid request: " + "; ".join(problems)
            elif self._next_turn >= len(self.scenario.turns):
                plan.error = f"scenario exhausted after {len(self.scenario.turns)} turn(s)"
            else:
                idx = self._next_turn
                turn = self.scenario.turns[idx]
                mismatch = turn.match.mismatch(body) if turn.match else None
                if mismatch:
                    plan.error = f"turn {idx} match failed: {mismatch}"
                else:
                    rec.turn, plan.turn, plan.model = idx, turn, str(body["model"])
                    left = self._faults_left[idx]
                    pending = next((i for i, n in enumerate(left) if n > 0), None)
                    if pending is not None:
                        left[pending] -= 1
                        plan.fault = turn.faults[pending]
                        rec.outcome = f"fault:{plan.fault.kind}"
                        if plan.fault.consumes_turn:
                            self._next_turn += 1
                    else:
                        rec.outcome = "turn"
                        self._next_turn += 1
                        self._remember_thoughts(turn)
            if plan.error is not None:
                rec.outcome = "unexpected"
                msg = f"scripted server: unexpected request #{rec.index}: {plan.error}"
                self.failures.append(f"{msg} ({summarize_request(body)})")
                plan.error = msg
            return plan

    def _remember_thoughts(self, turn: Any) -> None:
        thoughts = [dict(b) for b in turn.blocks if b["type"] in ("thinking", "redacted_thinking")]
        if thoughts:  # keyed by the message's tool calls; a message without any by itself
            self._thoughts[f"message {len(self._thoughts)}"] = thoughts
        for b in turn.blocks:
            if b["type"] == "tool_use" and thoughts:
                self._thoughts[b["id"]] = thoughts

    def _handle(self, h: _Handler) -> None:
        length = int(h.headers.get("content-length") or 0)
        raw = h.rfile.read(length) if length > 0 else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in h.headers.items()}
        plan = self._plan(h.command, h.path.split("?", 1)[0], headers, body)
        rid = f"req_scripted_{plan.record.index:04d}"
        if plan.error is not None:
            self._send_error(h, 500, "api_error", plan.error, rid, {"x-should-retry": "false"})
            return
        assert plan.turn is not None
        fault = plan.fault
        if fault is not None and fault.kind == "hang_before_headers":
            self._hang(h, plan.record.index, fault)
            return
        if fault is not None and fault.kind == "http":
            extra: dict[str, str] = {}
            if fault.retry_after is not None:
                extra["retry-after"] = fault.retry_after
            if fault.retry_after_ms is not None:
                extra["retry-after-ms"] = fault.retry_after_ms
            if fault.should_retry is not None:
                extra["x-should-retry"] = "true" if fault.should_retry else "false"
            self._send_error(h, fault.status, fault.error_type, fault.message, rid, extra)
            return
        model = plan.turn.model or str(plan.model)
        msg_id = f"msg_scripted_{plan.record.index:04d}"
        if not plan.stream:
            self._send_message(h, plan, fault, msg_id, model, rid)
            return
        self._send_stream(h, plan, fault, msg_id, model, rid)

    @staticmethod
    def _send_json(h: _Handler, status: int, data: Any, rid: str, extra: dict[str, str]) -> None:
        payload = json.dumps(data).encode()
        h.send_response(status)
        for k, v in {"content-type": "application/json", "request-id": rid, **extra}.items():
            h.send_header(k, v)
        h.send_header("content-length", str(len(payload)))
        h.end_headers()
        h.wfile.write(payload)
        h.wfile.flush()

    def _send_error(
        self, h: _Handler, status: int, etype: str, message: str, rid: str, extra: dict[str, str]
    ) -> None:
        body = {"type": "error", "error": {"type": etype, "message": message}}
        self._send_json(h, status, body, rid, extra)

    def _send_message(
        self, h: _Handler, plan: _Plan, fault: Fault | None, msg_id: str, model: str, rid: str
    ) -> None:
        assert plan.turn is not None
        if fault is not None and fault.kind == "cut":
            self._cut(h)
        elif fault is not None:  # an in-stream error has no stream to live in: answer as HTTP
            self._send_error(h, 529, fault.error_type, fault.message, rid, {})
        else:
            self._send_json(h, 200, message_json(plan.turn, msg_id, model, final=True), rid, {})

    def _send_stream(
        self, h: _Handler, plan: _Plan, fault: Fault | None, msg_id: str, model: str, rid: str
    ) -> None:
        turn = plan.turn
        assert turn is not None
        n = plan.record.index
        events = turn_events(turn, msg_id, model, self.text_chunk, self.json_chunk)
        kind = fault.kind if fault is not None else None
        chunked = kind != "eof"
        bedrock = plan.record.provider == "bedrock"
        h.send_response(200)
        h.send_header("content-type", BEDROCK_CONTENT_TYPE if bedrock else "text/event-stream")
        if chunked:
            h.send_header("transfer-encoding", "chunked")
        else:  # close-delimited: the body ends when the server closes, cleanly
            h.send_header("connection", "close")
            h.close_connection = True
        h.send_header("cache-control", "no-cache")
        h.send_header("request-id", rid)
        h.end_headers()
        delay = fault.delay if fault is not None and kind == "slow" else turn.event_delay
        try:
            for sent, item in enumerate(faulty_events(events, fault)):
                if (
                    fault is not None
                    and sent >= fault.after_events
                    and self._break(h, n, fault, sent)
                ):
                    return
                if delay and sent:
                    time.sleep(delay)
                if isinstance(item, bytes):
                    raw = item
                else:
                    raw = bedrock_frame(item[1]) if bedrock else encode_event(*item)
                h.wfile.write(chunk(raw) if chunked else raw)
                h.wfile.flush()
                if isinstance(item, bytes):
                    self._mark(f"#{n} raw bytes")
                    continue
                name, data = item
                label = f"[{data['index']}]" if "index" in data else ""
                self._mark(f"#{n} {name}{label}")
                if name == "content_block_stop" and data["index"] in turn.holds:
                    self._hold(n, turn.holds[data["index"]])
                if sent in turn.event_holds:
                    self._hold(n, turn.event_holds[sent])
            if chunked:
                h.wfile.write(b"0\r\n\r\n")
            h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self._mark(f"#{n} client went away")
            h.close_connection = True

    def _break(self, h: _Handler, n: int, fault: Fault, sent: int) -> bool:
        """Play ``fault`` at this point of the stream; True when the stream ends here."""
        if fault.kind in ("cut", "cut_mid_chunk"):
            if fault.kind == "cut_mid_chunk":  # half a chunk: its size line and some bytes
                h.wfile.write(b'40\r\nevent: content_block_delta\ndata: {"ty')
            self._mark(f"#{n} {fault.kind} after {sent} events")
            self._cut(h)
            return True
        if fault.kind == "stream_error":
            err = {"type": "error", "error": {"type": fault.error_type, "message": fault.message}}
            h.wfile.write(chunk(encode_event("error", err)) + b"0\r\n\r\n")
            h.wfile.flush()
            self._mark(f"#{n} error after {sent} events")
            return True
        if fault.kind == "eof":
            self._mark(f"#{n} eof after {sent} events")
            h.wfile.flush()
            return True
        if fault.kind == "hang_after_headers":
            self._hang(h, n, fault)
            return True
        return False

    def _hang(self, h: _Handler, n: int, fault: Fault) -> None:
        self._mark(f"#{n} hang")
        h.wfile.flush()
        deadline = time.monotonic() + (fault.delay or self.gate_timeout)
        left = wait_until_client_leaves(h.connection, deadline, self._stopping)
        self._mark(f"#{n} {'client went away' if left else 'hang ended'}")
        h.close_connection = True

    def _hold(self, n: int, name: str) -> None:
        gate = self.gate(name)
        deadline = time.monotonic() + self.gate_timeout
        while not gate.is_set() and not self._stopping.is_set() and time.monotonic() < deadline:
            gate.wait(0.02)
        self._mark(f"#{n} gate {name} {'opened' if gate.is_set() else 'timed out'}")

    def _mark(self, text: str) -> None:
        with self._lock:
            self.marks.append(text)

    @staticmethod
    def _cut(h: _Handler) -> None:
        # Close without the terminating chunk: the client sees an incomplete chunked body.
        h.close_connection = True
        try:
            h.wfile.flush()
            h.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def main(argv: Sequence[str] | None = None) -> int:
    """Serve a scenario file until SIGTERM/SIGINT; write the port file and, at exit, the report."""
    parser = argparse.ArgumentParser(prog="python -m agent_cli.testing.scripted_server")
    parser.add_argument("--scenario", required=True, help="scenario JSON file")
    parser.add_argument("--port-file", required=True, help="where to write the chosen port")
    parser.add_argument("--report", help="write a JSON report of requests and leftovers here")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        scenario = Scenario.from_json(args.scenario)
    except ScenarioError as exc:
        print(f"scripted server: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    server = ScriptedServer(scenario, port=args.port).start()
    try:
        tmp = Path(args.port_file + ".tmp")
        tmp.write_text(str(server.port), encoding="utf-8")
        os.replace(tmp, args.port_file)  # readers never see a half-written port
        while not stop.wait(0.1):
            pass
    finally:
        server.stop()
        if args.report:
            Path(args.report).write_text(json.dumps(server.report(), indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
