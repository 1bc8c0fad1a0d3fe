"""A stored conversation's tool calls shown as they were live (``nerve -c``, ``/resume``,
the reload after ``/rewind``): the header the tool gives, the user's summary of the result
(``summaries.user_view``: "Updated hello.py: 1 addition, 1 removal" with the diff, "Read 42
lines", a todo checklist) from the output the transcript kept, and "Rejected edit of hello.py"
for a call the user said No to (its result is the text written for the model).

Imported when a conversation is loaded, not before the first frame.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agent_cli.slash.views import content_text, tool_header
from agent_cli.tui.summaries import UserView, rejected_label, user_view
from tools.pipeline.permission import REJECT_MESSAGE, REJECT_WITH_FEEDBACK

__all__ = ["StoredCalls", "stored_calls_of"]


def _rejected(text: str) -> str | None:
    """What the user read for a call they rejected ("Rejected", "Rejected: feedback")."""
    if text.startswith(REJECT_WITH_FEEDBACK):
        feedback = text[len(REJECT_WITH_FEEDBACK) :].strip()
        return f"Rejected: {feedback}" if feedback else "Rejected"
    return "Rejected" if text.startswith(REJECT_MESSAGE) else None


class StoredCalls:
    """How to show the stored calls: ``outputs`` (tool_use id -> the view fields of its
    output), ``describe`` (the session's header for a call), ``cwd`` (paths shown relative)."""

    def __init__(
        self,
        outputs: Mapping[str, Mapping[str, Any]] | None = None,
        describe: Callable[[str, Any], str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.outputs = outputs or {}
        self.describe = describe
        self.cwd = cwd

    def header(self, name: str, tool_input: Any) -> str:
        if self.describe is not None:
            try:
                return self.describe(name, tool_input)
            except Exception:  # a header must never stop a conversation from opening
                pass
        return tool_header(name, tool_input)

    def result(
        self, tool_use_id: str, name: str, tool_input: Any, content: Any, is_error: bool
    ) -> UserView:
        rejected = _rejected(content_text(content)) if is_error else None
        if rejected is not None:
            shown_input = tool_input if isinstance(tool_input, Mapping) else {}
            return UserView(rejected_label(name, shown_input, rejected, self.cwd))
        return user_view(name, content, is_error, self.outputs.get(tool_use_id), self.cwd)


def stored_calls_of(app: Any) -> StoredCalls:
    """The app's session's stored outputs and headers, with the outputs of the calls this app
    showed live (``app.call_views``)."""
    session = app.session if getattr(app, "session_ready", False) else None
    outputs: dict[str, Mapping[str, Any]] = dict(getattr(session, "restored_calls", None) or {})
    outputs.update(getattr(app, "call_views", None) or {})
    describe = getattr(session, "describe_call", None)
    return StoredCalls(outputs, describe if callable(describe) else None, app.cwd)
