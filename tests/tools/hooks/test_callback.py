"""``callback`` hooks on the real runner: registration shapes, ordering after settings hooks,
and what a failed callback does by its matcher's ``onFailure``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from permissions.types import Decision
from tools.hooks.callbacks import HookConfigError, parse_callback_hooks
from tools.hooks.runner import HookRunner, HookSession


def runner(tmp_path: Path, hooks: Any, reply: Any, config: Any = None) -> tuple[HookRunner, list]:
    calls: list[tuple[str, dict[str, Any], str | None]] = []

    async def callback(cid: str, data: dict[str, Any], tool_use_id: str | None) -> Any:
        calls.append((cid, data, tool_use_id))
        return await reply(cid) if callable(reply) else reply

    r = HookRunner(config, session=HookSession("s1", None, tmp_path))
    r.hook_callback = callback
    r.add_handlers(parse_callback_hooks(hooks, lambda m: None))
    return r, calls


def guard(ids: list[str], matcher: str | None = "Bash", **extra: Any) -> dict[str, Any]:
    return {"PreToolUse": [{"matcher": matcher, "hookCallbackIds": ids, **extra}]}


async def pre(r: HookRunner, tool: str = "Bash") -> Any:
    return await r.pre_tool_use(
        tool_name=tool, tool_input={"command": "ls"}, tool_use_id="t1", permission_mode="default"
    )


async def test_a_match_calls_back_with_the_event_json_and_its_reply_decides(tmp_path: Path) -> None:
    reply = {
        "systemMessage": "checked",
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"command": "ls -a"},
        },
    }
    r, calls = runner(tmp_path, guard(["cb_1"]), reply)
    out = await pre(r)
    assert out.decision == Decision.ALLOW and out.updated_input == {"command": "ls -a"}
    assert out.system_messages == ("checked",) and out.ran == ("SDK hook callback 'cb_1'",)
    ((cid, data, tool_use_id),) = calls
    assert (cid, tool_use_id) == ("cb_1", "t1")
    assert data["hook_event_name"] == "PreToolUse" and data["tool_input"] == {"command": "ls"}
    assert data["session_id"] == "s1" and data["permission_mode"] == "default"
    assert (await pre(r, "Read")).ran == () and len(calls) == 1  # the matcher said Bash


async def test_callbacks_run_after_the_settings_hooks_of_the_event(tmp_path: Path) -> None:
    settings = {"PreToolUse": [{"hooks": [{"type": "command", "command": "true"}]}]}
    r, _ = runner(tmp_path, guard(["cb_1"], matcher=None), {}, config=settings)
    assert (await pre(r)).ran == ("true", "SDK hook callback 'cb_1'")


async def _boom(cid: str) -> Any:
    raise RuntimeError("the program's callback raised")


@pytest.mark.parametrize(
    ("on_failure", "denied"), [(None, True), ("block", True), ("continue", False), ("x", True)]
)
async def test_a_failed_guard_acts_by_on_failure(
    tmp_path: Path, on_failure: str | None, denied: bool
) -> None:
    extra = {} if on_failure is None else {"onFailure": on_failure}
    r, _ = runner(tmp_path, guard(["cb_1"], **extra), _boom)
    out = await pre(r)
    assert (out.decision == Decision.DENY) is denied
    assert "the program's callback raised" in out.system_messages[0]
    if denied:
        assert "the program's callback raised" in (out.decision_reason or "")


@pytest.mark.parametrize(
    "reply",
    [
        None,
        ["not", "an", "object"],
        {"hookSpecificOutput": {"permissionDecision": "Deny"}},
        {"decision": "maybe"},
    ],
)
async def test_a_reply_the_protocol_rejects_is_a_failure(tmp_path: Path, reply: Any) -> None:
    r, _ = runner(tmp_path, guard(["cb_1"]), reply)
    out = await pre(r)
    assert out.decision == Decision.DENY and "failed" in (out.decision_reason or "")


async def test_no_answer_in_time_denies_a_guard_and_only_warns_elsewhere(tmp_path: Path) -> None:
    async def never(cid: str) -> Any:
        await asyncio.Event().wait()

    hooks = {
        **guard(["cb_1"], timeout=0.05),
        "PostToolUse": [{"hookCallbackIds": ["cb_2"], "timeout": 0.05}],
    }
    r, _ = runner(tmp_path, hooks, never)
    out = await pre(r)
    assert out.decision == Decision.DENY and "timeout" in (out.decision_reason or "")
    post = await r.post_tool_use(
        tool_name="Bash",
        tool_input={},
        tool_response="ok",
        tool_use_id="t1",
        permission_mode="default",
    )
    assert not post.blocked and not post.additional_context and "timeout" in post.system_messages[0]


async def test_block_on_failure_blocks_a_prompt_but_never_a_stop(tmp_path: Path) -> None:
    hooks = {
        "UserPromptSubmit": [{"hookCallbackIds": ["p"], "onFailure": "block"}],
        "Stop": [{"hookCallbackIds": ["s"], "onFailure": "block"}],
    }
    r, _ = runner(tmp_path, hooks, _boom)
    prompt = await r.run_event("UserPromptSubmit", {"prompt": "hi"})
    assert prompt.blocked and "raised" in (prompt.block_reason or "")
    stop = await r.run_event("Stop", {"stop_hook_active": False})
    assert not stop.blocked and stop.system_messages


async def test_without_a_connected_program_a_guard_denies(tmp_path: Path) -> None:
    r = HookRunner(None, session=HookSession("s1", None, tmp_path))
    r.add_handlers(parse_callback_hooks(guard(["cb_1"]), lambda m: None))
    assert (await pre(r)).decision == Decision.DENY


@pytest.mark.parametrize(
    ("hooks", "why"),
    [
        ([], "must be an object"),
        ({"PreToolUse": {}}, "list of matcher groups"),
        ({"PreToolUse": ["x"]}, "must be an object"),
        ({"PreToolUse": [{"hookCallbackIds": [1]}]}, "hookCallbackIds"),
        ({"PreToolUse": [{"matcher": "(", "hookCallbackIds": ["a"]}]}, "regex"),
        ({"PreToolUse": [{"hookCallbackIds": ["a"], "timeout": -1}]}, "timeout"),
        ({"PreToolUse": [{"hookCallbackIds": ["a"], "onFailure": 3}]}, "onFailure"),
    ],
)
def test_a_malformed_registration_is_refused_with_the_reason(hooks: Any, why: str) -> None:
    with pytest.raises(HookConfigError, match=why):
        parse_callback_hooks(hooks, lambda m: None)


def test_an_event_nerve_never_fires_warns_and_is_kept() -> None:
    warned: list[str] = []
    got = parse_callback_hooks({"Telepathy": [{"hookCallbackIds": ["a"]}]}, warned.append)
    assert list(got) == ["Telepathy"] and "Telepathy" in warned[0]
