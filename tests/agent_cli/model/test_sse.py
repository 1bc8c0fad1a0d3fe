"""The server-sent-event reader (agent_cli.model.sse): lines cut anywhere, the spec's fields."""

from __future__ import annotations

import pytest

from agent_cli.model.sse import EventReader, LineSplitter, ServerSentEvent


def _lines(*chunks: str) -> list[str]:
    splitter = LineSplitter()
    return [line for chunk in chunks for line in splitter.feed(chunk)]


def _events(*chunks: str) -> list[ServerSentEvent]:
    reader = EventReader()
    found = (reader.line(line) for line in _lines(*chunks))
    return [sse for sse in found if sse is not None]


def _every_cut(text: str) -> list[tuple[str, ...]]:
    """``text`` whole, then cut in two at every place, then in single characters."""
    cuts: list[tuple[str, ...]] = [(text,)]
    cuts += [(text[:i], text[i:]) for i in range(1, len(text))]
    cuts.append(tuple(text))
    return cuts


@pytest.mark.parametrize("ending", ["\n", "\r", "\r\n"])
def test_each_line_ending_ends_a_line(ending: str) -> None:
    assert _lines(f"a{ending}b{ending}{ending}c") == ["a", "b", ""]


def test_mixed_endings_and_the_line_still_open_at_the_end() -> None:
    assert _lines("a\r\nb\rc\n\r\n\r\rd") == ["a", "b", "c", "", "", ""]  # "d": still open


@pytest.mark.parametrize(
    "text", ["a\r\nb\r\n\r\n", "x\ry\r\r", "p\nq\n\n", "e: 1\r\ndata: {}\r\n\r\n"]
)
def test_lines_do_not_depend_on_where_the_chunks_are_cut(text: str) -> None:
    whole = _lines(text)
    for cut in _every_cut(text):
        assert _lines(*cut) == whole, cut


def test_a_crlf_cut_between_its_two_halves_is_one_line_ending() -> None:
    assert _lines("data: a\r", "\ndata: b\r", "\n\r", "\n") == ["data: a", "data: b", ""]
    # a "\r" then a chunk that is only "\n", then an empty chunk: still one ending each
    assert _lines("a\r", "\n", "", "b\r", "", "\n") == ["a", "b"]
    # a lone "\r" followed by text is a line ending by itself
    assert _lines("a\r", "b\n") == ["a", "b"]


def test_a_line_cut_in_the_middle_is_joined() -> None:
    assert _lines("da", "ta: hel", "lo", "\n\n") == ["data: hello", ""]


def test_fields_make_an_event_and_a_blank_line_dispatches_it() -> None:
    events = _events('event: message_start\ndata: {"a": 1}\nid: 7\nretry: 3000\n\n')
    assert events == [ServerSentEvent("message_start", '{"a": 1}', "7", 3000)]


def test_multi_line_data_is_joined_with_newlines() -> None:
    assert _events("data: one\ndata:two\ndata\ndata:  four\n\n") == [
        ServerSentEvent(data="one\ntwo\n\n four")
    ]


def test_only_one_space_after_the_colon_is_dropped_and_a_field_may_have_no_colon() -> None:
    assert _events("event:ping\ndata\n\n") == [ServerSentEvent("ping", "")]
    assert _events("data:   x\n\n") == [ServerSentEvent(data="  x")]
    assert _events("data: a: b\n\n") == [ServerSentEvent(data="a: b")]


def test_comments_and_unknown_fields_are_ignored() -> None:
    text = ": keep-alive\n:\ndata: x\nfoo: bar\nDATA: y\nevents: z\n: more\n\n"
    assert _events(text) == [ServerSentEvent(data="x")]


def test_a_blank_line_with_nothing_read_dispatches_nothing() -> None:
    assert _events("\n\n: comment\n\n\r\n") == []


def test_the_event_state_is_reset_after_a_dispatch_but_not_the_last_id() -> None:
    events = _events("event: e\nid: 1\nretry: 5\ndata: a\n\ndata: b\n\n\n")
    assert events == [
        ServerSentEvent("e", "a", "1", 5),
        ServerSentEvent("", "b", "1", None),
        ServerSentEvent("", "", "1", None),  # the last id alone still dispatches (as httpx-sse)
    ]


def test_an_id_with_a_nul_and_a_retry_that_is_not_a_number_are_ignored() -> None:
    assert _events("id: 1\nid: a\0b\nretry: 9\nretry: soon\ndata: x\n\n") == [
        ServerSentEvent("", "x", "1", 9)
    ]


def test_without_the_trailing_blank_line_the_last_event_is_never_dispatched() -> None:
    assert _events("data: 1\n\ndata: 2\n") == [ServerSentEvent(data="1")]
    assert _events("data: 1\n\ndata: 2") == [ServerSentEvent(data="1")]
    # a "\r" ends its line at once (a "\n" after it would only be its other half)
    assert _events("data: 1\n\ndata: 2\n\r") == [
        ServerSentEvent(data="1"),
        ServerSentEvent(data="2"),
    ]


def test_a_whole_stream_cut_everywhere_gives_the_same_events() -> None:
    text = 'event: a\r\ndata: {"x": 1}\r\n\r\n: ping\r\nevent: b\rdata: 2\rdata: 3\r\r'
    whole = _events(text)
    assert whole == [ServerSentEvent("a", '{"x": 1}'), ServerSentEvent("b", "2\n3")]
    for cut in _every_cut(text):
        assert _events(*cut) == whole, cut
