"""Server-sent events (``text/event-stream``), read as the WHATWG spec reads them.

Two small steps, each fed as the body arrives: ``LineSplitter`` turns decoded text, cut
anywhere, into whole lines (ended by ``\\r\\n``, ``\\r`` or ``\\n`` and nothing else; a ``\\r``
at the end of a chunk may be half of a ``\\r\\n``, so the ``\\n`` opening the next one is not a
second, blank line); ``EventReader`` turns lines into ``ServerSentEvent``s: ``event``, ``data``
(several ``data`` lines joined by ``\\n``), ``id`` (kept across events, ignored if it holds a
NUL), ``retry`` (an integer, else ignored); a line starting with ``:`` is a comment, an unknown
field is ignored, one space after the colon is dropped, and a blank line dispatches the event.
A last line without its line ending, and an event without its blank line, are never dispatched
(the spec discards them at the end of the stream). The behaviour of httpx-sse's decoders, which
the first-party transport (``agent_cli.model.http_transport``) used before; written here so it
does not import httpx.
"""

from __future__ import annotations

from tools.records import datarecord

__all__ = ["FIELDS", "EventReader", "LineSplitter", "ServerSentEvent"]

FIELDS = frozenset({"event", "data", "id", "retry"})


@datarecord(frozen=True, slots=True)
class ServerSentEvent:
    """One dispatched event; ``event`` is ``""`` when the stream named none (a "message")."""

    event: str = ""
    data: str = ""
    id: str = ""
    retry: int | None = None


class LineSplitter:
    """Text cut anywhere in, whole lines (without their endings) out."""

    def __init__(self) -> None:
        self._partial = ""  # the start of a line whose ending has not arrived
        self._after_cr = False  # the last chunk ended in "\r": a "\n" now is its other half

    def feed(self, text: str) -> list[str]:
        """The lines ``text`` completes, in order."""
        if self._after_cr and text.startswith("\n"):
            text = text[1:]
        if not text:
            return []
        self._after_cr = text.endswith("\r")
        joined = self._partial + text
        lines = joined.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        self._partial = lines.pop()
        return lines


class EventReader:
    """Lines in, events out: ``line`` returns the event a blank line completes, else None."""

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []
        self._last_id = ""  # the spec's "last event ID": not reset by a dispatch
        self._retry: int | None = None

    def line(self, line: str) -> ServerSentEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id" and "\0" not in value:
            self._last_id = value
        elif name == "retry":
            self._retry = _integer(value, self._retry)
        return None

    def _dispatch(self) -> ServerSentEvent | None:
        if not (self._event or self._data or self._last_id or self._retry is not None):
            return None
        sse = ServerSentEvent(self._event, "\n".join(self._data), self._last_id, self._retry)
        self._event, self._data, self._retry = "", [], None
        return sse


def _integer(value: str, current: int | None) -> int | None:
    try:
        return int(value)
    except ValueError:
        return current
