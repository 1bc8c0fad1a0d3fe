"""Retry policy end to end: a 400 is final; 500/529 keep being retried with backoff for about
three minutes (as Claude Code: 10 retries, 0.5 s doubling to 32 s), each wait announced; a
stalled stream is retried after the idle timeout; ``nerve -p`` never imports the SDK, nor httpx
(the first-party transport speaks httpcore)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from agent_cli.model import (
    ModelConfig,
    ModelError,
    RetryNotice,
    RetryPolicy,
    TurnCallbacks,
    TurnRequest,
)
from agent_cli.model.client import ModelClient
from agent_cli.testing import (
    Scenario,
    ScriptedServer,
    Turn,
    hang_after_headers,
    overloaded,
    server_error,
    text,
)
from tests.agent_cli.e2e.conftest import Harness, harness

__all__ = ["harness"]

HI: list[Any] = [{"role": "user", "content": "hi"}]


async def _with_fake_sleep(
    scenario: Scenario, config_env: dict[str, str]
) -> tuple[Any, list[float], list[RetryNotice]]:
    waits: list[float] = []

    async def fake_sleep(seconds: float) -> None:  # record the waits instead of sitting them out
        waits.append(seconds)

    notices: list[RetryNotice] = []
    async with ScriptedServer(scenario) as srv:
        env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.base_url, **config_env}
        client = ModelClient(ModelConfig.resolve(env=env), sleep=fake_sleep)
        try:
            result: Any = await client.stream_turn(
                TurnRequest(None, HI), TurnCallbacks(on_retry=notices.append)
            )
        except ModelError as exc:
            result = exc
        finally:
            await client.aclose()
    return result, waits, notices


@pytest.mark.parametrize("fault", [overloaded, server_error], ids=["529", "500"])
async def test_ten_failures_in_a_row_are_waited_out_for_about_three_minutes(fault: Any) -> None:
    turn, waits, notices = await _with_fake_sleep(
        Scenario.of(Turn([text("finally")], faults=[fault(times=10)])), {}
    )
    assert turn.text == "finally" and turn.attempts == 11
    assert len(waits) == 10 and [n.attempt for n in notices] == list(range(1, 11))
    assert max(waits) <= 32.0 and waits[-1] > 20.0  # backoff grew to the cap
    assert 115.0 < sum(waits) <= 160.0  # 159.5 s without jitter, up to 25 % less with it


async def test_the_eleventh_failure_gives_up_and_the_count_is_configurable() -> None:
    err, waits, _ = await _with_fake_sleep(
        Scenario.of(Turn([text("never")], faults=[overloaded(times=11)])), {}
    )
    assert isinstance(err, ModelError) and err.attempts == 11 and err.retryable
    assert "gave up after 11 attempts" in str(err) and len(waits) == 10
    err, waits, _ = await _with_fake_sleep(
        Scenario.of(Turn([text("never")], faults=[overloaded(times=3)])),
        {"CLAUDE_CODE_MAX_RETRIES": "2"},
    )
    assert isinstance(err, ModelError) and err.attempts == 3 and len(waits) == 2
    assert RetryPolicy().max_attempts == 11 and RetryPolicy().max_delay == 32.0


def _lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in stdout.splitlines() if x.strip()]


def test_retries_are_announced_as_retry_events_in_print_mode(harness: Harness) -> None:
    scenario = Scenario.of(Turn([text("back")], faults=[server_error(times=2)]))
    run = harness.run(["-p", "hi", "--output-format", "stream-json"], scenario)
    lines = _lines(run.stdout)
    retries = [x for x in lines if x["type"] == "system" and x["subtype"] == "api_retry"]
    assert [r["attempt"] for r in retries] == [1, 2], run.stdout
    assert all(r["error_status"] == 500 and r["error"] == "server_error" for r in retries)
    assert lines[-1]["type"] == "result" and lines[-1]["result"] == "back" and run.rc == 0


def test_a_stalled_stream_is_retried_after_the_configured_silence(harness: Harness) -> None:
    scenario = Scenario.of(Turn([text("unstuck")], faults=[hang_after_headers(3)]))
    harness.env["NERVE_STREAM_IDLE_TIMEOUT_S"] = "0.5"
    run = harness.run(["-p", "hi"], scenario)
    assert run.rc == 0 and run.stdout.strip() == "unstuck", run.stderr
    assert "the stream stalled: no data for 0.5 s" in run.stderr
    assert [r.turn for r in run.server.requests] == [0, 0]


def test_print_mode_on_the_first_party_path_never_imports_the_sdk_or_httpx(
    harness: Harness,
) -> None:
    code = (
        "import sys\n"
        "from agent_cli.cli import main\n"
        "rc = main(['-p', 'hi'])\n"
        # httpx: its __init__ imports its command-line client (click, Rich's console, Pygments)
        "heavy = ('anthropic', 'httpx2', 'httpx', 'httpx_sse', 'click', 'textual',\n"
        "         'rich.markdown', 'mcp')\n"
        "print('LOADED', sorted(m for m in sys.modules if m in heavy or m.split('.')[0] in heavy[:6]))\n"
        "print('RC', rc)\n"
    )
    server = harness.server(Scenario.of([text("lean")]))
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code],
            cwd=harness.project,
            env=harness.env_for(server),
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        server.stop()
    server.assert_done()
    assert "lean" in proc.stdout, proc.stderr
    assert "LOADED []" in proc.stdout, proc.stdout
