"""The cloud providers' forms of the Messages API, so the scripted server can play them too.

* Vertex AI: ``POST /projects/{project}/locations/{region}/publishers/anthropic/models/
  {model}:streamRawPredict`` (or ``:rawPredict``), the model in the path, not in the body; the
  answer is the same server-sent-event stream.
* Bedrock: ``POST /model/{model}/invoke-with-response-stream`` (or ``/invoke``); the answer is
  an AWS event stream (``application/vnd.amazon.eventstream``): binary frames whose JSON
  payload carries each API event base64-encoded under ``bytes``.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
import urllib.parse
from typing import Any

__all__ = ["BEDROCK_CONTENT_TYPE", "bedrock_frame", "cloud_route", "event_stream_frame"]

BEDROCK_CONTENT_TYPE = "application/vnd.amazon.eventstream"
_VERTEX = re.compile(
    r"^/projects/(?P<project>[^/]+)/locations/(?P<region>[^/]+)/publishers/anthropic/models/"
    r"(?P<model>[^/:]+):(?P<verb>streamRawPredict|rawPredict)$"
)
_BEDROCK = re.compile(r"^/model/(?P<model>[^/]+)/(?P<verb>invoke-with-response-stream|invoke)$")


def cloud_route(path: str, body: Any) -> tuple[str, Any, bool] | None:
    """``(provider, body with its model, streamed)`` for a cloud path; None for any other."""
    for provider, pattern, streamed in (
        ("vertex", _VERTEX, "streamRawPredict"),
        ("bedrock", _BEDROCK, "invoke-with-response-stream"),
    ):
        found = pattern.match(path)
        if found is None:
            continue
        model = urllib.parse.unquote(found["model"])
        full = {**body, "model": model} if isinstance(body, dict) else body
        return provider, full, found["verb"] == streamed
    return None


def event_stream_frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One AWS event-stream message: prelude, string headers, payload, CRC32s."""
    encoded = b"".join(
        struct.pack("!B", len(k)) + k.encode() + b"\x07" + struct.pack("!H", len(v)) + v.encode()
        for k, v in headers.items()
    )
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack("!II", total, len(encoded))
    head = prelude + struct.pack("!I", binascii.crc32(prelude))
    body = head + encoded + payload
    return body + struct.pack("!I", binascii.crc32(body))


def bedrock_frame(data: dict[str, Any]) -> bytes:
    """An API event as Bedrock streams it."""
    payload = json.dumps({"bytes": base64.b64encode(json.dumps(data).encode()).decode()})
    headers = {
        ":event-type": "chunk",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return event_stream_frame(headers, payload.encode())
