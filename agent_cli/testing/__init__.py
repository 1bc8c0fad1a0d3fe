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
    server_tool_use,
    stream_error,
    text,
    tool_use,
    web_search_error,
    web_search_result,
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
    "server_tool_use",
    "stream_error",
    "text",
    "tool_use",
    "web_search_error",
    "web_search_result",
]
