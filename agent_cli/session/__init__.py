"""A running session: build (the composition root), the port a UI drives, the session and
the parts it holds (permissions, approvals, model, context, sandbox, tasks, notifications, MCP),
resume, folder trust.

Importing the package imports none of its modules (the TUI's first frame needs only the port's
types): each name loads its module on first use (PEP 562).
"""

import sys

TYPE_CHECKING = False  # as typing's, without importing typing at start-up
if TYPE_CHECKING:
    from agent_cli.session.agent_session import AgentSession
    from agent_cli.session.attachment_text import attachment_line
    from agent_cli.session.notification import PERMISSION_PROMPT, permission_message
    from agent_cli.session.port import SessionPort
    from agent_cli.session.restored_calls import view_fields
    from agent_cli.session.resume import SessionError
    from agent_cli.session.trust import TrustError, TrustQuestion, mark_trusted, trust_question

__all__ = [
    "PERMISSION_PROMPT",
    "AgentSession",
    "SessionError",
    "SessionPort",
    "TrustError",
    "TrustQuestion",
    "attachment_line",
    "mark_trusted",
    "permission_message",
    "trust_question",
    "view_fields",
]

# Each name's module, imported on the name's first use (``__getattr__``).
_MODULES = {
    "agent_session": ("AgentSession",),
    "attachment_text": ("attachment_line",),
    "notification": ("PERMISSION_PROMPT", "permission_message"),
    "port": ("SessionPort",),
    "restored_calls": ("view_fields",),
    "resume": ("SessionError",),
    "trust": ("TrustError", "TrustQuestion", "mark_trusted", "trust_question"),
}
_HOME = {name: module for module, names in _MODULES.items() for name in names}


def __getattr__(name: str) -> object:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    __import__(f"{__name__}.{module}")
    value = getattr(sys.modules[f"{__name__}.{module}"], name)
    globals()[name] = value
    return value
