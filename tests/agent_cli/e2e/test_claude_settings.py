"""A Claude Code user's settings, unchanged, through a real ``nerve -p`` (issue 16 items 1, 2, 4).

No ``ANTHROPIC_*`` variable is set in the shell unless a test says so: endpoint, key and model
come from ``~/.claude/settings.json`` ``env``, and the scripted server's request log shows what
arrived.
"""

from __future__ import annotations

import http.client
import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from agent_cli.testing import Match, Scenario, ScriptedServer, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import Harness
from tests.tools.mcp.conftest import SERVERS


def _user_settings(harness: Harness, data: dict[str, Any] | str) -> Path:
    path = Path(harness.env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
    return path


def _results(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    last = body["messages"][-1]
    return {b["tool_use_id"]: b for b in last["content"] if b.get("type") == "tool_result"}


def _text(result: dict[str, Any]) -> str:
    content = result["content"]
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content)
    return str(content)


def test_third_party_endpoint_guide_settings_run_with_nothing_else(harness: Harness) -> None:
    # The snippet GLM / Kimi / MiniMax / DeepSeek guides print, with a numeric flag, plus the
    # model variables such guides add; no shell variable, no flag.
    server = harness.server(Scenario.of(Turn([text("hello from glm")])))
    _user_settings(
        harness,
        {
            "env": {
                "ANTHROPIC_AUTH_TOKEN": "glm-token-123",
                "ANTHROPIC_BASE_URL": server.base_url,
                "API_TIMEOUT_MS": "3000000",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": 1,
                "ANTHROPIC_DEFAULT_SONNET_MODEL": "glm-4.7",
                "ANTHROPIC_DEFAULT_HAIKU_MODEL": "glm-4.5-air",
            }
        },
    )
    run = harness.run(["-p", "hello"], None, server=server, credentials=False)
    assert run.rc == 0, run.stderr
    assert run.stdout.strip() == "hello from glm"
    assert run.stderr == ""  # the numeric value is fine: no warning, nothing ignored
    (request,) = run.server.requests
    assert request.path == "/v1/messages"  # the settings' base URL was used
    assert request.body["model"] == "glm-4.7"  # the default alias, remapped by settings env
    assert request.headers["authorization"] == "Bearer glm-token-123"


def test_settings_key_base_url_and_model_reach_the_request(harness: Harness) -> None:
    server = harness.server(Scenario.of(Turn([text("ok")])))
    _user_settings(
        harness,
        {
            "model": "opus",
            "env": {
                "ANTHROPIC_BASE_URL": server.base_url,
                "ANTHROPIC_API_KEY": "settings-key-123",
                "ANTHROPIC_MODEL": "glm-4.7",
            },
        },
    )
    run = harness.run(["-p", "hi"], None, server=server, credentials=False)
    assert run.rc == 0, run.stderr
    (request,) = run.server.requests
    assert request.headers["x-api-key"] == "settings-key-123"
    assert request.body["model"] == "glm-4.7"  # ANTHROPIC_MODEL beats settings "model"


def test_settings_env_wins_over_the_shell(harness: Harness) -> None:
    server = harness.server(Scenario.of(Turn([text("ok")])))
    _user_settings(harness, {"env": {"ANTHROPIC_MODEL": "from-settings"}})
    harness.env["ANTHROPIC_MODEL"] = "from-shell"
    run = harness.run(["-p", "hi"], None, server=server)
    assert run.rc == 0, run.stderr
    assert run.server.requests[0].body["model"] == "from-settings"


@pytest.mark.parametrize(
    ("shell", "settings", "flags", "expected"),
    [
        # ANTHROPIC_MODEL (shell) beats settings "model" (F3); --model beats both
        ({"ANTHROPIC_MODEL": "env-model-x"}, {"model": "opus"}, [], "env-model-x"),
        ({"ANTHROPIC_MODEL": "env-model-x"}, {"model": "opus"}, ["--model", "m-flag"], "m-flag"),
        # the alias remap, from settings env
        ({}, {"model": "opus", "env": {"ANTHROPIC_DEFAULT_OPUS_MODEL": "glm-5"}}, [], "glm-5"),
    ],
)
def test_model_precedence(
    harness: Harness,
    shell: dict[str, str],
    settings: dict[str, Any],
    flags: list[str],
    expected: str,
) -> None:
    harness.env.update(shell)
    _user_settings(harness, settings)
    run = harness.run(["-p", "hi", *flags], Scenario.of(Turn([text("ok")])))
    assert run.rc == 0, run.stderr
    assert run.server.requests[0].body["model"] == expected


def test_subagent_model_variable(harness: Harness) -> None:
    _user_settings(harness, {"env": {"CLAUDE_CODE_SUBAGENT_MODEL": "sub-model-x"}})
    agent = {
        "description": "look around",
        "prompt": "SUBPROMPT",
        "subagent_type": "general-purpose",
        "model": "haiku",  # the variable overrides the call's model too
    }
    scenario = Scenario.of(
        Turn([tool_use("Agent", agent, id="t_agent")]),
        Turn([text("sub done")], match=Match(contains_text="SUBPROMPT")),
        Turn([text("all done")], match=Match(tool_result_for="t_agent")),
    )
    run = harness.run(["-p", "delegate", "--allowedTools", "Agent"], scenario)
    assert run.rc == 0, run.stderr
    main, sub, final = (r.body["model"] for r in run.server.requests)
    assert sub == "sub-model-x"
    assert main == final != "sub-model-x"


def test_small_fast_model_runs_the_auto_mode_first_stage(harness: Harness) -> None:
    _user_settings(harness, {"env": {"ANTHROPIC_SMALL_FAST_MODEL": "fast-x"}})
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "touch made-by-auto"}, id="t_bash")]),
        Turn(
            [tool_use("verdict", {"decision": "allow", "reason": "creates one file"})],
            match=Match(predicate=lambda b: b.get("model") == "fast-x", description="fast"),
        ),
        Turn([text("done")], match=Match(tool_result_for="t_bash")),
    )
    run = harness.run(["-p", "make a file", "--permission-mode", "auto"], scenario)
    assert run.rc == 0, run.stderr
    assert (harness.project / "made-by-auto").exists()
    assert [r.body["model"] for r in run.server.requests][1] == "fast-x"


