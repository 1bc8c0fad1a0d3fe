"""``--output-format stream-json``: Claude Code's message schema, one JSON object a line.

What the Agent SDK parses (``claude_agent_sdk/_internal/message_parser.py``): ``system``/``init``
at the start of each turn, an ``assistant`` frame per model message (its content blocks, model,
id, usage, stop reason), a ``user`` frame per tool result, ``system``/``api_retry`` per retry
announced, with ``--include-partial-messages`` a ``stream_event`` per raw API event (message_start,
content_block_start/delta/stop of every delta kind, message_delta, message_stop) before the
``assistant`` frame they build, and one ``result`` at the end of the turn. Every frame carries ``session_id`` and ``uuid``; frames of the main
conversation have ``parent_tool_use_id: null``.

The frames come from the loop's recorder (``agent_cli.loop.recorder.TurnRecorder``): it is told
of each message as it joins the conversation, in order, the moment it does — an assistant
message that asked for a slow tool is out before the tool ends. The writer wraps the session's
recorder methods (it keeps calling the originals) and the model port (to time the API calls).
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, TextIO

from agent_cli import __version__
from agent_cli.loop.events import AgentEvent, RetryEvent, TurnFinished
from agent_cli.loop.turn_context import usage_dict

__all__ = ["StreamJsonWriter", "result_frame", "result_subtype"]

_SUBTYPES = {
    "max_turns": "error_max_turns",
    "max_budget": "error_max_budget_usd",
    "error": "error_during_execution",
    "aborted": "error_during_execution",
    "blocked": "error_during_execution",
}


def result_subtype(stop_reason: str) -> str:
    return _SUBTYPES.get(stop_reason, "success")


def _plain(value: Any) -> Any:
    """``value`` if it is plain JSON already, else None (the frame leaves the field out)."""
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return None
    return value


def result_frame(
    session: Any,
    finished: TurnFinished,
    *,
    duration_ms: int,
    duration_api_ms: int,
    errors: list[str],
) -> dict[str, Any]:
    """The ``result`` object (also the whole output of ``--output-format json``)."""
    is_error = finished.is_error or finished.stop_reason in ("max_turns", "aborted", "max_budget")
    usage = session.loop.usage
    frame: dict[str, Any] = {
        "type": "result",
        "subtype": result_subtype(finished.stop_reason),
        "is_error": is_error,
        "duration_ms": duration_ms,
        "duration_api_ms": duration_api_ms,
        "num_turns": finished.num_turns,
        "result": finished.result_text,
        "stop_reason": finished.stop_reason,
        "session_id": session.session_id,
        "total_cost_usd": round(usage.cost_usd, 6),
        "usage": finished.usage,
        "modelUsage": {
            model: {
                "inputTokens": u.input,
                "outputTokens": u.output,
                "cacheReadInputTokens": u.cache_read,
                "cacheCreationInputTokens": u.cache_creation,
            }
            for model, u in usage.by_model.items()
        },
        "permission_denials": session.loop.permission_denials,
        "uuid": str(uuid.uuid4()),
    }
    if errors:
        frame["errors"] = errors
    return frame


class _TimedModel:
    """The session's model port, timing each call (``duration_api_ms``); with ``on_event`` it
    also hands each raw API event of the main conversation's calls on (partial messages)."""

    def __init__(self, inner: Any, on_event: Callable[[Any], None] | None = None) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.on_event = on_event

    async def stream_turn(self, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        if self.on_event is not None:
            kwargs["on_event"] = self.on_event
        try:
            return await self.inner.stream_turn(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - started

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class StreamJsonWriter:
    """Writes a session's frames to ``out`` (see module docstring). ``attach`` once."""

    def __init__(self, out: TextIO, *, partial: bool = False) -> None:
        self.out = out
        self.partial = partial
        self.session: Any = None
        self._timer: _TimedModel | None = None
        self._lock = threading.Lock()  # frames are whole lines even if a thread writes one
        self._init_sent = False
        self._sent_results: set[str] = set()
        self._outputs: dict[str, Any] = {}
        self._durations: dict[str, int] = {}
        self._api_base = 0.0

    # -- wiring ---------------------------------------------------------------------------------

    def attach(self, session: Any) -> None:
        self.session = session
        loop = session.loop
        self._timer = _TimedModel(loop.model, self._raw_event if self.partial else None)
        loop.model = self._timer
        rec = loop.recorder
        self._wrap(rec, "user", lambda *a, **k: self._ensure_init())
        self._wrap(rec, "assistant", lambda message, turn, model: self._assistant(message, turn))
        self._wrap(rec, "result", lambda outcome: self._result_seen(outcome))
        self._wrap(rec, "batch_state", lambda ctx: self._tool_results())

    @staticmethod
    def _wrap(target: Any, name: str, after: Callable[..., None]) -> None:
        original = getattr(target, name)

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            value = original(*args, **kwargs)
            after(*args, **kwargs)
            return value

        setattr(target, name, wrapped)

    # -- per turn -------------------------------------------------------------------------------

    def begin_turn(self) -> None:
        """A new turn: its ``init`` frame goes out before its first message."""
        self._init_sent = False
        self._api_base = self._timer.seconds if self._timer is not None else 0.0

    @property
    def api_ms(self) -> int:
        """Milliseconds spent in model calls since ``begin_turn``."""
        spent = (self._timer.seconds if self._timer is not None else 0.0) - self._api_base
        return int(spent * 1000)

    def event(self, event: AgentEvent) -> None:
        """Events that are frames of their own (the messages come from the recorder)."""
        if isinstance(event, RetryEvent):
            self.write(
                self._frame(
                    "system",
                    subtype="api_retry",
                    attempt=event.attempt,
                    retry_delay_ms=int(event.delay_s * 1000),
                    error=event.reason,
                )
            )

    def finish(self, frame: dict[str, Any]) -> None:
        self._ensure_init()
        self._tool_results()
        self.write(frame)

    # -- frames ---------------------------------------------------------------------------------

    def write(self, frame: dict[str, Any]) -> None:
        line = json.dumps(frame, default=str)
        with self._lock:
            self.out.write(line + "\n")
            self.out.flush()

    def system(self, subtype: str, **fields: Any) -> None:
        """Write a ``system`` frame of ``subtype`` (e.g. a background task's lifecycle)."""
        self.write(self._frame("system", subtype=subtype, **fields))

    def _frame(self, kind: str, **fields: Any) -> dict[str, Any]:
        return {
            "type": kind,
            **fields,
            "session_id": self.session.session_id,
            "uuid": str(uuid.uuid4()),
        }

    def init_frame(self) -> dict[str, Any]:
        s = self.session
        tools = [t.name for t in s.ctx.options.tools]
        servers = [{"name": v.name, "status": v.status} for v in s.mcp_servers()]
        env = s.ctx.options.environ or os.environ
        return self._frame(
            "system",
            subtype="init",
            cwd=str(s.cwd),
            tools=tools,
            mcp_servers=servers,
            model=s.model,
            permissionMode=s.mode,
            slash_commands=[getattr(c, "name", str(c)) for c in s.custom_commands()],
            apiKeySource="ANTHROPIC_API_KEY" if env.get("ANTHROPIC_API_KEY") else "none",
            claude_code_version=__version__,
            output_style="default",
            agents=[getattr(d, "name", str(d)) for d in s.agent_definitions()],
            skills=[],
            plugins=[],
        )

    def _ensure_init(self) -> None:
        if not self._init_sent:
            self._init_sent = True
            self.write(self.init_frame())

    def _raw_event(self, event: Any) -> None:
        """One raw API event as a ``stream_event`` frame, the moment it arrives."""
        self._ensure_init()
        self.write(self._frame("stream_event", event=dict(event), parent_tool_use_id=None))

    def _assistant(self, message: dict[str, Any], turn: Any) -> None:
        self._ensure_init()
        body = {
            "id": turn.message_id or f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": turn.model or self.session.model,
            "content": [
                {k: v for k, v in b.items() if not k.startswith("_")} for b in message["content"]
            ],
            "stop_reason": turn.stop_reason,
            "stop_sequence": None,
            "usage": usage_dict(turn.usage),
        }
        self.write(self._frame("assistant", message=body, parent_tool_use_id=None))

    def _result_seen(self, outcome: Any) -> None:
        output = _plain(getattr(outcome, "output", None))
        if output is not None:
            self._outputs[outcome.tool_use_id] = output
        self._durations[outcome.tool_use_id] = int(getattr(outcome, "duration_ms", 0) or 0)

    def _tool_results(self) -> None:
        """One ``user`` frame per tool result that joined the conversation since the last."""
        pending: list[dict[str, Any]] = []
        for message in reversed(self.session.loop.messages):
            if message.get("role") == "assistant":
                break
            content = message.get("content")
            if message.get("role") != "user" or not isinstance(content, list):
                continue
            for block in reversed(content):
                if not isinstance(block, dict) or block.get("type") != "tool_result":
                    continue
                if block.get("tool_use_id") in self._sent_results:
                    continue
                pending.append(block)
        for block in reversed(pending):
            tool_use_id = str(block.get("tool_use_id"))
            self._sent_results.add(tool_use_id)
            clean = {k: v for k, v in block.items() if not k.startswith("_")}
            fields: dict[str, Any] = {
                "message": {"role": "user", "content": [clean]},
                "parent_tool_use_id": None,
            }
            if tool_use_id in self._outputs:
                fields["tool_use_result"] = self._outputs.pop(tool_use_id)
            if tool_use_id in self._durations:  # Nerve's own field (the SDK ignores it)
                fields["duration_ms"] = self._durations.pop(tool_use_id)
            self.write(self._frame("user", **fields))
