"""HookRunner end to end with real bash hook scripts written into tmp_path."""

from __future__ import annotations

import json
import shlex
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from permissions.types import Decision
from tools.hooks.runner import HookRunner, HookSession
from tools.hooks.types import HookRunnerProtocol

_seq = count()


def hook(tmp_path: Path, body: str) -> str:
    """Write an executable bash script; return a shell command that runs it."""
    path = tmp_path / f"hook_{next(_seq)}.sh"
    path.write_text("#!/usr/bin/env bash\n" + body + "\n")
    path.chmod(0o755)
    return shlex.quote(str(path))


def emit(obj: dict[str, Any], code: int = 0) -> str:
    """Script body printing a JSON object and exiting with ``code``."""
    return f"cat <<'EOF'\n{json.dumps(obj)}\nEOF\nexit {code}"


def conf(event: str, *commands: str, matcher: str | None = None, **extra: Any) -> dict[str, Any]:
    group: dict[str, Any] = {
        "hooks": [{"type": "command", "command": c, **extra} for c in commands]
    }
    if matcher is not None:
        group["matcher"] = matcher
    return {event: [group]}


def make(tmp_path: Path, config: Any, project_dir: Path | None = None, **kw: Any) -> HookRunner:
    session = HookSession("sess-1", str(tmp_path / "sess-1.jsonl"), tmp_path, project_dir)
    return HookRunner(config, session=session, **kw)


async def pre(runner: HookRunner, tool: str = "Bash", **tool_input: Any):  # type: ignore[no-untyped-def]
    return await runner.pre_tool_use(
        tool_name=tool,
        tool_input=tool_input or {"command": "ls"},
        tool_use_id="toolu_1",
        permission_mode="default",
    )


def pre_json(decision: str, reason: str = "", **more: Any) -> dict[str, Any]:
    specific = {"hookEventName": "PreToolUse", "permissionDecision": decision, **more}
    if reason:
        specific["permissionDecisionReason"] = reason
    return {"hookSpecificOutput": specific}


def test_runner_satisfies_protocol(tmp_path: Path) -> None:
    runner: HookRunnerProtocol = make(tmp_path, {})
    assert isinstance(runner, HookRunner)


# --- exit 0 ------------------------------------------------------------------------------


async def test_plain_stdout_is_context_only_for_prompt_and_session_start(tmp_path: Path) -> None:
    cmd = hook(tmp_path, "echo 'remember the milk'")
    config = {**conf("UserPromptSubmit", cmd), **conf("SessionStart", cmd)}
    config |= conf("PreToolUse", cmd) | conf("Stop", cmd)
    r = make(tmp_path, config)
    ups = await r.run_event("UserPromptSubmit", {"prompt": "hi"})
    assert ups.additional_context == ("remember the milk",)
    ss = await r.run_event("SessionStart", {"source": "startup"})
    assert ss.additional_context == ("remember the milk",)
    p = await pre(r)
    assert p.additional_context == () and p.decision is None and p.system_messages == ()
    stop = await r.run_event("Stop", {"stop_hook_active": False})
    assert stop.additional_context == () and not stop.blocked
    assert stop.ran == (cmd,)


@pytest.mark.parametrize(
    ("decision", "expected"),
    [("allow", Decision.ALLOW), ("deny", Decision.DENY), ("ask", Decision.ASK), ("defer", None)],
)
async def test_json_permission_decisions(
    tmp_path: Path, decision: str, expected: Decision | None
) -> None:
    r = make(tmp_path, conf("PreToolUse", hook(tmp_path, emit(pre_json(decision, "because")))))
    out = await pre(r)
    assert out.decision == expected
    assert out.decision_reason == ("because" if expected is not None else None)


async def test_updated_input_and_additional_context(tmp_path: Path) -> None:
    body = emit(pre_json("allow", "ok", updatedInput={"command": "ls -a"}, additionalContext="ctx"))
    r = make(tmp_path, conf("PreToolUse", hook(tmp_path, body)))
    out = await pre(r)
    assert out.updated_input == {"command": "ls -a"}
    assert out.additional_context == ("ctx",)


