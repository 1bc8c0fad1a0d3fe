"""Telemetry-safe events, sent to OpenTelemetry only when the process configured it.

``emit`` is a no-op unless ``opentelemetry`` is importable AND a real tracer provider is set
(the API's default proxy provider means "nobody is listening"). The import happens inside
``emit`` so importing the pipeline never pays for it. Attributes are sanitised first: only
primitive values under plain keys survive, strings are bounded, and keys that typically carry
user content (messages, commands, paths, input) are dropped — telemetry names what happened,
never what the user wrote.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import field
from typing import Any

from tools.records import datarecord

__all__ = [
    "MAX_ATTRIBUTE_CHARS",
    "SENSITIVE_KEYS",
    "TelemetryEvent",
    "emit",
    "sanitize_attributes",
]

MAX_ATTRIBUTE_CHARS = 128
# Keys whose values are, by habit, raw user or model content.
SENSITIVE_KEYS = frozenset(
    {
        "message",
        "error_message",
        "msg",
        "content",
        "input",
        "tool_input",
        "output",
        "command",
        "path",
        "file_path",
        "url",
        "prompt",
        "stderr",
        "stdout",
        "feedback",
        "reason",
    }
)
_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_.]{0,63}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

Primitive = str | bool | int | float


def _clean_value(value: Any) -> Primitive | tuple[Primitive, ...] | None:
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return _CONTROL.sub(" ", value)[:MAX_ATTRIBUTE_CHARS]
    if isinstance(value, list | tuple):
        items = [_clean_value(v) for v in value[:32]]
        prims = [v for v in items if v is not None and not isinstance(v, tuple)]
        return tuple(prims)
    # Anything else (objects, dicts, exceptions) could render user content: drop it.
    return None


def sanitize_attributes(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """Only plain keys with primitive values; bounded strings; sensitive keys removed."""
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        if not isinstance(key, str) or not _KEY.match(key):
            continue
        if key.lower().rsplit(".", 1)[-1] in SENSITIVE_KEYS:
            continue
        cleaned = _clean_value(value)
        if cleaned is not None:
            out[key] = cleaned
    return out


@datarecord(frozen=True, slots=True)
class TelemetryEvent:
    """A telemetry-safe event, as handed to ``Callbacks.on_event`` (already sanitised)."""

    name: str
    attributes: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def make(cls, name: str, attributes: Mapping[str, Any]) -> TelemetryEvent:
        return cls(name, sanitize_attributes(attributes))


def emit(
    event_name: str, attributes: Mapping[str, Any] | None = None, *, tracer_provider: Any = None
) -> bool:
    """Record ``event_name`` with sanitised attributes; True if something received it.

    ``tracer_provider`` overrides the global provider (tests, embedding applications).
    Never raises: telemetry must not break a tool call.
    """
    name = event_name if _KEY.match(event_name) else "nerve.event"
    attrs = sanitize_attributes(attributes or {})
    try:
        from opentelemetry import trace
    except ImportError:
        return False
    try:
        provider = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
        if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
            return False
        tracer = provider.get_tracer("nerve.tools")
        span = tracer.start_span(name, attributes=attrs)
        try:
            span.add_event(name, attrs)
        finally:
            span.end()
        return True
    except Exception:
        return False
