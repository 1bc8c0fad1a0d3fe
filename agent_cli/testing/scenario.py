"""Scenarios for the scripted model server: what the "model" answers, turn by turn.

A scenario is an ordered list of assistant turns. Each turn lists its content blocks, its stop
reason and usage, an optional ``match`` the incoming request must satisfy, optional faults served
before the turn itself (each fault consumes one request), and pacing (delay between events, gates
the server waits on after a block closes).

The same scenario can be written in code (``text()``, ``tool_use()``, ``Turn``) or loaded from a
JSON file (``Scenario.from_json``) so a subprocess server and ``nerve demo`` can use it:

    {"turns": [
      {"blocks": [{"type": "text", "text": "Let me look."},
                  {"type": "tool_use", "id": "toolu_a", "name": "Read", "input": {"file_path": "x"}}]},
      {"match": {"tool_result_for": "toolu_a"},
       "faults": [{"kind": "rate_limit", "retry_after": "0"}],
       "blocks": [{"type": "text", "text": "Done."}]}
    ]}
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any, Literal

from tools.records import datarecord

__all__ = [
    "FAULT_KINDS",
    "Fault",
    "Match",
    "Scenario",
    "ScenarioError",
    "Turn",
    "cut",
    "http_error",
    "overloaded",
    "rate_limit",
    "redacted_thinking",
    "server_error",
    "server_tool_use",
    "stream_error",
    "text",
    "thinking",
    "tool_use",
    "web_search_error",
    "web_search_result",
]

FaultKind = Literal[
    "http",
    "stream_error",
    "cut",
    "cut_mid_chunk",
    "eof",
    "hang_before_headers",
    "hang_after_headers",
    "slow",
    "malformed",
]
FAULT_KINDS: dict[str, tuple[str, int | None, str | None]] = {
    # declarative name -> (kind, HTTP status, error type)
    "rate_limit": ("http", 429, "rate_limit_error"),
    "overloaded": ("http", 529, "overloaded_error"),
    "server_error": ("http", 500, "api_error"),
    "http": ("http", None, None),
    "stream_error": ("stream_error", None, "overloaded_error"),
    "cut": ("cut", None, None),
    # more wire faults: agent_cli.testing.faults builds them, agent_cli.testing.wire plays them
    **{k: (k, None, None) for k in ("cut_mid_chunk", "eof", "hang_before_headers")},
    **{k: (k, None, None) for k in ("hang_after_headers", "slow", "malformed")},
}


class ScenarioError(ValueError):
    """A scenario that cannot be used (bad JSON, unknown block type, ...)."""


def text(value: str) -> dict[str, Any]:
    """A text block."""
    return {"type": "text", "text": value}


def thinking(value: str, signature: str | None = None) -> dict[str, Any]:
    """A thinking block; without ``signature`` the scenario assigns ``sig_s<turn>_<block>``.
    The server checks that it comes back unchanged in later requests."""
    block: dict[str, Any] = {"type": "thinking", "thinking": value}
    if signature is not None:
        block["signature"] = signature
    return block


def redacted_thinking(data: str) -> dict[str, Any]:
    """A redacted_thinking block (opaque ``data``); it too must come back unchanged."""
    return {"type": "redacted_thinking", "data": data}


def tool_use(name: str, input: Mapping[str, Any], id: str | None = None) -> dict[str, Any]:
    """A tool_use block; without ``id`` the scenario assigns ``toolu_s<turn>_<block>``."""
    block: dict[str, Any] = {"type": "tool_use", "name": name, "input": dict(input)}
    if id is not None:
        block["id"] = id
    return block


def server_tool_use(name: str, input: Mapping[str, Any], id: str | None = None) -> dict[str, Any]:
    """A server tool call the API ran itself (``web_search``); no tool_result is expected."""
    block: dict[str, Any] = {"type": "server_tool_use", "name": name, "input": dict(input)}
    if id is not None:
        block["id"] = id
    return block


def web_search_result(
    tool_use_id: str, results: Sequence[tuple[str, str] | Mapping[str, Any]]
) -> dict[str, Any]:
    """A ``web_search_tool_result`` block: ``(title, url)`` pairs or full result objects."""
    content = [
        dict(r)
        if isinstance(r, Mapping)
        else {
            "type": "web_search_result",
            "title": r[0],
            "url": r[1],
            "encrypted_content": "scripted",
            "page_age": None,
        }
        for r in results
    ]
    return {"type": "web_search_tool_result", "tool_use_id": tool_use_id, "content": content}


def web_search_error(tool_use_id: str, error_code: str) -> dict[str, Any]:
    """A ``web_search_tool_result`` reporting a failed search (``max_uses_exceeded``, ...)."""
    return {
        "type": "web_search_tool_result",
        "tool_use_id": tool_use_id,
        "content": {"type": "web_search_tool_result_error", "error_code": error_code},
    }


@datarecord(frozen=True)
class Fault:
    """One way to fail a request instead of serving the turn.

    ``kind``: ``http`` (answer ``status`` with an error body), ``stream_error`` (start the SSE
    stream, then send ``event: error`` after ``after_events`` events), ``cut`` (start the stream,
    then close the socket mid-body after ``after_events`` events). ``times`` consecutive requests
    get this fault. Afterwards the same turn is served again on the next request, unless
    ``consumes_turn`` (the turn counts as delivered: used when the client keeps the partial
    answer instead of retrying). The other kinds are described in ``agent_cli.testing.faults``;
    ``variant`` picks a ``malformed`` stream's defect, ``delay`` paces ``slow`` and bounds a
    hang (seconds), ``block`` names the content block a defect applies to.
    """

    kind: FaultKind
    status: int = 500
    error_type: str = "api_error"
    message: str = "scripted fault"
    after_events: int = 3
    retry_after: str | None = None
    retry_after_ms: str | None = None
    should_retry: bool | None = None  # the x-should-retry header, when set
    times: int = 1
    consumes_turn: bool = False
    variant: str | None = None
    delay: float = 0.0
    block: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Fault:
        if not isinstance(data, Mapping):
            raise ScenarioError(f"a fault must be an object, got {type(data).__name__}")
        raw = dict(data)
        name = raw.pop("kind", None)
        if name not in FAULT_KINDS:
            raise ScenarioError(f"unknown fault kind {name!r}; known: {sorted(FAULT_KINDS)}")
        kind, status, error_type = FAULT_KINDS[name]
        if status is not None:
            raw.setdefault("status", status)
        if error_type is not None:
            raw.setdefault("error_type", error_type)
        unknown = set(raw) - set(cls.__dataclass_fields__)
        if unknown:
            raise ScenarioError(f"unknown fault field(s) {sorted(unknown)}")
        for key in ("retry_after", "retry_after_ms"):
            if key in raw and raw[key] is not None:
                raw[key] = str(raw[key])
        return cls(kind=kind, **raw)  # type: ignore[arg-type]


def rate_limit(retry_after: str | float | None = "0", *, times: int = 1) -> Fault:
    """HTTP 429 with a ``retry-after`` header (seconds)."""
    ra = None if retry_after is None else str(retry_after)
    return Fault("http", 429, "rate_limit_error", "Rate limited", retry_after=ra, times=times)


def overloaded(*, times: int = 1) -> Fault:
    """HTTP 529 overloaded."""
    return Fault("http", 529, "overloaded_error", "Overloaded", retry_after="0", times=times)


def server_error(*, times: int = 1) -> Fault:
    """HTTP 500 api_error."""
    return Fault("http", 500, "api_error", "Internal server error", retry_after="0", times=times)


def http_error(status: int, error_type: str, message: str = "scripted error") -> Fault:
    """Any HTTP error status with an Anthropic-shaped error body (401, 400, ...)."""
    return Fault("http", status, error_type, message)


def stream_error(
    after_events: int = 3, *, error_type: str = "overloaded_error", times: int = 1
) -> Fault:
    """A 200 SSE stream that sends ``event: error`` after ``after_events`` events."""
    return Fault(
        "stream_error", 200, error_type, "Overloaded", after_events=after_events, times=times
    )


def cut(after_events: int = 3, *, times: int = 1, consumes_turn: bool = False) -> Fault:
    """A 200 SSE stream whose socket is closed mid-body after ``after_events`` events."""
    return Fault("cut", after_events=after_events, times=times, consumes_turn=consumes_turn)


def _last_user(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None
    for msg in reversed(messages):
        if isinstance(msg, Mapping) and msg.get("role") == "user":
            return msg
    return None


def _texts(content: Any) -> list[str]:
    """Every string inside a content value (text blocks, tool_result contents)."""
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, Mapping):
                if isinstance(block.get("text"), str):
                    out.append(block["text"])
                if "content" in block:
                    out.extend(_texts(block["content"]))
    return out


@datarecord(frozen=True)
class Match:
    """What the request for a turn must look like; all given conditions must hold.

    ``tool_result_for``: the last user message has a tool_result for this tool_use id.
    ``contains_text``: some text in the last user message contains this string.
    ``predicate``: any callable on the parsed request body (code only, not JSON).
    """

    tool_result_for: str | None = None
    contains_text: str | None = None
    predicate: Callable[[Mapping[str, Any]], bool] | None = None
    description: str = ""

    def mismatch(self, body: Mapping[str, Any]) -> str | None:
        """None when the request satisfies this match, else what is wrong."""
        last = _last_user(body)
        content = last.get("content") if last else None
        if self.tool_result_for is not None:
            ids = [
                b.get("tool_use_id")
                for b in (content if isinstance(content, list) else [])
                if isinstance(b, Mapping) and b.get("type") == "tool_result"
            ]
            if self.tool_result_for not in ids:
                return f"expected a tool_result for {self.tool_result_for}, got tool_results {ids}"
        if self.contains_text is not None:
            if not any(self.contains_text in t for t in _texts(content)):
                return f"expected the last user message to contain {self.contains_text!r}"
        if self.predicate is not None and not self.predicate(body):
            return f"predicate {self.description or repr(self.predicate)} failed"
        return None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.tool_result_for is not None:
            out["tool_result_for"] = self.tool_result_for
        if self.contains_text is not None:
            out["contains_text"] = self.contains_text
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Match:
        if not isinstance(data, Mapping):
            raise ScenarioError("a match must be an object")
        unknown = set(data) - {"tool_result_for", "contains_text", "description"}
        if unknown:
            raise ScenarioError(f"unknown match field(s) {sorted(unknown)}")
        return cls(
            tool_result_for=data.get("tool_result_for"),
            contains_text=data.get("contains_text"),
            description=str(data.get("description", "")),
        )


_INT_FIELDS = {
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
}


@datarecord
class Turn:
    """One assistant answer.

    ``stop_reason`` defaults to ``tool_use`` when any block is a tool_use, else ``end_turn``.
    ``holds`` maps a block index to a gate name: after that block's ``content_block_stop`` the
    server waits until the test opens the gate (``server.gate(name).set()``), so a test can prove
    by event order that the client acted before the message ended. ``event_holds`` does the same
    after any event, by its position in the turn's stream (0 is ``message_start``).
    """

    blocks: list[dict[str, Any]]
    stop_reason: str | None = None
    input_tokens: int = 10
    output_tokens: int = 5
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    match: Match | None = None
    faults: list[Fault] = field(default_factory=list)
    event_delay: float = 0.0
    holds: dict[int, str] = field(default_factory=dict)
    event_holds: dict[int, str] = field(default_factory=dict)
    model: str | None = None  # None: echo the request's model

    def resolved_stop_reason(self) -> str:
        if self.stop_reason:
            return self.stop_reason
        if any(b.get("type") == "tool_use" for b in self.blocks):
            return "tool_use"
        return "end_turn"

    def usage(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        }

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"blocks": self.blocks, **self.usage()}
        if self.stop_reason:
            out["stop_reason"] = self.stop_reason
        if self.match is not None:
            out["match"] = self.match.to_dict()
        if self.faults:
            out["faults"] = [f.to_dict() for f in self.faults]
        if self.event_delay:
            out["event_delay"] = self.event_delay
        if self.holds:
            out["holds"] = {str(k): v for k, v in self.holds.items()}
        if self.event_holds:
            out["event_holds"] = {str(k): v for k, v in self.event_holds.items()}
        if self.model:
            out["model"] = self.model
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Turn:
        if not isinstance(data, Mapping):
            raise ScenarioError(f"a turn must be an object, got {type(data).__name__}")
        blocks = data.get("blocks")
        if not isinstance(blocks, list) or not blocks:
            raise ScenarioError("a turn needs a non-empty 'blocks' list")
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown:
            raise ScenarioError(f"unknown turn field(s) {sorted(unknown)}")
        kwargs = {
            k: v for k, v in data.items() if k not in ("match", "faults", "holds", "event_holds")
        }
        for key in _INT_FIELDS & set(kwargs):
            if not isinstance(kwargs[key], int) or kwargs[key] < 0:
                raise ScenarioError(f"'{key}' must be a non-negative integer")
        delay = kwargs.get("event_delay", 0)
        if not isinstance(delay, int | float) or delay < 0:
            raise ScenarioError("'event_delay' must be a non-negative number of seconds")
        try:
            holds = {int(k): str(v) for k, v in dict(data.get("holds", {})).items()}
            event_holds = {int(k): str(v) for k, v in dict(data.get("event_holds", {})).items()}
        except (TypeError, ValueError) as exc:
            raise ScenarioError(f"bad 'holds' or 'event_holds': {exc}") from exc
        faults = data.get("faults", [])
        if not isinstance(faults, list):
            raise ScenarioError("'faults' must be a list")
        return cls(
            **kwargs,
            match=Match.from_dict(data["match"]) if data.get("match") else None,
            faults=[Fault.from_dict(f) for f in faults],
            holds=holds,
            event_holds=event_holds,
        )


def _check_block(block: Any, where: str) -> None:
    if not isinstance(block, dict):
        raise ScenarioError(f"{where}: a block must be an object")
    kind = block.get("type")
    if kind == "text":
        if not isinstance(block.get("text"), str):
            raise ScenarioError(f"{where}: a text block needs a string 'text'")
    elif kind in ("tool_use", "server_tool_use"):
        if not isinstance(block.get("name"), str) or not isinstance(block.get("input"), dict):
            raise ScenarioError(f"{where}: a {kind} block needs 'name' and an object 'input'")
    elif kind in ("thinking", "redacted_thinking"):
        key = "thinking" if kind == "thinking" else "data"
        if not isinstance(block.get(key), str):
            raise ScenarioError(f"{where}: a {kind} block needs a string {key!r}")
    elif kind == "web_search_tool_result":
        if not isinstance(block.get("tool_use_id"), str) or not isinstance(
            block.get("content"), list | dict
        ):
            raise ScenarioError(f"{where}: a {kind} block needs 'tool_use_id' and 'content'")
    else:
        raise ScenarioError(
            f"{where}: unsupported block type {kind!r} "
            "(text, thinking, redacted_thinking, tool_use, server_tool_use, "
            "web_search_tool_result)"
        )


@datarecord
class Scenario:
    """An ordered list of turns; tool_use blocks without an id get a deterministic one."""

    turns: list[Turn]

    def __post_init__(self) -> None:
        for t, turn in enumerate(self.turns):
            for b, block in enumerate(turn.blocks):
                _check_block(block, f"turn {t} block {b}")
                if block["type"] == "tool_use" and not block.get("id"):
                    block["id"] = f"toolu_s{t}_{b}"
                if block["type"] == "thinking" and not block.get("signature"):
                    block["signature"] = f"sig_s{t}_{b}"
                if block["type"] == "server_tool_use" and not block.get("id"):
                    block["id"] = f"srvtoolu_s{t}_{b}"

    @classmethod
    def of(cls, *turns: Turn | Sequence[dict[str, Any]]) -> Scenario:
        """Build from turns or bare block lists (``Scenario.of([text("hi")])``)."""
        return cls([t if isinstance(t, Turn) else Turn(list(t)) for t in turns])

    def to_dict(self) -> dict[str, Any]:
        return {"turns": [t.to_dict() for t in self.turns]}

    @classmethod
    def from_dict(cls, data: Any) -> Scenario:
        if not isinstance(data, Mapping) or not isinstance(data.get("turns"), list):
            raise ScenarioError("a scenario is an object with a 'turns' list")
        return cls([Turn.from_dict(t) for t in data["turns"]])

    def to_json(self, path: str | Path | None = None) -> str:
        """Serialise (predicates are dropped); write to ``path`` when given."""
        out = json.dumps(self.to_dict(), indent=2)
        if path is not None:
            Path(path).write_text(out + "\n", encoding="utf-8")
        return out

    @classmethod
    def from_json(cls, path: str | Path) -> Scenario:
        """Load a scenario file; any problem is a ScenarioError naming the file."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ScenarioError(f"cannot read scenario {path}: {exc}") from exc
        try:
            return cls.from_dict(data)
        except (ScenarioError, TypeError) as exc:
            raise ScenarioError(f"bad scenario {path}: {exc}") from exc