async def test_continue_false_and_system_message(tmp_path: Path) -> None:
    body = emit({"continue": False, "stopReason": "enough", "systemMessage": "heads up"})
    r = make(tmp_path, conf("PostToolUse", hook(tmp_path, body)))
    out = await r.post_tool_use(
        tool_name="Bash",
        tool_input={"command": "ls"},
        tool_response={"stdout": "x"},
        tool_use_id="t",
        permission_mode="default",
    )
    assert out.stop and out.stop_reason == "enough"
    assert out.system_messages == ("heads up",)
    assert out.updated_output is None


async def test_post_tool_use_updated_output_and_block(tmp_path: Path) -> None:
    first = emit(
        {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedMCPToolOutput": 1}}
    )
    last = emit(
        {
            "decision": "block",
            "reason": "lint failed",
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "updatedToolOutput": {"text": "new"},
                "additionalContext": "see lint",
            },
        }
    )
    r = make(tmp_path, conf("PostToolUse", hook(tmp_path, first), hook(tmp_path, last)))
    out = await r.post_tool_use(
        tool_name="mcp__s__t",
        tool_input={},
        tool_response="old",
        tool_use_id="t",
        permission_mode="default",
    )
    assert out.updated_output == {"text": "new"}  # last in config order wins
    assert out.blocked and out.block_reason == "lint failed"
    assert out.additional_context == ("see lint",)


async def test_deprecated_top_level_decision_on_pre_tool_use(tmp_path: Path) -> None:
    r = make(
        tmp_path, conf("PreToolUse", hook(tmp_path, emit({"decision": "block", "reason": "r"})))
    )
    out = await pre(r)
    assert (out.decision, out.decision_reason) == (Decision.DENY, "r")
    r2 = make(tmp_path, conf("PreToolUse", hook(tmp_path, emit({"decision": "approve"}))))
    assert (await pre(r2)).decision == Decision.ALLOW


async def test_top_level_block_on_stop(tmp_path: Path) -> None:
    r = make(tmp_path, conf("Stop", hook(tmp_path, emit({"decision": "block", "reason": "tests"}))))
    out = await r.run_event("Stop", {"stop_hook_active": False})
    assert out.blocked and out.block_reason == "tests"


async def test_mismatched_hook_event_name_is_ignored(tmp_path: Path) -> None:
    body = emit({"hookSpecificOutput": {"hookEventName": "Stop", "permissionDecision": "deny"}})
    out = await pre(make(tmp_path, conf("PreToolUse", hook(tmp_path, body))))
    assert out.decision is None
    assert any("ignored" in m for m in out.system_messages)


# --- exit 2 and other codes --------------------------------------------------------------


async def test_exit2_denies_pre_tool_use_with_stderr(tmp_path: Path) -> None:
    r = make(tmp_path, conf("PreToolUse", hook(tmp_path, "echo 'no rm please' >&2; exit 2")))
    out = await pre(r)
    assert (out.decision, out.decision_reason) == (Decision.DENY, "no rm please")


async def test_exit2_cannot_be_overridden_by_json_allow(tmp_path: Path) -> None:
    body = emit(pre_json("allow", "json reason"), code=2)
    out = await pre(make(tmp_path, conf("PreToolUse", hook(tmp_path, body))))
    assert (out.decision, out.decision_reason) == (Decision.DENY, "json reason")


@pytest.mark.parametrize("event", ["UserPromptSubmit", "Stop", "SubagentStop", "PreCompact"])
async def test_exit2_blocks_blockable_events(tmp_path: Path, event: str) -> None:
    r = make(tmp_path, conf(event, hook(tmp_path, "echo 'not now' >&2; exit 2")))
    out = await r.run_event(event, {})
    assert out.blocked and out.block_reason == "not now"


async def test_exit2_on_post_tool_use_goes_to_the_model(tmp_path: Path) -> None:
    r = make(tmp_path, conf("PostToolUseFailure", hook(tmp_path, "echo 'fix it' >&2; exit 2")))
    out = await r.post_tool_use_failure(
        tool_name="Bash", tool_input={}, tool_use_id="t", error="boom", permission_mode="default"
    )
    assert not out.blocked and out.additional_context == ("fix it",)


