"""AskUserQuestion through the real pipeline: schema, validation, the question port, rules,
hooks, and its place in a parallel batch (a barrier)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.tools.pipeline_helpers import (
    ScriptedPrompts,
    hook_runner,
    hook_script,
    make_ctx,
    read_only_tool,
    rules,
)
from tools.builtin.ask_user import ASK_USER_QUESTION, NO_ONE_TO_ANSWER, answers_text
from tools.context import Callbacks, ToolUseContext, create_subagent_context
from tools.pipeline.executor import StreamingToolExecutor
from tools.pipeline.steps import CallOutcome, ToolCall, run_tool_call
from tools.questions import QuestionPrompt, QuestionResponse
from tools.result import ToolResult

AUTH = {
    "question": "Which auth method should the API use?",
    "header": "Auth",
    "options": [
        {"label": "OAuth (Recommended)", "description": "Works with the company SSO"},
        {"label": "API keys", "description": "Simplest to set up"},
    ],
    "multiSelect": False,
}
FEATURES = {
    "question": "Which features do you want?",
    "header": "Features",
    "options": [{"label": "Search"}, {"label": "Export"}, {"label": "Sync"}],
    "multiSelect": True,
}


class Asker:
    """The UI port, scripted: answers once, records what it was shown."""

    def __init__(self, response: QuestionResponse | None) -> None:
        self.response = response
        self.prompts: list[QuestionPrompt] = []

    async def __call__(self, prompt: QuestionPrompt) -> QuestionResponse | None:
        self.prompts.append(prompt)
        return self.response


def _ctx(asker: Asker | None = None, **kw: Any) -> ToolUseContext:
    ctx = make_ctx((ASK_USER_QUESTION, read_only_tool()), prompts=ScriptedPrompts(), **kw)
    if asker is not None:
        ctx = replace(ctx, callbacks=replace(ctx.callbacks, ask_user=asker))
    return ctx


async def _ask(ctx: ToolUseContext, *questions: dict[str, Any]) -> CallOutcome:
    return await run_tool_call(
        ToolCall("q1", "AskUserQuestion", {"questions": list(questions)}), ctx
    )


async def test_answers_come_back_as_the_result_without_a_permission_prompt() -> None:
    answers = {AUTH["question"]: "API keys", FEATURES["question"]: "Search, Sync"}
    asker = Asker(QuestionResponse(answers=answers))
    out = await _ask(_ctx(asker), AUTH, FEATURES)
    assert not out.is_error, out.tool_result
    assert out.tool_result["content"] == answers_text(answers)
    assert out.tool_result["content"].startswith(
        'User has answered your questions: "Which auth method should the API use?"="API keys", '
    )
    (prompt,) = asker.prompts
    assert [q.header for q in prompt.questions] == ["Auth", "Features"]
    assert [o.label for o in prompt.questions[0].options] == ["OAuth (Recommended)", "API keys"]
    assert prompt.questions[0].options[0].description == "Works with the company SSO"
    assert prompt.questions[1].multi_select and not prompt.questions[0].multi_select


async def test_no_one_to_answer_is_an_error_for_the_model() -> None:
    out = await _ask(_ctx(), AUTH)  # the headless default port
    assert out.is_error and out.tool_result["content"] == NO_ONE_TO_ANSWER
    assert Callbacks().ask_user is not None


async def test_declining_is_an_error_for_the_model() -> None:
    out = await _ask(_ctx(Asker(QuestionResponse(declined=True))), AUTH)
    assert out.is_error and "declined" in out.tool_result["content"]


async def test_a_subagent_asks_through_the_same_port_and_is_named() -> None:
    asker = Asker(QuestionResponse(answers={AUTH["question"]: "OAuth (Recommended)"}))
    child = create_subagent_context(_ctx(asker), agent_id="agent-7", system_prompt="")
    out = await _ask(child, AUTH)
    assert not out.is_error and asker.prompts[0].agent_id == "agent-7"


@pytest.mark.parametrize(
    ("questions", "expected"),
    [
        ([], "questions"),
        ([AUTH] * 5, "questions"),
        ([{**AUTH, "options": AUTH["options"][:1]}], "options"),
        ([{**AUTH, "options": AUTH["options"] * 3}], "options"),
        ([AUTH, AUTH], "different"),
        ([{**AUTH, "options": [{"label": "A"}, {"label": "a"}]}], "distinct labels"),
        ([{**AUTH, "options": [{"label": "A"}, {"label": "Other"}]}], "free text"),
    ],
)
async def test_bad_questions_are_refused(questions: list[Any], expected: str) -> None:
    asker = Asker(None)
    out = await _ask(_ctx(asker), *questions)
    assert out.is_error and expected in out.tool_result["content"], out.tool_result
    assert asker.prompts == []


def test_schema_is_claude_codes() -> None:
    schema = ASK_USER_QUESTION.input_schema()
    question = schema["$defs"]["QuestionIn"]["properties"]
    assert set(question) == {"question", "header", "options", "multiSelect"}
    assert schema["properties"]["questions"]["maxItems"] == 4
    assert schema["$defs"]["QuestionIn"]["properties"]["options"]["minItems"] == 2


async def test_deny_rule_and_hook_stop_it(tmp_path: Path) -> None:
    asker = Asker(QuestionResponse(answers={AUTH["question"]: "x"}))
    denied = await _ask(_ctx(asker, rule_set=rules(("AskUserQuestion", "deny"))), AUTH)
    assert denied.is_error and "deny rule AskUserQuestion" in denied.tool_result["content"]
    answer = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"}}
    cmd = hook_script(tmp_path, "pre.sh", json.dumps(answer))
    config = {
        "PreToolUse": [
            {"matcher": "AskUserQuestion", "hooks": [{"type": "command", "command": cmd}]}
        ]
    }
    hooked = await _ask(_ctx(asker, hooks=hook_runner(tmp_path, config)), AUTH)
    assert hooked.is_error and asker.prompts == []


async def test_it_is_a_barrier_in_a_batch() -> None:
    """The call after it waits: while the questions are open, yielding to the loop again and
    again lets no later call start."""
    order: list[str] = []

    class Slow(Asker):
        async def __call__(self, prompt: QuestionPrompt) -> QuestionResponse | None:
            order.append("ask")
            for _ in range(20):
                await asyncio.sleep(0)
            order.append("answered")
            return await super().__call__(prompt)

    async def peek(_inp: Any, _c: Any, _p: Any) -> ToolResult:
        order.append("peek")
        return ToolResult("ok")

    asker = Slow(QuestionResponse(answers={AUTH["question"]: "API keys"}))
    ctx = make_ctx((ASK_USER_QUESTION, read_only_tool(call=peek)), prompts=ScriptedPrompts())
    ctx = replace(ctx, callbacks=replace(ctx.callbacks, ask_user=asker))
    ex = StreamingToolExecutor(ctx)
    ex.add(ToolCall("p1", "Peek", {}))
    ex.add(ToolCall("q1", "AskUserQuestion", {"questions": [AUTH]}))
    ex.add(ToolCall("p2", "Peek", {}))
    outcomes = await ex.finish()
    assert order == ["peek", "ask", "answered", "peek"]
    assert [o.is_error for o in outcomes] == [False, False, False]


async def test_a_long_free_text_answer_goes_through_the_result_budget(tmp_path: Path) -> None:
    essay = "because " * 3000  # 24,000 chars: over AskUserQuestion's 20,000
    asker = Asker(QuestionResponse(answers={AUTH["question"]: essay}))
    out = await _ask(_ctx(asker, session_dir=tmp_path), AUTH)
    assert out.tool_result["content"].startswith("<persisted-output>")
    assert essay.strip() in out.persisted_path.read_text(encoding="utf-8")
