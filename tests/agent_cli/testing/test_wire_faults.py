"""The scripted server's wire faults, seen from a plain HTTP client (no Nerve code reading)."""

from __future__ import annotations

import base64
import json

import httpx
import pytest

from agent_cli.testing import (
    Scenario,
    ScriptedServer,
    Turn,
    cut_mid_chunk,
    eof,
    hang_before_headers,
    malformed,
    text,
)
from agent_cli.testing.clouds import bedrock_frame

BODY = {
    "model": "m",
    "max_tokens": 5,
    "stream": True,
    "messages": [{"role": "user", "content": "x"}],
}


def _post(srv: ScriptedServer, timeout: float = 10.0) -> httpx.Response:
    return httpx.post(f"{srv.base_url}/v1/messages", json=BODY, timeout=timeout)


def test_eof_is_a_clean_close_delimited_body_without_message_stop() -> None:
    with ScriptedServer(
        Scenario.of(Turn([text("hello there")], faults=[eof(3)]), [text("b")])
    ) as srv:
        response = _post(srv)
    assert response.status_code == 200 and "transfer-encoding" not in response.headers
    assert response.headers["connection"] == "close"
    names = [line[7:] for line in response.text.splitlines() if line.startswith("event: ")]
    assert names == ["message_start", "ping", "content_block_start"]


def test_cut_mid_chunk_breaks_the_chunked_encoding() -> None:
    with ScriptedServer(Scenario.of(Turn([text("hello")], faults=[cut_mid_chunk(2)]))) as srv:
        with pytest.raises(httpx.RemoteProtocolError):
            _post(srv)


def test_a_hang_before_headers_ends_when_the_client_leaves() -> None:
    with ScriptedServer(Scenario.of(Turn([text("x")], faults=[hang_before_headers()]))) as srv:
        with pytest.raises(httpx.ReadTimeout):
            _post(srv, timeout=0.3)
        srv.stop()
    assert "#1 hang" in srv.marks and "#1 client went away" in srv.marks


@pytest.mark.parametrize(
    "variant", ["bad_index", "no_delta", "second_start", "bad_utf8", "garbage"]
)
def test_malformed_streams_carry_their_defect(variant: str) -> None:
    with ScriptedServer(Scenario.of(Turn([text("hello")], faults=[malformed(variant, 4)]))) as srv:
        raw = _post(srv).content
    assert raw.count(b"event: message_stop") == 1  # the rest of the stream follows the defect
    defects = {
        "bad_index": b'"index": 99',
        "no_delta": b'data: {"type": "content_block_delta", "index": 0}\n',
        "second_start": None,
        "bad_utf8": b"\xff\xfe",
        "garbage": b"this line is not an event",
    }
    if variant == "second_start":
        assert raw.count(b"event: message_start") == 2
    else:
        assert defects[variant] in raw


def test_a_bedrock_frame_decodes_with_botocore() -> None:
    eventstream = pytest.importorskip("botocore.eventstream")
    event = {"type": "message_stop"}
    buffer = eventstream.EventStreamBuffer()
    buffer.add_data(bedrock_frame(event))
    (message,) = list(buffer)
    assert message.headers[":event-type"] == "chunk"
    assert json.loads(base64.b64decode(json.loads(message.payload)["bytes"])) == event
