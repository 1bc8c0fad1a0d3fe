"""``http`` hooks through a real ``nerve -p``: the event JSON is POSTed to a real local HTTP
server; its JSON reply decides as a command hook's stdout; an error reply fails a guard closed."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import Harness, Run


class _Server:
    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], dict[str, Any]]] = []
        self.reply: tuple[int, str] = (200, "")
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                outer.requests.append((dict(self.headers), json.loads(body)))
                status, reply = outer.reply
                self.send_response(status)
                self.send_header("content-length", str(len(reply.encode())))
                self.end_headers()
                self.wfile.write(reply.encode())

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/check"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture
def hook_server() -> Iterator[_Server]:
    server = _Server()
    yield server
    server.httpd.shutdown()


def _settings(harness: Harness, url: str) -> None:
    handler = {
        "type": "http",
        "url": url,
        "headers": {"Authorization": "Bearer $HOOK_TOKEN", "X-Other": "${SECRET}"},
        "allowedEnvVars": ["HOOK_TOKEN"],
    }
    path = Path(harness.env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [handler]}]}})
    )


def _go(harness: Harness) -> Run:
    harness.env.update(HOOK_TOKEN="tok123", SECRET="hidden")
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "touch CANARY"}, id="t_bash")]),
        Turn([text("done")], match=Match(tool_result_for="t_bash")),
    )
    run = harness.run(["-p", "go", "--permission-mode", "bypassPermissions"], scenario)
    assert run.rc == 0, run.stderr
    return run


def _result(run: Run) -> str:
    last = run.server.requests[1].body["messages"][-1]
    return json.dumps(next(b for b in last["content"] if b.get("tool_use_id") == "t_bash"))


def test_a_json_deny_reply_blocks_the_call(harness: Harness, hook_server: _Server) -> None:
    _settings(harness, hook_server.url)
    out = {"permissionDecision": "deny", "permissionDecisionReason": "policy says no"}
    hook_server.reply = (
        200,
        json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", **out}}),
    )
    run = _go(harness)
    assert not (harness.project / "CANARY").exists()
    assert "policy says no" in _result(run)
    ((headers, body),) = hook_server.requests
    assert (
        body["hook_event_name"] == "PreToolUse" and body["tool_input"]["command"] == "touch CANARY"
    )
    lower = {k.lower(): v for k, v in headers.items()}
    assert lower["content-type"] == "application/json"
    assert lower["authorization"] == "Bearer tok123" and lower["x-other"] == ""  # not allowed


def test_an_empty_2xx_lets_the_call_run(harness: Harness, hook_server: _Server) -> None:
    _settings(harness, hook_server.url)
    run = _go(harness)
    assert (harness.project / "CANARY").exists() and '"is_error": true' not in _result(run)


def test_an_error_status_fails_the_guard_closed(harness: Harness, hook_server: _Server) -> None:
    _settings(harness, hook_server.url)
    hook_server.reply = (500, "boom")
    run = _go(harness)
    assert not (harness.project / "CANARY").exists()
    assert "it answered HTTP 500: boom" in _result(run) and "HTTP 500" in run.stderr
