"""``--output-format stream-json``: Claude Code's frames, one JSON object a line.

Field for field as Claude Code 2.1 writes them (``tests/agent_cli/frontends/
test_stream_json_schema.py`` compares every kind with a capture of the real CLI):
``system``/``init`` at the start of each turn, an ``assistant`` frame per content block of each
model message (same message id, ``stop_reason`` null, as Claude Code writes each block when it
completes), ``system``/``permission_denied`` and a ``user`` frame per tool result (with
``tool_use_result`` and ``tool_result_meta``), ``system``/``api_retry`` per retry announced, an
API error that ended the turn as Claude Code's synthetic ``assistant`` message, with
``--include-partial-messages`` a ``system``/``status`` frame per request and a ``stream_event``
per raw API event (message_start, content_block_start/delta/stop of every delta kind,
message_delta, message_stop; not the keep-alive pings) before the ``assistant`` frames they
build, and one ``result`` at the end of the turn (``stream_json.result``). Every frame carries
``session_id`` and ``uuid``; frames of the main conversation have ``parent_tool_use_id: null``.

The frames come from the loop's recorder (``agent_cli.loop.recorder.TurnRecorder``): it is told
of each message as it joins the conversation, in order, the moment it does — an assistant
message that asked for a slow tool is out before the tool ends. The writer wraps the session's
recorder methods (it keeps calling the originals) and the model port (to time the API calls and
see the raw events: the result's first-token timings, the partial messages).
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TextIO

from agent_cli import __version__
from agent_cli.frontends.stream_json.compact import CompactFrames
from agent_cli.frontends.stream_json.parts import (
    model_usage_zero,
    permission_decision,
    result_text,
    sandbox_enabled,
    served_by_anthropic,
    server_status,
)
from agent_cli.frontends.stream_json.result import (
    EarlierResults,
    api_error_category,
    model_usage,
    now_iso,
    result_frame,
    result_subtype,
)
from agent_cli.loop.events import AgentEvent, CompactProgress, ErrorEvent, RetryEvent
from agent_cli.loop.turn_context import usage_dict
from agent_cli.model.turn import TurnCallbacks, TurnRequest
from agent_cli.slash.names import PRINT_COMMANDS

__all__ = ["StreamJsonWriter", "model_usage", "result_frame", "result_subtype"]


def _plain(value: Any) -> Any:
    """``value`` if it is plain JSON already, else None (the frame leaves the field out)."""
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return None
    return value


class _TimedModel:
    """The session's model port, timing each call (``duration_api_ms``); with ``on_event`` it
    also hands each raw API event of the main conversation's calls on (partial messages), after
    ``on_request`` is told a call starts."""

    def __init__(
        self,
        inner: Any,
        on_event: Callable[[Any], None] | None = None,
        on_request: Callable[[], None] | None = None,
    ) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.on_event = on_event
        self.on_request = on_request
        self.started = 0.0  # when the current call began

    async def stream_turn(
        self, request: TurnRequest, callbacks: TurnCallbacks | None = None, **kwargs: Any
    ) -> Any:
        self.started = started = time.perf_counter()
        if self.on_event is not None:
            if self.on_request is not None:
                self.on_request()
            callbacks = replace(callbacks or TurnCallbacks(), on_event=self.on_event)
        try:
            return await self.inner.stream_turn(request, callbacks, **kwargs)
        finally:
            self.seconds += time.perf_counter() - started

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class StreamJsonWriter:
    """Writes a session's frames to ``out`` (see module docstring). ``attach`` once.
    ``frames=False`` (``--output-format json``): only the timing and the ``result`` object."""

    def __init__(self, out: TextIO, *, partial: bool = False, frames: bool = True) -> None:
        self.out = out
        self.partial = partial and frames
        self.frames = frames
        self.session: Any = None
        self._timer: _TimedModel | None = None
        self._lock = threading.Lock()  # frames are whole lines even if a thread writes one
        self._init_sent = False
        self._sent_results: set[str] = set()
        self._outcomes: dict[str, Any] = {}
        self._api_base = 0.0
        self._message_id: str | None = None  # the API message the raw events belong to
        self.original_cwd = os.getcwd()
        self._turn_started = time.perf_counter()
        self._timings: dict[str, int] = {}  # the turn's time to first request, event, token
        self._begun: list[str] = []  # API message ids the turn's partial messages began
        self._compact = CompactFrames(self)
        self.results = 0  # result frames written (``result_index``)
        self.last_usage: dict[str, dict[str, Any]] | None = None  # modelUsage at the last one

    # -- wiring ---------------------------------------------------------------------------------

    def attach(self, session: Any) -> None:
        self.session = session
        loop = session.loop
        self._timer = _TimedModel(loop.model, self._on_event, self._requesting)
        loop.model = self._timer
        if not self.frames:
            return
        hooks = session.ctx.hooks
        if hooks is not None and hasattr(hooks, "observer"):
            hooks.observer = self._hook_seen
        rec = loop.recorder
        self._wrap(rec, "user", lambda *a, **k: self._user_recorded())
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
        self._turn_started = time.perf_counter()
        self._timings = {}
        self._begun = []
        self._api_base = self._timer.seconds if self._timer is not None else 0.0

    @property
    def api_ms(self) -> int:
        """Milliseconds spent in model calls since ``begin_turn``."""
        spent = (self._timer.seconds if self._timer is not None else 0.0) - self._api_base
        return int(spent * 1000)

    def event(self, event: AgentEvent) -> None:
        """Events that are frames of their own (the messages come from the recorder)."""
        if not self.frames:
            return
        if isinstance(event, RetryEvent):
            self.write(
                self._frame(
                    "system",
                    subtype="api_retry",
                    attempt=event.attempt,
                    max_retries=max(event.max_attempts - 1, 0),
                    retry_delay_ms=int(event.delay_s * 1000),
                    error_status=event.status,
                    error=api_error_category(event.status, event.error_type),
                    written_at=now_iso(),
                )
            )
        elif isinstance(event, ErrorEvent) and event.status is not None:
            self._api_error_message(event)
        elif isinstance(event, CompactProgress):
            self._compact.progress(event)

    def result_frame(self, finished: Any, *, duration_ms: int, **fields: Any) -> dict[str, Any]:
        """This turn's ``result`` (``stream_json.result.result_frame``) with the writer's
        counters: its index among the session's results and the usage since the last one."""
        frame = result_frame(
            self.session,
            finished,
            duration_ms=duration_ms,
            duration_api_ms=self.api_ms,
            earlier=EarlierResults(self.results, self.last_usage),
            **fields,
        )
        self.results += 1
        self.last_usage = frame["modelUsage"]
        if frame["subtype"] == "success" and frame["api_error_status"] is None:
            frame.update(self._timings)  # as Claude Code: on an answered turn's result
        if self.partial:
            frame["begun_message_ids"] = list(self._begun)
        return frame

    def finish(self, frame: dict[str, Any]) -> None:
        if self.frames:
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
        servers = [{"name": v.name, "status": server_status(v.status)} for v in s.mcp_servers()]
        env = s.ctx.options.environ or os.environ
        commands = [] if s.commands is None else list(s.commands.commands.values())
        return self._frame(
            "system",
            subtype="init",
            cwd=str(s.cwd),
            tools=tools,
            mcp_servers=servers,
            model=s.model,
            permissionMode=s.mode,
            # what `/` can run here: the custom commands and skills, then the built-ins
            slash_commands=[
                *(getattr(c, "name", str(c)) for c in s.custom_commands()),
                *PRINT_COMMANDS,
            ],
            apiKeySource="ANTHROPIC_API_KEY" if env.get("ANTHROPIC_API_KEY") else "none",
            claude_code_version=__version__,
            output_style="default",
            agents=[getattr(d, "name", str(d)) for d in s.agent_definitions()],
            skills=sorted(c.name for c in commands if c.kind == "skill"),
            plugins=[],  # Nerve loads no plugins
            capabilities=[],  # none of Claude Code's protocol extensions (interrupt receipts...)
            analytics_disabled=True,  # Nerve sends no analytics
            product_feedback_disabled=True,
            served_by_anthropic=served_by_anthropic(s),
            sandbox_enabled=sandbox_enabled(s),
            original_cwd=self.original_cwd,
            additional_directories=[str(d) for d in s.ctx.permissions.additional_dirs],
            fast_mode_state="off",  # Nerve has no fast mode
            ultrathink_available=False,
            ultrathink_typed_raises=False,
            view_mode="default",
            written_at=now_iso(),
        )

    def _user_recorded(self) -> None:
        """A user message joined: the turn's ``init`` goes out first, unless a compaction is
        under way (Claude Code writes its status frames, then ``init`` with the boundary)."""
        if not self._compact.running:
            self._ensure_init()

    def ensure_init(self) -> None:
        """The turn's ``init`` frame, unless it is out already."""
        self._ensure_init()

    def frame(self, kind: str, **fields: Any) -> dict[str, Any]:
        """A frame of ``kind`` with the session id and a fresh uuid (not written)."""
        return self._frame(kind, **fields)

    def _ensure_init(self) -> None:
        if not self._init_sent:
            self._init_sent = True
            self.write(self.init_frame())

    def _hook_seen(self, event: str, label: str, run_id: str, effect: Any) -> None:
        """A SessionStart hook starts or ends: Claude Code's ``hook_started`` and
        ``hook_response`` frames (it writes them for that event only, before ``init``)."""
        if event != "SessionStart":
            return
        fields: dict[str, Any] = {"hook_id": run_id, "hook_name": label, "hook_event": event}
        if effect is None:
            self.system("hook_started", **fields, written_at=now_iso())
            return
        process = getattr(effect, "process", None)
        stdout = str(getattr(process, "stdout", "") or "")
        stderr = str(getattr(process, "stderr", "") or "")
        code = getattr(process, "exit_code", 0) if process is not None else 0
        failed = code != 0 or bool(getattr(effect, "system_messages", None))
        self.system(
            "hook_response",
            **fields,
            output=stdout + stderr,
            stdout=stdout,
            stderr=stderr,
            exit_code=code if code is not None else 1,
            outcome="error" if failed else "success",
            written_at=now_iso(),
        )

    def _requesting(self) -> None:
        """A model request starts: timed; with partial messages Claude Code's ``status``."""
        self._mark("time_to_request_ms")
        if self.partial:
            self._ensure_init()
            self.write(
                self._frame("system", subtype="status", status="requesting", written_at=now_iso())
            )

    def _mark(self, name: str) -> None:
        if name not in self._timings:
            self._timings[name] = int((time.perf_counter() - self._turn_started) * 1000)

    def _on_event(self, event: Any) -> None:
        """Every raw API event of the main conversation: the turn's first-token timings, and
        with partial messages a ``stream_event`` frame."""
        self._mark("ttft_stream_ms")
        kind = event.get("type") if isinstance(event, dict) else None
        if kind == "content_block_delta":
            self._mark("ttft_ms")
            self._mark("first_content_frame_ms")
        if self.partial:
            self._raw_event(event)

    def _raw_event(self, event: Any) -> None:
        """One raw API event as a ``stream_event`` frame, the moment it arrives."""
        raw = dict(event)
        if raw.get("type") == "ping":  # Claude Code passes the API's keep-alives on to no one
            return
        self._ensure_init()
        extra: dict[str, Any] = {}
        if raw.get("type") == "message_start":
            message = raw.get("message")
            self._message_id = message.get("id") if isinstance(message, dict) else None
            if self._message_id:
                self._begun.append(self._message_id)
            started = self._timer.started if self._timer is not None else time.perf_counter()
            extra["ttft_ms"] = int((time.perf_counter() - started) * 1000)
        self.write(
            self._frame(
                "stream_event",
                event=raw,
                parent_tool_use_id=None,
                **extra,
                api_message_id=self._message_id,
            )
        )

    def _assistant(self, message: dict[str, Any], turn: Any) -> None:
        """One ``assistant`` frame per content block, as Claude Code writes them: the same
        message id on each, ``stop_reason`` null (it writes each block as it completes, before
        the message's end; the ``result`` has the stop reason)."""
        self._ensure_init()
        message_id = turn.message_id or f"msg_{uuid.uuid4().hex[:24]}"
        blocks = [{k: v for k, v in b.items() if not k.startswith("_")} for b in message["content"]]
        parts: list[list[dict[str, Any]]] = [[b] for b in blocks] or [[]]
        for part in parts:
            body = {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": turn.model or self.session.model,
                "content": part,
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage_dict(turn.usage),
                "context_management": None,
            }
            fields: dict[str, Any] = {"parent_tool_use_id": None, "timestamp": now_iso()}
            if getattr(turn, "request_id", None):
                fields["request_id"] = turn.request_id
            self.write(self._frame("assistant", message=body, **fields))

    def _api_error_message(self, event: ErrorEvent) -> None:
        """The API error that ends a turn, as Claude Code reports it: a synthetic assistant
        message saying it (its ``result`` says it too)."""
        self._ensure_init()
        zero = model_usage_zero()
        body = {
            "id": str(uuid.uuid4()),
            "type": "message",
            "role": "assistant",
            "model": "<synthetic>",
            "content": [{"type": "text", "text": event.message}],
            "stop_reason": "stop_sequence",
            "stop_sequence": "",
            "stop_details": None,
            "container": None,
            "diagnostics": None,
            "usage": zero,
            "context_management": None,
        }
        fields = {
            "message": body,
            "parent_tool_use_id": None,
            "timestamp": now_iso(),
            "error": api_error_category(event.status, event.error_type),
            "is_api_error_message": True,
            "api_error_status": event.status,
            "api_error_type": event.error_type,
        }
        if event.request_id:
            fields["request_id"] = event.request_id
        self.write(self._frame("assistant", **fields))

    def _result_seen(self, outcome: Any) -> None:
        self._outcomes[outcome.tool_use_id] = outcome
        verdict = getattr(outcome, "verdict", None)
        if verdict is not None and not getattr(verdict, "allowed", True):
            self._ensure_init()
            self.system(
                "permission_denied",
                tool_name=outcome.tool_name,
                tool_use_id=outcome.tool_use_id,
                message=result_text(outcome.tool_result),
                written_at=now_iso(),
            )

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
            outcome = self._outcomes.pop(tool_use_id, None)
            output = _plain(getattr(outcome, "output", None))
            if output is None:  # Claude Code's: the text, "Error: ..." for a failed call
                text = result_text(clean)
                output = f"Error: {text}" if clean.get("is_error") else text
            fields: dict[str, Any] = {
                "message": {"role": "user", "content": [clean]},
                "parent_tool_use_id": None,
                "timestamp": now_iso(),
                "tool_use_result": output,
            }
            if outcome is not None:
                meta: dict[str, Any] = {
                    "id": tool_use_id,
                    "permission_decision": permission_decision(outcome),
                }
                stopped = bool(getattr(outcome, "cancelled", False))  # interrupted while running
                if stopped or meta["permission_decision"]["decision"] != "accept":
                    meta["non_execution_kind"] = "user-rejected"  # Claude Code's word for both
                fields["tool_result_meta"] = [meta]
                # Nerve's own field (the SDK ignores it)
                fields["duration_ms"] = int(getattr(outcome, "duration_ms", 0) or 0)
            self.write(self._frame("user", **fields))
