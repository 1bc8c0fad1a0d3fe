"""The question port: AskUserQuestion asks the person at the keyboard, through the UI.

``Callbacks.ask_user`` (``tools.context``) takes a :class:`QuestionPrompt` and returns a
:class:`QuestionResponse`, or None when there is no one to ask (print mode, a headless
context): the tool then tells the model that no one can answer. The TUI implements it with a
keyboard-driven modal (``agent_cli.tui.screens.question``).
"""

from __future__ import annotations

from dataclasses import field

from tools.records import datarecord

__all__ = [
    "OTHER_LABEL",
    "Question",
    "QuestionOption",
    "QuestionPrompt",
    "QuestionResponse",
    "no_one_to_ask",
]

OTHER_LABEL = "Other"  # the free-text answer every question offers after its options


@datarecord(frozen=True, slots=True)
class QuestionOption:
    label: str
    description: str = ""


@datarecord(frozen=True, slots=True)
class Question:
    """One question: its text, a short chip ``header``, 2-4 options, single or multi-select."""

    question: str
    header: str
    options: tuple[QuestionOption, ...]
    multi_select: bool = False


@datarecord(frozen=True, slots=True)
class QuestionPrompt:
    """What the UI shows: the questions in order; ``agent_id`` names a sub-agent that asks."""

    questions: tuple[Question, ...]
    agent_id: str | None = None


@datarecord(frozen=True, slots=True)
class QuestionResponse:
    """The user's answers, keyed by question text (several labels of a multi-select joined by
    ", "; free text as typed). ``declined``: the user closed the questions without answering."""

    answers: dict[str, str] = field(default_factory=dict)
    declined: bool = False


async def no_one_to_ask(_prompt: QuestionPrompt) -> QuestionResponse | None:
    """The headless default: there is no one to ask."""
    return None