async def test_exit1_is_a_non_blocking_warning(tmp_path: Path) -> None:
    r = make(tmp_path, conf("PreToolUse", hook(tmp_path, "echo oops >&2; echo more >&2; exit 1")))
    out = await pre(r)
    assert out.decision is None
    assert out.system_messages == (
        "PreToolUse hook error: Failed with non-blocking status code 1: oops",
    )


async def test_json_overrides_a_non_blocking_exit_code(tmp_path: Path) -> None:
    body = "echo warn >&2\n" + emit(pre_json("deny", "json says no"), code=1)
    out = await pre(make(tmp_path, conf("PreToolUse", hook(tmp_path, body))))
    assert (out.decision, out.decision_reason) == (Decision.DENY, "json says no")
    assert out.system_messages == ()


async def test_invalid_json_is_plain_text_with_a_warning(tmp_path: Path) -> None:
    r = make(tmp_path, conf("UserPromptSubmit", hook(tmp_path, "echo '{not json'")))
    out = await r.run_event("UserPromptSubmit", {"prompt": "x"})
    assert out.additional_context == ("{not json",)
    assert len(out.system_messages) == 1 and "invalid JSON" in out.system_messages[0]


async def test_garbage_and_binary_output_never_raise(tmp_path: Path) -> None:
    cmds = [
        hook(tmp_path, "head -c 2000 /dev/urandom"),
        hook(tmp_path, "printf '}{\\x00\\xff'; exit 7"),
        hook(tmp_path, emit({"hookSpecificOutput": ["list"], "continue": "nope"})),
        hook(tmp_path, "echo '[1, 2]'"),
    ]
    out = await pre(make(tmp_path, conf("PreToolUse", *cmds)))
    assert out.decision is None and not out.stop and len(out.ran) == 4
    assert any("status code 7" in m for m in out.system_messages)


async def test_command_not_found(tmp_path: Path) -> None:
    r = make(tmp_path, conf("PreToolUse", "nerve-no-such-command-xyz --flag"))
    out = await pre(r)
    assert out.decision is None
    (msg,) = out.system_messages
    assert "status code 127" in msg and "not found" in msg  # sh (dash): "...: not found"


async def test_exec_form_missing_program_and_args(tmp_path: Path) -> None:
    seen = tmp_path / "argv.txt"
    script = hook(tmp_path, f'printf "%s\\n" "$@" > {seen}')
    config = {
        "PreToolUse": [
            {
                "hooks": [
                    {"command": str(tmp_path / "missing"), "args": []},
                    {"command": shlex.split(script)[0], "args": ["a b", "$CLAUDE_PROJECT_DIR/x"]},
                ]
            }
        ]
    }
    out = await pre(make(tmp_path, config))
    assert any("FileNotFoundError" in m for m in out.system_messages)
    assert seen.read_text().splitlines() == ["a b", f"{tmp_path}/x"]


# --- matching, if, dedupe, aggregation ---------------------------------------------------


async def test_matchers_select_handlers(tmp_path: Path) -> None:
    names = ["exact", "list", "regex", "anchored", "mcp", "alias", "broken"]
    matchers = ["Edit", "Write|Edit", "Edit.*", "^Edit$", "mcp__memory__.*", "Task", "Edit("]
    config = {
        "PreToolUse": [
            {"matcher": m, "hooks": [{"command": f"echo {n}"}]}
            for n, m in zip(names, matchers, strict=True)
        ]
    }
    r = make(tmp_path, config)
    assert len(r.warnings) == 1  # the broken regex

    async def ran(tool: str) -> set[str]:
        out = await pre(r, tool, x=1)
        return {c.split()[1] for c in out.ran}

    assert await ran("Edit") == {"exact", "list", "regex", "anchored"}
    assert await ran("NotebookEdit") == {"regex"}
    assert await ran("mcp__memory__create") == {"mcp"}
    assert await ran("Agent") == {"alias"}
    assert await ran("Read") == set()