def test_settings_env_reaches_bash_hooks_and_mcp_servers(harness: Harness) -> None:
    # The ChrisWiles/claude-code-showcase shape (F1c) plus the numeric value of F2, a hook and
    # an MCP server of the user's: each sees the variables as strings.
    harness.env["FOO"] = "from-shell"
    harness.env["SHELL_ONLY"] = "kept"
    hook_log = harness.root / "hook-env.txt"
    _user_settings(
        harness,
        {
            "env": {"FOO": "bar-from-settings", "INSIDE_CLAUDE_CODE": 1},
            "permissions": {"allow": ["Bash(printenv:*)"]},
            "hooks": {
                "PreToolUse": [
                    {
                        "matcher": "Bash",
                        "hooks": [
                            {
                                "type": "command",
                                "command": f'echo "$FOO $INSIDE_CLAUDE_CODE" >> "{hook_log}"',
                            }
                        ],
                    }
                ]
            },
        },
    )
    nerve_dir = Path(harness.env["NERVE_CONFIG_DIR"])
    nerve_dir.mkdir(parents=True)
    demo = [str(SERVERS / "demo_server.py"), f"env-{harness.root.name}"]
    servers = {"mcpServers": {"demo": {"command": sys.executable, "args": demo}}}
    (nerve_dir / "mcp.json").write_text(json.dumps(servers))
    scenario = Scenario.of(
        Turn(
            [
                tool_use("Bash", {"command": "printenv FOO INSIDE_CLAUDE_CODE SHELL_ONLY"}, "t_b"),
                tool_use("ToolSearch", {"query": "select:mcp__demo__env"}, id="t_search"),
            ]
        ),
        Turn(
            [tool_use("mcp__demo__env", {"name": "INSIDE_CLAUDE_CODE"}, id="t_env")],
            match=Match(tool_result_for="t_search"),
        ),
        Turn([text("done")], match=Match(tool_result_for="t_env")),
    )
    run = harness.run(["-p", "look", "--allowedTools", "mcp__demo__env"], scenario)
    assert run.rc == 0, run.stderr
    second, third = (r.body for r in run.server.requests[1:])
    assert _text(_results(second)["t_b"]).split() == ["bar-from-settings", "1", "kept"]
    assert _text(_results(third)["t_env"]) == "1"
    assert hook_log.read_text() == "bar-from-settings 1\n"


class _ForwardProxy(ThreadingHTTPServer):
    """A logging HTTP forward proxy on 127.0.0.1: absolute-URI requests, relayed upstream."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _ProxyHandler)
        self.seen: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _ProxyHandler(BaseHTTPRequestHandler):
    server: _ForwardProxy

    def do_POST(self) -> None:
        self.server.seen.append(f"{self.command} {self.path}")
        target = urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        headers = {k: v for k, v in self.headers.items() if k.lower() != "proxy-connection"}
        upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
        upstream.request(self.command, target.path or "/", body=body, headers=headers)
        response = upstream.getresponse()
        data = response.read()
        self.send_response(response.status)
        for key, value in response.getheaders():
            if key.lower() not in ("transfer-encoding", "content-length", "connection"):
                self.send_header(key, value)
        self.send_header("content-length", str(len(data)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(data)
        upstream.close()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def proxy() -> Iterator[_ForwardProxy]:
    server = _ForwardProxy()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_proxy_from_settings_env_carries_the_request(
    harness: Harness, proxy: _ForwardProxy
) -> None:
    server: ScriptedServer = harness.server(Scenario.of(Turn([text("via proxy")])))
    _user_settings(
        harness,
        {
            "env": {
                "ANTHROPIC_BASE_URL": server.base_url,
                "ANTHROPIC_API_KEY": "k",
                "HTTP_PROXY": proxy.url,
                "HTTPS_PROXY": proxy.url,
            }
        },
    )
    run = harness.run(["-p", "hi"], None, server=server, credentials=False)
    assert run.rc == 0, run.stderr
    assert run.stdout.strip() == "via proxy"
    assert proxy.seen == [f"POST {server.base_url}/v1/messages"]


def test_no_proxy_in_settings_env_bypasses_a_shell_proxy(
    harness: Harness, proxy: _ForwardProxy
) -> None:
    harness.env["HTTP_PROXY"] = proxy.url
    _user_settings(harness, {"env": {"NO_PROXY": "127.0.0.1"}})
    run = harness.run(["-p", "hi"], Scenario.of(Turn([text("direct")])))
    assert run.rc == 0, run.stderr
    assert run.stdout.strip() == "direct"
    assert proxy.seen == []
