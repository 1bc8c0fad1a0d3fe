"""Bedrock and Vertex through the SDK's clients, against the scripted server playing each one.

Vertex answers with the API's own event stream; Bedrock with an AWS event stream (binary frames,
decoded by the SDK with botocore). Signing is checked as far as offline allows: with fake AWS
keys the request carries a SigV4 ``Authorization`` for the right region and service.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_cli.model import (
    MissingApiKey,
    ModelConfig,
    ModelConfigError,
    RetryPolicy,
    TurnCallbacks,
    TurnRequest,
)
from agent_cli.model.client import ModelClient
from agent_cli.testing import Match, Scenario, ScriptedServer, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import Harness, harness

__all__ = ["harness"]

HI: list[Any] = [{"role": "user", "content": "hi"}]
FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.002)
FIRST_PARTY_TRAP = "http://127.0.0.1:9"  # must never be used by a cloud session


def _vertex(srv: ScriptedServer, **extra: str) -> dict[str, str]:
    return {
        "CLAUDE_CODE_USE_VERTEX": "1",
        "ANTHROPIC_VERTEX_PROJECT_ID": "p1",
        "CLOUD_ML_REGION": "us-east5",
        "ANTHROPIC_VERTEX_BASE_URL": srv.base_url,
        "CLAUDE_CODE_SKIP_VERTEX_AUTH": "1",
        "ANTHROPIC_BASE_URL": FIRST_PARTY_TRAP,
        **extra,
    }


def _bedrock(srv: ScriptedServer, **extra: str) -> dict[str, str]:
    return {
        "CLAUDE_CODE_USE_BEDROCK": "1",
        "AWS_REGION": "us-east-1",
        "ANTHROPIC_BEDROCK_BASE_URL": srv.base_url,
        "ANTHROPIC_BASE_URL": FIRST_PARTY_TRAP,
        **extra,
    }


def _two_turns() -> Scenario:
    return Scenario.of(
        Turn([text("Let me look."), tool_use("Read", {"file_path": "/x"}, id="r1")]),
        Turn([text("Done.")], match=Match(tool_result_for="r1")),
    )


async def _converse(config: ModelConfig) -> tuple[list[str], Any]:
    client = ModelClient(config, policy=FAST)
    handed: list[str] = []
    try:
        first = await client.stream_turn(
            TurnRequest(None, HI), TurnCallbacks(on_tool_use=lambda i, n, x: handed.append(i))
        )
        history = [
            *HI,
            first.to_message(),
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "r1", "content": "x"}],
            },
        ]
        second = await client.stream_turn(TurnRequest(None, history))
    finally:
        await client.aclose()
    assert first.content[1] == {
        "type": "tool_use",
        "id": "r1",
        "name": "Read",
        "input": {"file_path": "/x"},
    }
    return handed, second


async def test_vertex_streams_from_its_own_path_never_the_first_party_url() -> None:
    async with ScriptedServer(_two_turns()) as srv:
        config = ModelConfig.resolve(env=_vertex(srv), cli_model="claude-sonnet-4-5@20250929")
        assert config.provider == "vertex"
        handed, second = await _converse(config)
        srv.assert_done()
    assert handed == ["r1"] and second.text == "Done." and second.stop_reason == "end_turn"
    req = srv.requests[0]
    assert req.provider == "vertex"
    assert req.path == (
        "/projects/p1/locations/us-east5/publishers/anthropic/models/"
        "claude-sonnet-4-5@20250929:streamRawPredict"
    )
    assert "anthropic_version" in req.body and "model" not in req.body  # the SDK's Vertex form
    assert "authorization" not in req.headers  # CLAUDE_CODE_SKIP_VERTEX_AUTH


async def test_bedrock_decodes_the_aws_event_stream() -> None:
    async with ScriptedServer(_two_turns()) as srv:
        env = _bedrock(srv, CLAUDE_CODE_SKIP_BEDROCK_AUTH="1")
        config = ModelConfig.resolve(env=env, cli_model="us.anthropic.claude-sonnet-4-5-v1:0")
        handed, second = await _converse(config)
        srv.assert_done()
    assert handed == ["r1"] and second.text == "Done."
    req = srv.requests[0]
    assert req.provider == "bedrock"
    assert req.path == "/model/us.anthropic.claude-sonnet-4-5-v1:0/invoke-with-response-stream"
    assert "anthropic_version" in req.body and "stream" not in req.body  # the SDK's Bedrock form
    assert "authorization" not in req.headers  # CLAUDE_CODE_SKIP_BEDROCK_AUTH


async def test_bedrock_requests_are_signed_with_sigv4_for_the_region() -> None:
    async with ScriptedServer(Scenario.of([text("signed")])) as srv:
        env = _bedrock(srv, AWS_ACCESS_KEY_ID="AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY="secret")
        client = ModelClient(ModelConfig.resolve(env=env, cli_model="m1"), policy=FAST)
        try:
            turn = await client.stream_turn(TurnRequest(None, HI))
        finally:
            await client.aclose()
    assert turn.text == "signed"
    auth = srv.requests[0].headers["authorization"]
    assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/us-east-1/bedrock/aws4_request" in auth and "x-amz-date" in srv.requests[0].headers


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"CLAUDE_CODE_USE_BEDROCK": "1"}, "AWS_REGION"),
        ({"CLAUDE_CODE_USE_VERTEX": "1"}, "ANTHROPIC_VERTEX_PROJECT_ID"),
        ({"CLAUDE_CODE_USE_BEDROCK": "maybe"}, "must be 1 or 0"),
        ({"CLAUDE_CODE_USE_FOUNDRY": "1"}, "does not support"),
        (
            {"CLAUDE_CODE_USE_BEDROCK": "1", "CLAUDE_CODE_USE_VERTEX": "1", "AWS_REGION": "x"},
            "choose one",
        ),
        ({"ANTHROPIC_API_KEY": "k", "CLAUDE_CODE_MAX_RETRIES": "lots"}, "CLAUDE_CODE_MAX_RETRIES"),
        ({"ANTHROPIC_API_KEY": "k", "NERVE_STREAM_IDLE_TIMEOUT_S": "-1"}, "non-negative"),
    ],
)
def test_broken_provider_settings_are_one_clear_error(env: dict[str, str], message: str) -> None:
    with pytest.raises(ModelConfigError, match=message):
        ModelConfig.resolve(env={"ANTHROPIC_BASE_URL": FIRST_PARTY_TRAP, **env})


def test_credentials_and_timeouts_come_from_the_mapping_given() -> None:
    env = {"ANTHROPIC_AUTH_TOKEN": "tok", "CLAUDE_STREAM_IDLE_TIMEOUT_MS": "1000"}
    cfg = ModelConfig.resolve(env=env)
    assert (cfg.api_key, cfg.auth_token, cfg.key_helper) == (None, "tok", None)
    assert cfg.idle_timeout == 15.0  # Claude Code's minimum for its variable
    assert ModelConfig.resolve(env={"ANTHROPIC_API_KEY": "k"}).idle_timeout == 90.0
    assert ModelConfig.resolve(env={"ANTHROPIC_API_KEY": "k"}).max_retries == 10
    helper = ModelConfig.resolve(
        env={"CLAUDE_CODE_API_KEY_HELPER_TTL_MS": "60000"}, api_key_helper="echo k"
    )
    assert helper.key_helper is not None and helper.key_helper.ttl_s == 60.0
    with pytest.raises(MissingApiKey):
        ModelConfig.resolve(env={}, api_key_helper="  ")


def _without_botocore(tmp: Path) -> str:
    (tmp / "sitecustomize.py").write_text(
        "import sys\nfor m in ('botocore', 'boto3'):\n    sys.modules[m] = None\n"
    )
    return str(tmp)


def test_a_missing_extra_is_one_line_naming_what_to_install(
    harness: Harness, tmp_path: Path
) -> None:
    with ScriptedServer(Scenario([])) as srv:
        env = {**harness.env_for(None), **_bedrock(srv, CLAUDE_CODE_SKIP_BEDROCK_AUTH="1")}
        env["PYTHONPATH"] = _without_botocore(tmp_path)
        import subprocess

        from tests.agent_cli.e2e.conftest import NERVE

        proc = subprocess.run(
            [NERVE, "-p", "hi"],
            cwd=harness.project,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert srv.requests == []
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'nerve[bedrock]'" in lines[0], proc.stderr


def test_vertex_end_to_end_in_print_mode(harness: Harness) -> None:
    server = harness.server(_two_turns())
    try:
        import subprocess

        from tests.agent_cli.e2e.conftest import NERVE

        env = {**harness.env_for(None), **_vertex(server)}
        (harness.project / "x").write_text("content\n")
        proc = subprocess.run(
            [NERVE, "-p", "read it", "--model", "claude-sonnet-4-5@20250929"],
            cwd=harness.project,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Done."
    assert [r.provider for r in server.requests] == ["vertex", "vertex"]
    server.assert_done()
    assert os.environ.get("CLAUDE_CODE_USE_VERTEX") is None and sys.modules  # nothing leaked