async def test_if_condition_filters_handlers(tmp_path: Path) -> None:
    config = {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"command": "echo git", "if": "Bash(git *)"}]},
            {"hooks": [{"command": "echo py", "if": "Edit(*.py)"}]},
        ]
    }
    r = make(tmp_path, config)
    assert (await pre(r, "Bash", command="git status")).ran == ("echo git",)
    assert (await pre(r, "Bash", command="ls -la")).ran == ()
    assert (await pre(r, "Edit", file_path=str(tmp_path / "a.py"))).ran == ("echo py",)
    assert (await pre(r, "Edit", file_path=str(tmp_path / "a.md"))).ran == ()


async def test_identical_handlers_run_once(tmp_path: Path) -> None:
    log = tmp_path / "log"
    cmd = hook(tmp_path, f"echo x >> {log}")
    config = {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"command": cmd}]},
            {"matcher": "*", "hooks": [{"command": cmd, "timeout": 9}]},
        ]
    }
    out = await pre(make(tmp_path, config))
    assert out.ran == (cmd,)
    assert log.read_text() == "x\n"


@pytest.mark.parametrize(
    ("decisions", "winner", "reason"),
    [
        (["allow", "ask", "deny"], Decision.DENY, "r-deny"),
        (["allow", "ask"], Decision.ASK, "r-ask"),
        (["allow", "defer"], Decision.ALLOW, "r-allow"),
    ],
)
async def test_aggregation_deny_over_ask_over_allow(
    tmp_path: Path, decisions: list[str], winner: Decision, reason: str
) -> None:
    cmds = [hook(tmp_path, emit(pre_json(d, f"r-{d}"))) for d in decisions]
    out = await pre(make(tmp_path, conf("PreToolUse", *cmds)))
    assert (out.decision, out.decision_reason) == (winner, reason)


async def test_last_updated_input_wins_and_messages_keep_config_order(tmp_path: Path) -> None:
    cmds = [
        hook(
            tmp_path,
            "sleep 0.2\n" + emit(pre_json("allow", updatedInput={"n": 1}, systemMessage="a")),
        ),
        hook(tmp_path, emit({**pre_json("allow", updatedInput={"n": 2}), "systemMessage": "b"})),
    ]
    out = await pre(make(tmp_path, conf("PreToolUse", *cmds)))
    assert out.updated_input == {"n": 2}
    assert out.system_messages == ("b",)  # systemMessage inside hookSpecificOutput is not read


async def test_handlers_run_in_parallel(tmp_path: Path) -> None:
    body = 'date +%s.%N > "$1.start"; sleep 0.5; date +%s.%N > "$1.end"'
    script = shlex.split(hook(tmp_path, body))[0]
    config = {"PreToolUse": [{"hooks": [{"command": f"{script} {tmp_path}/{n}"} for n in "ab"]}]}
    out = await pre(make(tmp_path, config))
    assert len(out.ran) == 2
    start = [float((tmp_path / f"{n}.start").read_text()) for n in "ab"]
    end = [float((tmp_path / f"{n}.end").read_text()) for n in "ab"]
    assert max(start) < min(end)  # the two intervals overlap


# --- timeouts, sizes, inputs, env --------------------------------------------------------


def live_members(pgid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] != b"Z":
            out.append(int(entry.name))
    return out


async def test_timeout_kills_the_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pgid"
    cmd = hook(tmp_path, f"echo $$ > {pidfile}; sleep 100 & sleep 100 & echo partial; wait")
    r = make(tmp_path, conf("PreToolUse", cmd, timeout=0.5))
    out = await pre(r)
    assert out.decision is None and out.additional_context == ()
    assert out.system_messages == (f"PreToolUse hook '{cmd}' timed out after 0.5s",)
    assert live_members(int(pidfile.read_text())) == []


