"""Test doubles that go through the real seams: a scripted Anthropic Messages API over real HTTP."""

from agent_cli.testing.scenario import (
    Fault,
    Match,
    Scenario,
    ScenarioError,
    Turn,
    cut,
    http_error,
    overloaded,
    rate_limit,
    server_error,
    stream_error,
    text,
    tool_use,
)
from agent_cli.testing.scripted_server import RecordedRequest, ScriptedServer

__all__ = [
    "Fault",
    "Match",
    "RecordedRequest",
    "Scenario",
    "ScenarioError",
    "ScriptedServer",
    "Turn",
    "cut",
    "http_error",
    "overloaded",
    "rate_limit",
    "server_error",
    "stream_error",
    "text",
    "tool_use",
]
