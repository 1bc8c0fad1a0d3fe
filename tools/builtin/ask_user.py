"""AskUserQuestion: the model asks the user one to four multiple-choice questions.

Claude Code's input schema: ``questions`` (1-4), each with ``question``, a short ``header``
chip, ``options`` (2-4, ``label`` + ``description``) and ``multiSelect``. The user may also
type a free-text answer ("Other"). The questions go to the UI through ``ctx.callbacks.ask_user``
(the TUI shows a keyboard-driven modal); the answers come back as the tool result.

Where no one can answer (print mode, a headless context) the result is an ``is_error`` that
says so, so the model decides by itself instead of waiting. Asking changes nothing, so the tool
is read-only and never prompts for permission (deny and ask rules still apply). It is serial:
two sets of questions never compete for the screen.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tools.base import build_tool
from tools.context import ToolUseContext
from tools.errors import ToolExecutionError
from tools.questions import Question, QuestionOption, QuestionPrompt
from tools.result import ToolResult, ValidationError

__all__ = [
    "ASK_USER_QUESTION",
    "NO_ONE_TO_ANSWER",
    "TOOLS",
    "AskUserQuestionInput",
    "AskUserQuestionOutput",
    "OptionIn",
    "QuestionIn",
    "answers_text",
]

NO_ONE_TO_ANSWER = (
    "No one can answer questions here: Nerve is running non-interactively (print mode), so "
    "AskUserQuestion is unavailable. Do not wait for an answer: make a reasonable choice, say "
    "which one and why, and continue; or finish your answer with the question for the user."
)
DECLINED = (
    "The user declined to answer the questions. Do not assume answers: continue without them "
    "if you can, or stop and ask the user in plain text what they want."
)

_DESCRIPTION = """\
Ask the user multiple-choice questions when you need their decision to go on: to clarify an \
ambiguous request, choose between approaches, or confirm preferences.

- 1 to 4 questions per call; each has 2 to 4 options with a short `label` and a `description` \
of what the option means or implies.
- `header`: a very short chip label for the question (at most 12 characters), e.g. "Auth method".
- `multiSelect: true` lets the user pick several options.
- The user can always type their own answer instead ("Other"); do not add an "Other" option.
- If you recommend an option, put it first and add "(Recommended)" to its label.
Do not use it to ask for permission to run a tool (the permission prompt does that) or for \
questions you can answer by reading the code."""


class OptionIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    label: str = Field(
        min_length=1, max_length=200, description="The option's text (1-5 words), as shown"
    )
    description: str = Field(
        "", max_length=1000, description="What choosing this option means or implies"
    )


class QuestionIn(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    question: str = Field(
        min_length=1, description="The full question, ending with a question mark"
    )
    header: str = Field(
        min_length=1, max_length=60, description="A very short label for the question (<= 12 chars)"
    )
    options: list[OptionIn] = Field(
        min_length=2, max_length=4, description="2-4 distinct choices (no 'Other': it is added)"
    )
    multi_select: bool = Field(
        False, alias="multiSelect", description="Allow the user to pick several options"
    )


class AskUserQuestionInput(BaseModel):
    """``{"questions": [...]}`` (Claude Code also sends ``answers``/``metadata``: ignored)."""

    model_config = ConfigDict(extra="ignore")

    questions: list[QuestionIn] = Field(
        min_length=1, max_length=4, description="The questions to ask (1-4)"
    )


class AskUserQuestionOutput(BaseModel):
    questions: list[str]
    answers: dict[str, str]


def answers_text(answers: dict[str, str]) -> str:
    """What the model reads back (Claude Code's wording)."""
    pairs = ", ".join(f'"{q}"="{a}"' for q, a in answers.items())
    return (
        f"User has answered your questions: {pairs}. You can now continue with the user's "
        "answers in mind."
    )


async def _validate(inp: AskUserQuestionInput, _ctx: ToolUseContext) -> ValidationError | None:
    texts = [q.question.strip() for q in inp.questions]
    if len(set(texts)) != len(texts):
        return ValidationError("Each question must be different from the others.", "duplicate")
    for q in inp.questions:
        labels = [o.label.strip().lower() for o in q.options]
        if len(set(labels)) != len(labels):
            return ValidationError(
                f"The options of {q.question!r} must have distinct labels.", "duplicate_option"
            )
        if "other" in labels:
            return ValidationError(
                f"Remove the 'Other' option from {q.question!r}: free text is always offered.",
                "other_option",
            )
    return None


def _prompt(inp: AskUserQuestionInput, ctx: ToolUseContext) -> QuestionPrompt:
    return QuestionPrompt(
        questions=tuple(
            Question(
                question=q.question.strip(),
                header=q.header.strip(),
                options=tuple(QuestionOption(o.label.strip(), o.description) for o in q.options),
                multi_select=q.multi_select,
            )
            for q in inp.questions
        ),
        agent_id=ctx.agent.agent_id,
    )


async def _call(inp: AskUserQuestionInput, ctx: ToolUseContext, _progress: Any) -> ToolResult:
    prompt = _prompt(inp, ctx)
    response = await ctx.callbacks.ask_user(prompt)
    if response is None:
        raise ToolExecutionError(NO_ONE_TO_ANSWER)
    if response.declined:
        raise ToolExecutionError(DECLINED)
    asked = [q.question for q in prompt.questions]
    answers = {q: response.answers[q] for q in asked if response.answers.get(q, "").strip()}
    if not answers:
        raise ToolExecutionError(DECLINED)
    return ToolResult(AskUserQuestionOutput(questions=asked, answers=answers))


def _to_content(data: Any) -> str:
    if isinstance(data, AskUserQuestionOutput):
        return answers_text(data.answers)
    return str(data)


def _render_call(inp: AskUserQuestionInput) -> str:
    return "; ".join(q.header for q in inp.questions)


def _render_result(data: Any) -> str:
    if isinstance(data, AskUserQuestionOutput):
        return "\n".join(f"{q} → {a}" for q, a in data.answers.items())
    return str(data)


ASK_USER_QUESTION = build_tool(
    name="AskUserQuestion",
    input_model=AskUserQuestionInput,
    call=_call,
    description=_DESCRIPTION,
    search_hint="ask the user a multiple choice question clarify preferences",
    is_read_only=True,  # asking changes nothing: no permission prompt of its own
    is_concurrency_safe=False,  # one set of questions on the screen at a time
    validate_input=_validate,
    to_content=_to_content,
    render_call=_render_call,
    render_result=_render_result,
    max_result_size_chars=20_000,
)

TOOLS = (ASK_USER_QUESTION,)