async def test_five_megabytes_of_output(tmp_path: Path) -> None:
    cmd = hook(tmp_path, "head -c 5000000 /dev/zero | tr '\\0' a")
    r = make(tmp_path, conf("UserPromptSubmit", cmd))
    out = await r.run_event("UserPromptSubmit", {"prompt": "x"})
    (ctx,) = out.additional_context
    assert len(ctx) <= 10_000 and ctx.startswith("aaaa")
    path = Path(ctx.rsplit("saved to ", 1)[1].rstrip("]"))
    assert path.read_text() == "a" * 1_000_000  # capture stops at 1 MB
    assert any("1 MB" in m for m in out.system_messages)


async def test_output_strings_capped_with_file_path(tmp_path: Path) -> None:
    big = "x" * 25_000 + "END"
    body = emit({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": big}})
    r = make(tmp_path, conf("SessionStart", hook(tmp_path, body)), output_dir=tmp_path / "outs")
    (ctx,) = (await r.run_event("SessionStart", {"source": "startup"})).additional_context
    assert len(ctx) <= 10_000 and "25003 chars" in ctx
    saved = ctx.rsplit("saved to ", 1)[1].rstrip("]")
    assert Path(saved).parent == tmp_path / "outs" and Path(saved).read_text() == big


async def test_default_output_dir_is_under_the_session(tmp_path: Path) -> None:
    body = emit({"systemMessage": "y" * 12_000})
    r = make(tmp_path, conf("Stop", hook(tmp_path, body)))
    (msg,) = (await r.run_event("Stop", {})).system_messages
    assert str(tmp_path / "sess-1" / "hook-outputs") in msg


async def test_stdin_fields_received_by_the_hook(tmp_path: Path) -> None:
    dump = tmp_path / "stdin"
    cmd = hook(tmp_path, f"cat >> {dump}; echo >> {dump}")
    config = {e: conf(e, cmd)[e] for e in ("PreToolUse", "PostToolUse", "Stop", "SessionStart")}
    r = make(tmp_path, config)
    await pre(r, "Bash", command="npm test")
    await r.post_tool_use(
        tool_name="Bash",
        tool_input={"command": "npm test"},
        tool_response={"stdout": "ok", "path": Path("/p")},
        tool_use_id="toolu_2",
        permission_mode="acceptEdits",
        duration_ms=12,
    )
    await r.run_event("Stop", {"stop_hook_active": True, "permission_mode": "plan"})
    await r.run_event("SessionStart", {"source": "resume"})
    p, post, stop, start = [json.loads(line) for line in dump.read_text().splitlines()]
    common = {"session_id": "sess-1", "transcript_path": str(tmp_path / "sess-1.jsonl")}
    assert p == {
        **common,
        "cwd": str(tmp_path),
        "hook_event_name": "PreToolUse",
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_input": {"command": "npm test"},
        "tool_use_id": "toolu_1",
    }
    assert post["tool_response"] == {"stdout": "ok", "path": "/p"} and post["duration_ms"] == 12
    assert post["permission_mode"] == "acceptEdits" and post["hook_event_name"] == "PostToolUse"
    assert stop["stop_hook_active"] is True and stop["permission_mode"] == "plan"
    assert start["source"] == "resume" and start["hook_event_name"] == "SessionStart"


async def test_env_vars(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NERVE_TEST_PROCESS_VAR", "from-process")
    out_file = tmp_path / "env"
    body = (
        f'printf "%s\\n" "$CLAUDE_PROJECT_DIR" "$NERVE_PROJECT_DIR" "$FROM_SETTINGS" '
        f'"$NERVE_TEST_PROCESS_VAR" "$PWD" > {out_file}\n'
        # /proc/<pid>/stat fields 6 and 7: session id and controlling tty (0 = none)
        f'read -r -a f < /proc/$$/stat; echo "${{f[5]}} $$ $PPID ${{f[6]}}" >> {out_file}'
    )
    project = tmp_path / "proj"
    r = make(
        tmp_path,
        conf("Notification", hook(tmp_path, body)),
        project_dir=project,
        env={"FROM_SETTINGS": "s"},
    )
    await r.run_event("Notification", {"message": "m", "notification_type": "idle_prompt"})
    lines = out_file.read_text().splitlines()
    assert lines[:5] == [str(project), str(project), "s", "from-process", str(tmp_path)]
    session, pid, ppid, tty = lines[5].split()
    # its own session (led by the hook's ``sh -c``, or the script sh exec'd), no terminal
    assert session in (pid, ppid) and tty == "0"


async def test_run_event_matches_the_events_own_field(tmp_path: Path) -> None:
    config = {
        "SessionStart": [
            {"matcher": "resume", "hooks": [{"command": "echo resumed"}]},
            {"matcher": "startup|clear", "hooks": [{"command": "echo fresh"}]},
        ]
    }
    r = make(tmp_path, config)
    assert (await r.run_event("SessionStart", {"source": "startup"})).ran == ("echo fresh",)
    assert (await r.run_event("SessionStart", {"source": "resume"})).ran == ("echo resumed",)
    forced = await r.run_event("SessionStart", {}, match_value="resume")
    assert forced.additional_context == ("resumed",)


async def test_permission_request_decisions(tmp_path: Path) -> None:
    def answer(d: dict[str, Any]) -> str:
        out = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": d}}
        return hook(tmp_path, emit(out))

    allow = answer({"behavior": "allow", "updatedInput": {"command": "ls -1"}})
    deny = answer({"behavior": "deny", "message": "not on fridays", "interrupt": True})

    async def ask(*cmds: str):  # type: ignore[no-untyped-def]
        r = make(tmp_path, conf("PermissionRequest", *cmds, matcher="Bash"))
        return await r.permission_request(
            tool_name="Bash",
            tool_input={"command": "ls"},
            permission_mode="default",
            suggestions=[],
        )

    a = await ask(allow)
    assert (a.decision, a.updated_input, a.interrupt) == (
        Decision.ALLOW,
        {"command": "ls -1"},
        False,
    )
    d = await ask(allow, deny)
    assert (d.decision, d.message, d.interrupt, d.updated_input) == (
        Decision.DENY,
        "not on fridays",
        True,
        None,
    )


async def test_permission_denied_runs(tmp_path: Path) -> None:
    dump = tmp_path / "in"
    r = make(tmp_path, conf("PermissionDenied", hook(tmp_path, f"cat > {dump}")))
    out = await r.permission_denied(tool_name="Bash", tool_input={}, tool_use_id="t", reason="nope")
    assert len(out.ran) == 1 and json.loads(dump.read_text())["reason"] == "nope"


# --- policy, disable_all, config warnings ------------------------------------------------


async def test_policy_hooks_run_when_all_hooks_disabled(tmp_path: Path) -> None:
    user = conf("PreToolUse", hook(tmp_path, emit(pre_json("allow", "user"))))
    policy = conf("PreToolUse", hook(tmp_path, emit(pre_json("deny", "policy"))))
    r = make(tmp_path, user | conf("Stop", "echo s"), policy_config=policy, disable_all=True)
    assert r.has_hooks("PreToolUse") and not r.has_hooks("Stop")
    out = await pre(r)
    assert (out.decision, out.decision_reason, len(out.ran)) == (Decision.DENY, "policy", 1)
    both = await pre(make(tmp_path, user, policy_config=policy))
    assert len(both.ran) == 2 and both.decision == Decision.DENY


async def test_malformed_config_warns_via_notify_and_good_hooks_still_run(tmp_path: Path) -> None:
    notes: list[str] = []
    config = {
        "PreToolUse": [{"matcher": "[", "hooks": [{"command": "echo bad"}]}, 5],
        "Stop": [{"hooks": [{"type": "mcp_tool", "tool": "x"}, {"command": "echo fine"}]}],
    }
    r = make(tmp_path, config, notify=notes.append)
    assert notes == list(r.warnings) and len(notes) == 3
    assert (await pre(r)).ran == ()
    assert (await r.run_event("Stop", {})).ran == ("echo fine",)
    assert not r.has_hooks("SessionEnd")
    out = await r.run_event("SessionEnd", {"reason": "other"})
    assert out.ran == () and not out.blocked
