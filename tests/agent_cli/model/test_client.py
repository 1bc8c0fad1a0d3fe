"""The model client: the real anthropic SDK against the scripted server over loopback HTTP."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agent_cli.model import (
    DEFAULT_MODEL,
    AssistantTurn,
    MissingApiKey,
    ModelConfig,
    ModelError,
    RetryNotice,
    RetryPolicy,
    SessionUsage,
    TurnCallbacks,
    TurnRequest,
    Usage,
    cost_usd,
    estimate_cost,
    parse_retry_after,
    resolve_model,
)
from agent_cli.model.client import ModelClient
from agent_cli.testing import (
    Fault,
    Match,
    Scenario,
    ScriptedServer,
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
from agent_cli.testing.events import turn_events
from tools.context import AbortSignal

HI: list[Any] = [{"role": "user", "content": "hi"}]
FAST = RetryPolicy(max_attempts=4, base_delay=0.001, max_delay=0.005)


@pytest.fixture
async def make() -> AsyncIterator[Any]:
    clients: list[ModelClient] = []

    def _make(srv: ScriptedServer, **kwargs: Any) -> ModelClient:
        kwargs.setdefault("policy", FAST)
        config = ModelConfig(api_key="sk-test", base_url=srv.base_url, model="claude-sonnet-4-5")
        client = ModelClient(config, **kwargs)
        clients.append(client)
        return client

    yield _make
    for c in clients:
        await c.aclose()


def _events_until(turn: Turn, name: str, index: int) -> int:
    """How many events the server sends up to and including ``name`` for block ``index``."""
    events = turn_events(turn, "m", "m", 6, 7)
    return next(i for i, (n, d) in enumerate(events) if n == name and d.get("index") == index) + 1


async def test_text_streams_as_deltas_and_returns_plain_blocks(make: Any) -> None:
    words = "Streaming text arrives in several small pieces."
    scenario = Scenario.of(
        Turn([text(words)], input_tokens=120, output_tokens=9, cache_read_input_tokens=800)
    )
    async with ScriptedServer(scenario) as srv:
        deltas: list[str] = []
        turn = await make(srv).stream_turn(
            TurnRequest("You are Nerve.", HI), TurnCallbacks(on_text=deltas.append)
        )
        srv.assert_done()
    assert len(deltas) > 3 and "".join(deltas) == words
    assert turn.content == [{"type": "text", "text": words}]
    assert turn.stop_reason == "end_turn" and not turn.partial and not turn.aborted
    assert turn.usage == Usage(input=120, output=9, cache_creation=0, cache_read=800)
    assert turn.message_id == "msg_scripted_0001" and turn.attempts == 1


async def test_system_cache_breakpoint_and_tools_pass_through(make: Any) -> None:
    tools = [
        {"name": "Read", "description": "r", "input_schema": {"type": "object"}},
        {
            "name": "Write",
            "description": "w",
            "input_schema": {"type": "object"},
            "cache_control": {"type": "ephemeral"},
        },
    ]
    async with ScriptedServer(Scenario.of([text("ok")])) as srv:
        await make(srv).stream_turn(TurnRequest("system prompt", HI, tools, max_tokens=321))
        body = srv.requests[0].body
    assert body["system"] == [
        {"type": "text", "text": "system prompt", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["tools"] == tools
    assert (
        body["stream"] is True
        and body["max_tokens"] == 321
        and body["model"] == "claude-sonnet-4-5"
    )


async def test_tool_use_is_handed_out_at_block_stop_before_the_message_ends(make: Any) -> None:
    # The server holds the stream after tool A's block closes until the gate opens; only the
    # client's on_tool_use opens it. If the client waited for message_stop, the gate would time
    # out instead — so "opened" before "message_delta" proves the order by events, not timing.
    turn = Turn(
        [
            text("Two tools."),
            tool_use("Bash", {"command": "git status"}, id="A"),
            tool_use("Read", {"file_path": "/x"}, id="B"),
        ],
        holds={1: "A-seen"},
    )
    async with ScriptedServer(Scenario.of(turn), gate_timeout=10) as srv:
        order: list[str] = []

        def on_tool_use(block_id: str, name: str, tool_input: dict[str, Any]) -> None:
            order.append(f"tool:{block_id}:{name}:{sorted(tool_input)}")
            srv.gate(f"{block_id}-seen").set()

        result = await make(srv).stream_turn(
            TurnRequest(None, HI), TurnCallbacks(on_tool_use=on_tool_use)
        )
        order.append("returned")
        marks = [m for m in srv.marks if m.startswith("#1 ")]
    assert order == ["tool:A:Bash:['command']", "tool:B:Read:['file_path']", "returned"]
    assert "#1 gate A-seen opened" in marks
    assert marks.index("#1 content_block_stop[1]") < marks.index("#1 gate A-seen opened")
    assert marks.index("#1 gate A-seen opened") < marks.index("#1 content_block_start[2]")
    assert marks.index("#1 gate A-seen opened") < marks.index("#1 message_delta")
    assert result.stop_reason == "tool_use"
    assert [b["id"] for b in result.tool_uses] == ["A", "B"]
    assert result.tool_uses[0]["input"] == {"command": "git status"}


async def test_async_callbacks_are_awaited(make: Any) -> None:
    async with ScriptedServer(Scenario.of([text("hey"), tool_use("X", {"a": 1})])) as srv:
        seen: list[Any] = []

        async def on_text(delta: str) -> None:
            await asyncio.sleep(0)
            seen.append(delta)

        async def on_tool(block_id: str, name: str, tool_input: dict[str, Any]) -> None:
            await asyncio.sleep(0)
            seen.append((name, tool_input))

        await make(srv).stream_turn(
            TurnRequest(None, HI), TurnCallbacks(on_text=on_text, on_tool_use=on_tool)
        )
    assert "".join(s for s in seen if isinstance(s, str)) == "hey"
    assert seen[-1] == ("X", {"a": 1})


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        (rate_limit(retry_after="0"), "rate limited (429): Rate limited"),
        (overloaded(), "overloaded (529): Overloaded"),
        (server_error(), "server error (500): Internal server error"),
        (stream_error(after_events=5), "overloaded error mid-stream: Overloaded"),
        (cut(after_events=5), "connection lost: peer closed connection"),
    ],
)
async def test_retryable_failure_then_success(make: Any, fault: Any, reason: str) -> None:
    async with ScriptedServer(Scenario.of(Turn([text("recovered fine")], faults=[fault]))) as srv:
        notices: list[RetryNotice] = []
        deltas: list[str] = []
        turn = await make(srv).stream_turn(
            TurnRequest(None, HI), TurnCallbacks(on_text=deltas.append, on_retry=notices.append)
        )
        srv.assert_done()
        assert len(srv.requests) == 2 and [r.turn for r in srv.requests] == [0, 0]
    assert turn.text == "recovered fine" and turn.attempts == 2 and not turn.partial
    assert len(notices) == 1
    notice = notices[0]
    assert notice.attempt == 1 and notice.reason.startswith(reason) and notice.handed_out == ()
    assert 0 <= notice.delay <= FAST.max_delay
    # text streamed by the failed attempt is reported so the UI can drop it
    assert "".join(deltas) == notice.discarded_text + "recovered fine"
    if fault.kind in ("cut", "stream_error"):
        assert notice.discarded_text  # the stream broke after some text went out


async def test_cut_after_a_tool_was_handed_out_returns_a_partial_turn(make: Any) -> None:
    first = Turn(
        [
            text("Running two."),
            tool_use("Bash", {"command": "make"}, id="T1"),
            tool_use("Bash", {"command": "ls"}, id="T2"),
        ]
    )
    after_t1 = _events_until(first, "content_block_stop", 1)
    first.faults = [cut(after_events=after_t1 + 1, consumes_turn=True)]
    second = Turn([text("Make finished.")], match=Match(tool_result_for="T1"))
    async with ScriptedServer(Scenario([first, second])) as srv:
        client = make(srv)
        handed: list[str] = []
        notices: list[RetryNotice] = []
        turn = await client.stream_turn(
            TurnRequest(None, HI),
            TurnCallbacks(on_tool_use=lambda i, n, x: handed.append(i), on_retry=notices.append),
        )
        assert handed == ["T1"] and notices == []
        assert turn.partial and turn.stop_reason == "tool_use" and not turn.aborted
        assert turn.error is not None and turn.error.startswith("connection lost")
        assert turn.content == [
            {"type": "text", "text": "Running two."},
            {"type": "tool_use", "id": "T1", "name": "Bash", "input": {"command": "make"}},
        ]
        assert [r.turn for r in srv.requests] == [0]  # exactly one request for that turn
        # the loop answers the tool it ran and the conversation goes on, nothing re-run
        history = [
            *HI,
            turn.to_message(),
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "T1", "content": "ok"}],
            },
        ]
        final = await client.stream_turn(TurnRequest(None, history))
        assert final.text == "Make finished."
        srv.assert_done()


async def test_in_stream_error_after_a_tool_also_returns_partial(make: Any) -> None:
    first = Turn([tool_use("Read", {"file_path": "a"}, id="R1"), text("and more")])
    n = _events_until(first, "content_block_stop", 0)
    first.faults = [stream_error(after_events=n, error_type="overloaded_error")]
    async with ScriptedServer(Scenario([first])) as srv:
        turn = await make(srv).stream_turn(TurnRequest(None, HI))
        assert [r.turn for r in srv.requests] == [0]
    assert turn.partial and [b["id"] for b in turn.tool_uses] == ["R1"]
    assert turn.error == "overloaded error mid-stream: Overloaded"


def test_retry_after_is_capped_at_60_seconds() -> None:
    policy = RetryPolicy()
    assert policy.delay(1, parse_retry_after({"retry-after": "120"})) == 60.0
    assert policy.delay(1, parse_retry_after({"retry-after": "2.5"})) == 2.5
    assert policy.delay(1, parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"})) == 1.5
    assert (
        parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412470.0)
        == 10.0
    )
    assert parse_retry_after({"retry-after": "soon"}) is None and parse_retry_after({}) is None


def test_backoff_is_exponential_bounded_and_jittered() -> None:
    policy = RetryPolicy(base_delay=0.5, max_delay=8.0, jitter=0.25)
    no_jitter = [policy.delay(n, rand=lambda: 0.0) for n in range(1, 8)]
    assert no_jitter == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert policy.delay(3, rand=lambda: 1.0) == 1.5  # 2.0 shrunk by the full 25 %
    assert policy.delay(1, retry_after=0.0, rand=lambda: 0.0) == 0.5  # 0 means "no hint"


async def test_a_120s_retry_after_waits_60s_end_to_end(make: Any) -> None:
    waits: list[float] = []

    async def fake_sleep(seconds: float) -> None:  # record instead of waiting a minute
        waits.append(seconds)

    scenario = Scenario.of(Turn([text("later")], faults=[rate_limit(retry_after="120")]))
    async with ScriptedServer(scenario) as srv:
        notices: list[RetryNotice] = []
        turn = await make(srv, sleep=fake_sleep).stream_turn(
            TurnRequest(None, HI), TurnCallbacks(on_retry=notices.append)
        )
        srv.assert_done()
    assert waits == [60.0] and notices[0].delay == 60.0 and turn.text == "later"


@pytest.mark.parametrize(
    ("status", "etype"),
    [
        (401, "authentication_error"),
        (400, "invalid_request_error"),
        (403, "permission_error"),
        (404, "not_found_error"),
        (413, "request_too_large"),
    ],
)
async def test_non_retryable_errors_become_clean_model_errors(
    make: Any, status: int, etype: str
) -> None:
    scenario = Scenario.of(
        Turn([text("never")], faults=[http_error(status, etype, "nope, and why")])
    )
    async with ScriptedServer(scenario) as srv:
        notices: list[RetryNotice] = []
        with pytest.raises(ModelError) as info:
            await make(srv).stream_turn(
                TurnRequest(None, HI), TurnCallbacks(on_retry=notices.append)
            )
        assert len(srv.requests) == 1 and notices == []
    err = info.value
    assert str(err) == f"API error {status} ({etype}): nope, and why"
    assert (err.status, err.error_type, err.retryable) == (status, etype, False)
    assert err.request_id == "req_scripted_0001"
    assert "Traceback" not in str(err)


async def test_running_out_of_attempts_is_a_retryable_model_error(make: Any) -> None:
    scenario = Scenario.of(Turn([text("never")], faults=[overloaded(times=5)]))
    async with ScriptedServer(scenario) as srv:
        notices: list[RetryNotice] = []
        policy = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.002)
        with pytest.raises(ModelError) as info:
            await make(srv, policy=policy).stream_turn(
                TurnRequest(None, HI), TurnCallbacks(on_retry=notices.append)
            )
        assert len(srv.requests) == 3
    assert [n.attempt for n in notices] == [1, 2]
    assert info.value.retryable and info.value.attempts == 3
    assert (
        str(info.value) == "API error 529 (overloaded_error): Overloaded [gave up after 3 attempts]"
    )


async def test_the_x_should_retry_header_overrides_the_status(make: Any) -> None:
    forced = Fault("http", 400, "invalid_request_error", "try again", should_retry=True)
    refused = Fault("http", 503, "api_error", "do not", should_retry=False)
    scenario = Scenario.of(Turn([text("second time lucky")], faults=[forced]), [text("never")])
    scenario.turns[1].faults.append(refused)
    async with ScriptedServer(scenario) as srv:
        client = make(srv)
        turn = await client.stream_turn(TurnRequest(None, HI))
        assert turn.text == "second time lucky" and turn.attempts == 2
        history = [*HI, turn.to_message(), {"role": "user", "content": "again"}]
        with pytest.raises(ModelError, match="API error 503"):
            await client.stream_turn(TurnRequest(None, history))
        assert [r.turn for r in srv.requests] == [0, 0, 1]


async def test_an_unexpected_request_is_not_retried(make: Any) -> None:
    async with ScriptedServer(Scenario([])) as srv:
        with pytest.raises(ModelError, match="scripted server: unexpected request #1"):
            await make(srv).stream_turn(TurnRequest(None, HI))
        assert len(srv.requests) == 1


async def test_abort_mid_stream_returns_an_aborted_turn(make: Any) -> None:
    long_text = "word " * 200
    turn_spec = Turn(
        [tool_use("Read", {"file_path": "f"}, id="R"), text(long_text)], event_delay=0.01
    )
    async with ScriptedServer(Scenario.of(turn_spec)) as srv:
        abort = AbortSignal()
        deltas: list[str] = []

        def on_text(delta: str) -> None:
            deltas.append(delta)
            if len(deltas) == 3:
                abort.abort("user pressed Esc")

        turn = await make(srv).stream_turn(
            TurnRequest(None, HI), TurnCallbacks(on_text=on_text), abort=abort
        )
        assert len(srv.requests) == 1
    assert turn.aborted and not turn.partial
    assert turn.stop_reason == "tool_use"  # R was handed out: the loop must answer it
    assert turn.content[0]["id"] == "R"
    assert turn.content[1]["type"] == "text"
    assert long_text.startswith(turn.content[1]["text"]) and len(turn.content[1]["text"]) < len(
        long_text
    )
    assert len(deltas) == 3


async def test_abort_before_start_and_during_a_retry_wait(make: Any) -> None:
    async with ScriptedServer(
        Scenario.of(Turn([text("x")], faults=[rate_limit(retry_after="30")]))
    ) as srv:
        already = AbortSignal()
        already.abort()
        turn = await make(srv).stream_turn(TurnRequest(None, HI), abort=already)
        assert turn.aborted and turn.content == [] and srv.requests == []

        abort = AbortSignal()
        turn = await make(srv).stream_turn(
            TurnRequest(None, HI), TurnCallbacks(on_retry=lambda n: abort.abort()), abort=abort
        )
        assert turn.aborted and turn.error is not None and "rate limited" in turn.error
        assert len(srv.requests) == 1  # the 30 s wait was cut short, no second request


async def test_usage_and_cost_accounting(make: Any) -> None:
    scenario = Scenario.of(
        Turn([text("a")], input_tokens=1000, output_tokens=200, cache_creation_input_tokens=5000),
        Turn([text("b")], input_tokens=50, output_tokens=100, cache_read_input_tokens=5000),
    )
    session = SessionUsage()
    async with ScriptedServer(scenario) as srv:
        client = make(srv)
        history = list(HI)
        for _ in range(2):
            turn = await client.stream_turn(TurnRequest("sys", history))
            session.add(turn.model, turn.usage)
            history += [turn.to_message(), {"role": "user", "content": "more"}]
        srv.assert_done()
    assert session.turns == 2
    assert session.total == Usage(input=1050, output=300, cache_creation=5000, cache_read=5000)
    assert session.total.total_input == 11050
    # sonnet 4.5: $3 in, $15 out, $3.75 cache write, $0.30 cache read per million tokens
    expected = (1050 * 3 + 300 * 15 + 5000 * 3.75 + 5000 * 0.30) / 1e6
    assert session.cost_usd == pytest.approx(expected)
    assert session.cost_is_complete and session.by_model == {"claude-sonnet-4-5": session.total}


def test_cost_table_prefixes_and_unknown_models() -> None:
    million = Usage(input=1_000_000, output=1_000_000)
    assert cost_usd("claude-sonnet-4-5-20250929", million) == pytest.approx(18.0)
    assert cost_usd("claude-opus-4-1-20250805", million) == pytest.approx(90.0)
    assert cost_usd("claude-opus-4-5", million) == pytest.approx(30.0)
    assert estimate_cost("my-local-llama", million) == estimate_cost("other", Usage())
    assert not estimate_cost("my-local-llama", million).priced
    session = SessionUsage()
    session.add("my-local-llama", million)
    assert session.cost_usd == 0 and not session.cost_is_complete
    assert session.unpriced_models == {"my-local-llama"}
    assert Usage(1, 2, 3, 4) + Usage(10, 20, 30, 40) == Usage(11, 22, 33, 44)
    assert Usage.from_api({"input_tokens": 5, "cache_read_input_tokens": None}) == Usage(input=5)


def test_missing_api_key_message() -> None:
    with pytest.raises(MissingApiKey) as info:
        ModelConfig.resolve(env={})
    message = str(info.value)
    assert "ANTHROPIC_API_KEY" in message and "ANTHROPIC_BASE_URL" in message
    assert "nerve demo" in message


def test_config_resolution_order_and_aliases() -> None:
    env = {"ANTHROPIC_API_KEY": "sk-env", "ANTHROPIC_MODEL": "haiku"}
    assert ModelConfig.resolve(env=env).model == "claude-haiku-4-5"
    # ANTHROPIC_MODEL beats settings ``model``, as in Claude Code
    assert ModelConfig.resolve(env=env, settings_model="opus").model == "claude-haiku-4-5"
    assert (
        ModelConfig.resolve(env=env, settings_model="opus", cli_model="claude-x").model
        == "claude-x"
    )
    assert resolve_model(env={}) == DEFAULT_MODEL == "claude-sonnet-4-6"
    cfg = ModelConfig.resolve(env=env, api_key="sk-explicit")
    assert cfg.api_key == "sk-explicit" and "sk-explicit" not in repr(cfg)
    only_url = ModelConfig.resolve(env={"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    assert only_url.base_url == "http://127.0.0.1:9" and only_url.api_key is None  # no placeholder
    assert ModelConfig.resolve(env=env, settings_base_url="http://s").base_url == "http://s"


def test_assistant_turn_helpers() -> None:
    turn = AssistantTurn(
        content=[text("a"), {"type": "tool_use", "id": "t", "name": "X", "input": {}}, text("b")],
        stop_reason="tool_use",
    )
    assert turn.text == "ab" and [b["id"] for b in turn.tool_uses] == ["t"]
    assert turn.to_message() == {"role": "assistant", "content": turn.content}


def test_importing_the_package_does_not_load_the_sdk() -> None:
    code = (
        "import sys, agent_cli.model as m\n"
        "m.ModelConfig, m.SessionUsage, m.RetryPolicy\n"
        "print(sorted(k for k in sys.modules if k.split('.')[0] in ('anthropic', 'httpx2', 'httpx')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
