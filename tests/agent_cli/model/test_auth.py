"""Credentials as Claude Code sends them, checked on the server side of a real ``nerve -p``.

``ANTHROPIC_API_KEY`` -> ``x-api-key``; ``ANTHROPIC_AUTH_TOKEN`` -> ``Authorization: Bearer``
(no placeholder); the ``apiKeyHelper`` setting's output -> both, re-run on a 401 and when its
TTL has passed; a helper that fails, hangs or prints nothing is a clear error (exit status 1).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agent_cli.model.endpoint import KeyHelperConfig
from agent_cli.model.key_helper import ApiKeyHelper, KeyHelperError
from agent_cli.testing import Scenario, ScriptedServer, Turn, http_error, text
from tests.agent_cli.e2e.conftest import NERVE, Harness, harness

__all__ = ["harness"]


def _nerve(
    harness: Harness, server: ScriptedServer | None, env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    full = {**harness.env_for(None), **env}
    if server is not None:
        full.setdefault("ANTHROPIC_BASE_URL", server.base_url)
    return subprocess.run(
        [NERVE, "-p", "hi", *args],
        cwd=harness.project,
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _user_settings(harness: Harness, data: dict[str, object]) -> None:
    path = Path(harness.env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_api_key_goes_out_as_x_api_key_with_the_2023_version(harness: Harness) -> None:
    with ScriptedServer(Scenario.of([text("ok")])) as srv:
        run = _nerve(harness, srv, {"ANTHROPIC_API_KEY": "sk-env-key"})
        srv.assert_done()
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr
    headers = srv.requests[0].headers
    assert headers["x-api-key"] == "sk-env-key" and "authorization" not in headers
    assert headers["anthropic-version"] == "2023-06-01"
    assert srv.requests[0].path == "/v1/messages"


def test_auth_token_goes_out_as_bearer_without_a_placeholder_key(harness: Harness) -> None:
    with ScriptedServer(Scenario.of([text("ok")])) as srv:
        run = _nerve(harness, srv, {"ANTHROPIC_AUTH_TOKEN": "tok-abcdef123"})
        srv.assert_done()
    assert run.returncode == 0, run.stderr
    headers = srv.requests[0].headers
    assert headers["authorization"] == "Bearer tok-abcdef123" and "x-api-key" not in headers


def test_custom_headers_are_sent(harness: Harness) -> None:
    with ScriptedServer(Scenario.of([text("ok")])) as srv:
        env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_CUSTOM_HEADERS": "X-Foo: bar\nX-Team: infra"}
        assert _nerve(harness, srv, env).returncode == 0
    assert srv.requests[0].headers["x-foo"] == "bar"
    assert srv.requests[0].headers["x-team"] == "infra"


def test_api_key_helper_is_used_and_rerun_after_a_401(harness: Harness, tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    helper = tmp_path / "helper.sh"
    helper.write_text(f'echo x >> {counter}\necho "helper-key-$(wc -l < {counter})"\n')
    _user_settings(harness, {"apiKeyHelper": f"sh {helper}"})
    scenario = Scenario.of(
        Turn([text("ok")], faults=[http_error(401, "authentication_error", "key expired")])
    )
    with ScriptedServer(scenario) as srv:
        run = _nerve(harness, srv, {})
        srv.assert_done()
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr
    first, second = (r.headers for r in srv.requests)
    assert first["x-api-key"] == "helper-key-1" and first["authorization"] == "Bearer helper-key-1"
    assert second["x-api-key"] == "helper-key-2"  # the helper ran again after the 401


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("echo oops >&2; exit 3", "apiKeyHelper failed (exit status 3): oops"),
        ("sleep 30", "apiKeyHelper timed out after 0.5 s"),
        ("true", "apiKeyHelper printed no key"),
    ],
)
def test_a_broken_helper_is_a_clear_error(harness: Harness, command: str, message: str) -> None:
    _user_settings(harness, {"apiKeyHelper": command})
    with ScriptedServer(Scenario([])) as srv:
        run = _nerve(harness, srv, {"NERVE_API_KEY_HELPER_TIMEOUT_S": "0.5"})
        assert srv.requests == []  # nothing is sent without a key
    assert run.returncode == 1 and message in run.stderr, run.stderr
    assert "Traceback" not in run.stderr


async def test_the_helper_runs_again_when_its_ttl_has_passed(tmp_path: Path) -> None:
    counter = tmp_path / "n"
    now = [0.0]
    helper = ApiKeyHelper(
        KeyHelperConfig(f"echo x >> {counter}; wc -l < {counter}", ttl_s=60.0),
        clock=lambda: now[0],
    )
    assert await helper.key() == "1"
    now[0] = 59.0
    assert await helper.key() == "1"  # still fresh
    now[0] = 61.0
    assert await helper.key() == "2" and helper.runs == 2
    helper.invalidate()
    assert await helper.key() == "3"
    with pytest.raises(KeyHelperError, match="printed no key"):
        await ApiKeyHelper(KeyHelperConfig("printf ''")).key()


def test_an_unknown_provider_flag_stops_before_any_request(harness: Harness) -> None:
    with ScriptedServer(Scenario([])) as srv:
        run = _nerve(harness, srv, {"ANTHROPIC_API_KEY": "k", "CLAUDE_CODE_USE_FOUNDRY": "1"})
        assert srv.requests == []
    assert run.returncode == 1 and "CLAUDE_CODE_USE_FOUNDRY" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr
