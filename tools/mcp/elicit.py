"""MCP elicitation (``elicitation/create``) through the question port the UI already has.

A server's form is a flat object schema of primitive fields. Each field becomes one question
of a :class:`~tools.questions.QuestionPrompt`: an ``enum`` (or ``oneOf`` of consts) offers its
values, a boolean offers Yes / No, a string or number is typed in the free-text field. The
TUI shows that as its question form; print mode and headless contexts have no one to ask, so
the request is declined. Answers are converted back to the schema's types; an answer that does
not fit (``"abc"`` for an integer) declines the whole form rather than send the server junk.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from tools.questions import Question, QuestionOption, QuestionPrompt, QuestionResponse

__all__ = ["answers_from_response", "elicit_via", "prompt_from_schema"]

_YES, _NO = "Yes", "No"
_MAX_OPTIONS = 4


def _choices(spec: dict[str, Any]) -> list[str]:
    if isinstance(spec.get("enum"), list):
        return [str(v) for v in spec["enum"]]
    one_of = spec.get("oneOf") or spec.get("anyOf")
    if isinstance(one_of, list):
        return [str(o["const"]) for o in one_of if isinstance(o, dict) and "const" in o]
    items = spec.get("items")
    if spec.get("type") == "array" and isinstance(items, dict):
        return _choices(items)
    return []


def prompt_from_schema(server: str, message: str, schema: dict[str, Any]) -> QuestionPrompt:
    """One question per property of ``schema`` (the first carries the server's message)."""
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    required = set(schema.get("required") or ())
    questions: list[Question] = []
    for i, (key, raw) in enumerate(props.items()):
        spec = raw if isinstance(raw, dict) else {}
        label = str(spec.get("title") or key)
        hint = str(spec.get("description") or "")
        kind = spec.get("type")
        choices = _choices(spec)
        options: tuple[QuestionOption, ...]
        if kind == "boolean":
            options = (QuestionOption(_YES), QuestionOption(_NO))
        else:
            options = tuple(QuestionOption(c) for c in choices[:_MAX_OPTIONS])
        text = f"{label}{'' if key in required else ' (optional)'}"
        if hint:
            text += f" — {hint}"
        if kind in ("integer", "number"):
            text += f" ({kind})"
        if i == 0 and message:
            text = f"{message}\n{text}"
        questions.append(
            Question(
                question=text,
                header=f"MCP {server}"[:12],
                options=options,
                multi_select=kind == "array",
            )
        )
    return QuestionPrompt(tuple(questions))


def answers_from_response(
    schema: dict[str, Any], prompt: QuestionPrompt, response: QuestionResponse
) -> dict[str, Any] | None:
    """The form's content typed per ``schema``, or None when an answer does not fit."""
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    required = set(schema.get("required") or ())
    out: dict[str, Any] = {}
    for (key, raw), question in zip(props.items(), prompt.questions, strict=False):
        spec = raw if isinstance(raw, dict) else {}
        answer = response.answers.get(question.question, "").strip()
        if not answer:
            if key in required:
                return None
            continue
        kind = spec.get("type")
        try:
            if kind == "boolean":
                if answer.lower() not in ("yes", "no", "true", "false"):
                    return None
                out[key] = answer.lower() in ("yes", "true")
            elif kind == "integer":
                out[key] = int(answer)
            elif kind == "number":
                out[key] = float(answer)
            elif kind == "array":
                out[key] = [a.strip() for a in answer.split(",") if a.strip()]
            else:
                out[key] = answer
        except ValueError:
            return None
    return out


def elicit_via(
    ask_user: Callable[[QuestionPrompt], Awaitable[QuestionResponse | None]], server: str
) -> Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | None]]:
    """An ``ElicitFn`` for a connection that asks through ``ask_user``."""

    async def elicit(message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        prompt = prompt_from_schema(server, message, schema)
        if not prompt.questions:
            return None
        response = await ask_user(prompt)
        if response is None or response.declined:
            return None
        return answers_from_response(schema, prompt, response)

    return elicit
