"""How the scripted server writes a stream, and how it breaks one (``agent_cli.testing.faults``).

Kept apart from ``scripted_server`` (requests, plans, verdicts): here only bytes on a socket.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from typing import Any

from agent_cli.testing.events import Event
from agent_cli.testing.scenario import Fault

__all__ = ["Item", "chunk", "encode_event", "faulty_events", "wait_until_client_leaves"]

Item = Event | bytes  # an event, or raw bytes written as they are (one chunk)

_GARBAGE = b'this line is not an event\n{not json either\ndata: {"type": "content_blo\n\n'


def encode_event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def chunk(payload: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(payload), payload)


def _open_block(events: list[Event], upto: int) -> int:
    """The index of the block open after ``events[:upto]`` (0 when none is)."""
    open_index = 0
    for name, data in events[:upto]:
        if name == "content_block_start":
            open_index = data["index"]
    return open_index


def faulty_events(events: list[Event], fault: Fault | None) -> list[Item]:
    """The events with a ``malformed`` fault's defect put in (others: unchanged)."""
    if fault is None or fault.kind != "malformed":
        return list(events)
    at = min(fault.after_events, len(events))
    items: list[Item] = list(events)
    variant = fault.variant
    if variant == "bad_tool_json":
        target = fault.block
        out: list[Item] = []
        replaced = False
        for name, data in events:
            delta = data.get("delta", {})
            is_json = delta.get("type") == "input_json_delta"
            if is_json and (target is None or data.get("index") == target):
                target = data["index"]
                if replaced:
                    continue
                broken = {**delta, "partial_json": '{"file_path": oops, }'}
                out.append((name, {**data, "delta": broken}))
                replaced = True
                continue
            out.append((name, data))
        return out
    index = _open_block(events, at)
    defect: Item
    if variant == "bad_index":
        bad = {"type": "text_delta", "text": "x"}
        defect = ("content_block_delta", {"type": "content_block_delta", "index": 99, "delta": bad})
    elif variant == "no_delta":
        defect = ("content_block_delta", {"type": "content_block_delta", "index": index})
    elif variant == "second_start":
        defect = events[0]
    elif variant == "bad_utf8":
        head = json.dumps(
            {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta"}}
        )
        # a text delta whose bytes are not UTF-8 (\xff never is): spliced in after encoding
        defect = (
            b"event: content_block_delta\ndata: "
            + head[:-2].encode()
            + b', "text": "\xff\xfe"}}\n\n'
        )
    else:  # garbage
        defect = _GARBAGE
    items.insert(at, defect)
    return items


def wait_until_client_leaves(
    conn: socket.socket, deadline: float, stopping: threading.Event
) -> bool:
    """Block until the client closes the connection (True), the deadline or a stop (False)."""
    while time.monotonic() < deadline and not stopping.is_set():
        try:
            ready, _, _ = select.select([conn], [], [], 0.02)
            if ready and not conn.recv(1, socket.MSG_PEEK):
                return True
        except OSError:
            return True
    return False
