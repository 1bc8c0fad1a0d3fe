"""The error tree, telemetry-safe error classes, and the OpenTelemetry bridge."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

from opentelemetry import trace

from tools import telemetry
from tools.errors import (
    FatalError,
    InputError,
    PermissionDeniedError,
    ToolCancelled,
    ToolError,
    ToolExecutionError,
    ToolTimeoutError,
    error_class,
)


def test_error_classes_are_stable_codes() -> None:
    assert error_class(InputError("bad /home/alice/x")) == "validation"
    assert error_class(InputError("x", code="no op!")) == "validation.no_op"
    assert error_class(PermissionDeniedError("denied rm -rf /")) == "permission_denied"
    assert error_class(ToolExecutionError("exit 3")) == "tool_error"
    assert error_class(ToolTimeoutError("slow")) == "timeout"
    assert error_class(ToolCancelled("stop")) == "cancelled"
    assert error_class(asyncio.CancelledError()) == "cancelled"
    assert error_class(TimeoutError("t")) == "timeout"
    assert error_class(FileNotFoundError("/home/alice/secret")) == (
        "tool_exception.FileNotFoundError"
    )


def test_error_class_never_contains_the_message() -> None:
    odd = type("Weird<lambda>.Name$1", (Exception,), {})
    cls = error_class(odd("/home/alice/secret"))
    assert cls == "tool_exception.Weird_lambda__Name_1"
    assert "alice" not in cls


def test_tool_errors_are_for_the_model_fatal_is_not() -> None:
    assert issubclass(ToolCancelled, ToolError) and ToolError("m").message == "m"
    assert not issubclass(FatalError, ToolError)


def test_sanitize_drops_content_and_odd_values() -> None:
    attrs = telemetry.sanitize_attributes(
        {
            "error_class": "tool_exception.OSError",
            "message": "secret text",
            "command": "rm -rf ~",
            "tool.file_path": "/home/alice",
            "duration_ms": 1.5,
            "ok": True,
            "bad key!": "x",
            "obj": object(),
            "long": "a" * 1000,
            "ctrl": "a\nb\x00c",
            "tags": ["x", 1, object()],
        }
    )
    assert attrs == {
        "error_class": "tool_exception.OSError",
        "duration_ms": 1.5,
        "ok": True,
        "long": "a" * telemetry.MAX_ATTRIBUTE_CHARS,
        "ctrl": "a b c",
        "tags": ("x", 1),
    }


def test_emit_without_a_provider_is_a_noop() -> None:
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    assert telemetry.emit("nerve.tool_error", {"error_class": "timeout"}) is False


class _RecordingSpan(trace.NonRecordingSpan):
    def __init__(self, name: str, sink: list[Any], attributes: Any) -> None:
        super().__init__(trace.INVALID_SPAN_CONTEXT)
        self.name, self.sink, self.attributes = name, sink, dict(attributes or {})
        self.events: list[tuple[str, dict[str, Any]]] = []

    def add_event(self, name: str, attributes: Any = None, timestamp: Any = None) -> None:
        self.events.append((name, dict(attributes or {})))

    def end(self, end_time: Any = None) -> None:
        self.sink.append(self)


class _RecordingTracer(trace.NoOpTracer):
    def __init__(self, sink: list[Any]) -> None:
        self.sink = sink

    def start_span(self, name: str, *args: Any, attributes: Any = None, **kw: Any) -> Any:
        return _RecordingSpan(name, self.sink, attributes)


class _RecordingProvider(trace.TracerProvider):
    def __init__(self) -> None:
        self.ended: list[_RecordingSpan] = []

    def get_tracer(self, *args: Any, **kw: Any) -> Any:
        return _RecordingTracer(self.ended)


def test_emit_reaches_a_configured_provider_sanitised() -> None:
    provider = _RecordingProvider()
    sent = telemetry.emit(
        "nerve.tool_error",
        {"error_class": "timeout", "message": "/home/alice"},
        tracer_provider=provider,
    )
    assert sent is True
    (span,) = provider.ended
    assert span.name == "nerve.tool_error"
    assert span.attributes == {"error_class": "timeout"}
    assert span.events == [("nerve.tool_error", {"error_class": "timeout"})]


def test_pipeline_import_does_not_import_opentelemetry() -> None:
    code = (
        "import sys, tools.pipeline.steps, tools.pipeline.executor, tools.registry\n"
        "print('opentelemetry' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "False"
