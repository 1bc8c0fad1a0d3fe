"""Folding a transcript's user and assistant records into the messages of the conversation.

One message may be written as several records, and a file may hold a record twice:

* a streamed assistant message is recorded as ``streaming`` records (text so far and one
  tool_use, each written the moment the tool was handed out) followed by the complete message,
  all with one ``streamId`` (``agent_cli.loop.recorder``). They fold into one message; the
  complete record wins, and a tool_use only a streaming record names (the process died, or the
  final record lost a block) is kept, because that call may have run;
* Claude Code writes each content block of one API message as its own record sharing
  ``message.id``: those fold into one message too, without repeating a block, as long as only
  tool results came between them (an id seen again after a new prompt is a new message: a
  proxy or a test server may reuse ids across runs);
* a line copied twice (same ``uuid``) is read once.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from tools.records import datarecord

__all__ = ["MessageFolder"]


@datarecord
class MessageFolder:
    """Accumulates API-shaped messages from records, in file order (see module docstring)."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    duplicates: int = 0  # records skipped as repeats of a line already read
    _uuids: set[str] = field(default_factory=set)
    _streams: dict[str, int] = field(default_factory=dict)  # streamId -> message index
    _ids: dict[str, int] = field(default_factory=dict)  # assistant message.id -> message index

    def add(self, kind: str, rec: dict[str, Any]) -> bool:
        """Fold one user/assistant record in; False when it repeats a record already read."""
        rec_uuid = rec.get("uuid")
        if isinstance(rec_uuid, str) and rec_uuid:
            if rec_uuid in self._uuids:
                self.duplicates += 1
                return False
            self._uuids.add(rec_uuid)
        content = rec["message"]["content"]
        if kind == "assistant" and self._fold_assistant(rec, content):
            return True
        self.messages.append({"role": kind, "content": content})
        if kind == "assistant":
            self._remember(rec, len(self.messages) - 1)
        elif any(b.get("type") != "tool_result" for b in _blocks(content)):
            self._ids.clear()  # a new prompt: an id seen before it starts a new message
        return True

    def _remember(self, rec: dict[str, Any], index: int) -> None:
        stream = rec.get("streamId")
        if isinstance(stream, str) and stream:
            self._streams[stream] = index
            return
        msg_id = rec["message"].get("id")
        if isinstance(msg_id, str) and msg_id:
            self._ids[msg_id] = index

    def _fold_assistant(self, rec: dict[str, Any], content: Any) -> bool:
        """Merge into an earlier message of the same stream or API message; True if merged."""
        stream = rec.get("streamId")
        index: int | None = None
        if isinstance(stream, str) and stream in self._streams:
            index = self._streams[stream]
            before = _blocks(self.messages[index]["content"])
            if rec.get("streaming"):
                merged = _union(before, _blocks(content))
            else:
                # The complete message: its blocks in its order, plus any call only a
                # streaming record named.
                final = _blocks(content)
                known = {b.get("id") for b in final if b.get("type") == "tool_use"}
                lost = [b for b in before if b.get("type") == "tool_use" and b["id"] not in known]
                merged = final + lost
        elif isinstance(stream, str) and stream:
            return False  # the first record of a stream
        else:
            msg_id = rec["message"].get("id")
            if not (isinstance(msg_id, str) and msg_id in self._ids):
                return False
            index = self._ids[msg_id]
            merged = _union(_blocks(self.messages[index]["content"]), _blocks(content))
        self.messages[index] = {"role": "assistant", "content": merged}
        self._remember(rec, index)
        return True


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return [b for b in content if isinstance(b, dict)]


def _union(before: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``before`` then the blocks of ``new`` it does not already hold (a tool_use by its id)."""
    out = list(before)
    ids = {b.get("id") for b in before if b.get("type") == "tool_use"}
    for b in new:
        if b.get("type") == "tool_use":
            if b.get("id") in ids:
                continue
            ids.add(b.get("id"))
        elif b in out:
            continue
        out.append(b)
    return out
