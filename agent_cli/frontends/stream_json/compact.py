"""A compaction in stream-json, as Claude Code writes it: a ``status`` frame when it starts
(``compacting``) and when it ends (status null, ``compact_result``), then on success a
``compact_boundary`` (trigger, tokens before and after, how long it took, the last message
before it) and the summary the conversation now starts with, as a ``user`` frame."""

from __future__ import annotations

import time
from typing import Any

from agent_cli.frontends.stream_json.result import now_iso

__all__ = ["CompactFrames"]


class CompactFrames:
    """Turns a session's ``CompactProgress`` events into frames through ``writer``."""

    def __init__(self, writer: Any) -> None:
        self.writer = writer
        self._started = 0.0
        self._pre = 0
        self._parent: str | None = None
        self.running = False  # between the start and the end of a compaction

    def progress(self, event: Any) -> None:
        w = self.writer
        if event.stage == "started":
            self.running = True
            self._started = time.perf_counter()
            self._pre = int(event.tokens)
            # the last record before the boundary (the transcript's, else the last message's)
            transcript = getattr(w.session, "transcript", None)
            messages = w.session.loop.messages
            last = messages[-1].get("_uuid") if messages else None
            self._parent = getattr(transcript, "last_uuid", None) or last
            w.system("status", status="compacting", written_at=now_iso())
            return
        if not event.final:
            return
        self.running = False
        result = "success" if event.stage == "done" else "failed"
        w.system("status", status=None, compact_result=result, written_at=now_iso())
        if event.stage != "done":
            return
        w.ensure_init()
        metadata = {
            "trigger": event.trigger,
            "pre_tokens": self._pre,
            "post_tokens": int(event.tokens),
            "duration_ms": int((time.perf_counter() - self._started) * 1000),
        }
        w.system(
            "compact_boundary",
            compact_metadata=metadata,
            logical_parent_uuid=self._parent,
            written_at=now_iso(),
        )
        messages = w.session.loop.messages
        if messages and messages[0].get("role") == "user":  # the summary it continues from
            clean = {k: v for k, v in messages[0].items() if not k.startswith("_")}
            fields = {"parent_tool_use_id": None, "timestamp": now_iso()}
            w.write(w.frame("user", message=clean, **fields, isReplay=False, isSynthetic=True))
