"""Wire faults beyond HTTP errors, in-stream errors and cuts: the ways a stream really breaks.

Each builds a ``Fault`` the scripted server plays on one request (``agent_cli.testing.wire``):

* ``cut_mid_chunk(n)``: after ``n`` whole events, half of the next chunk, then the socket closes.
* ``eof(n)``: a close-delimited body (no chunked encoding) that ends cleanly after ``n``
  events, without ``message_stop``: only the missing ``message_stop`` says it is not an answer.
* ``hang_before_headers()`` / ``hang_after_headers(n)``: the server goes silent (before any
  byte, or after the headers and ``n`` events) until the client gives up and closes.
* ``slow(delay)``: the whole turn, ``delay`` seconds between events (the turn is served).
* ``malformed(variant, n)``: after ``n`` events a defect the protocol forbids, then the rest:
  ``bad_index`` (a delta for block 99), ``no_delta`` (a delta without body),
  ``second_start`` (another ``message_start``), ``bad_utf8`` (a text delta with bytes that are
  not UTF-8), ``garbage`` (lines that are not events; survivable, the turn is served),
  ``bad_tool_json`` (block ``block``'s tool input is not JSON; the turn is served).
"""

from __future__ import annotations

from agent_cli.testing.scenario import Fault

__all__ = [
    "MALFORMED_VARIANTS",
    "cut_mid_chunk",
    "eof",
    "hang_after_headers",
    "hang_before_headers",
    "malformed",
    "slow",
]

MALFORMED_VARIANTS = (
    "bad_index",
    "no_delta",
    "second_start",
    "bad_utf8",
    "garbage",
    "bad_tool_json",
)
# These leave the stream whole: the client keeps the answer, so the turn counts as served.
_SERVED = ("garbage", "bad_tool_json")


def cut_mid_chunk(after_events: int = 3, *, consumes_turn: bool = False) -> Fault:
    return Fault("cut_mid_chunk", after_events=after_events, consumes_turn=consumes_turn)


def eof(after_events: int = 3, *, consumes_turn: bool = False) -> Fault:
    return Fault("eof", after_events=after_events, consumes_turn=consumes_turn)


def hang_before_headers(*, limit: float = 30.0) -> Fault:
    return Fault("hang_before_headers", delay=limit)


def hang_after_headers(
    after_events: int = 3, *, limit: float = 30.0, consumes_turn: bool = False
) -> Fault:
    return Fault(
        "hang_after_headers", after_events=after_events, delay=limit, consumes_turn=consumes_turn
    )


def slow(delay: float = 0.05) -> Fault:
    return Fault("slow", delay=delay, consumes_turn=True)


def malformed(
    variant: str, after_events: int = 3, *, block: int | None = None, consumes_turn: bool = False
) -> Fault:
    if variant not in MALFORMED_VARIANTS:
        raise ValueError(f"unknown malformed variant {variant!r}; known: {MALFORMED_VARIANTS}")
    return Fault(
        "malformed",
        variant=variant,
        after_events=after_events,
        block=block,
        consumes_turn=consumes_turn or variant in _SERVED,
    )
