"""JSONL session transcripts and the prompt history.

Importing the package imports none of its modules: each name loads its module on first use
(PEP 562).
"""

import sys

TYPE_CHECKING = False  # as typing's, without importing typing at start-up
if TYPE_CHECKING:
    from agent_cli.transcripts.commands import typed_command
    from agent_cli.transcripts.history import PromptHistory
    from agent_cli.transcripts.lock import SessionInUse
    from agent_cli.transcripts.records import prompt_text, read_records
    from agent_cli.transcripts.tail import write_boundary
    from agent_cli.transcripts.transcript import (
        TranscriptReader,
        TranscriptWriter,
        data_dir,
        list_sessions,
        project_dir,
    )

__all__ = [
    "PromptHistory",
    "SessionInUse",
    "TranscriptReader",
    "TranscriptWriter",
    "data_dir",
    "list_sessions",
    "project_dir",
    "prompt_text",
    "read_records",
    "typed_command",
    "write_boundary",
]

# Each name's module, imported on the name's first use (``__getattr__``).
_MODULES = {
    "commands": ("typed_command",),
    "history": ("PromptHistory",),
    "lock": ("SessionInUse",),
    "records": ("prompt_text", "read_records"),
    "tail": ("write_boundary",),
    "transcript": (
        "TranscriptReader",
        "TranscriptWriter",
        "data_dir",
        "list_sessions",
        "project_dir",
    ),
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
