"""Small tools and contexts for the pipeline, executor and registry tests.

The tools are real ``build_tool`` tools; only their ``call`` is trivial. ``ScriptedPrompts`` is a
scripted UI port: it answers permission prompts from a list and fails loudly when asked more
often than scripted.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from permissions.rules import make_rule
from permissions.types import PermissionContext, PermissionMode, PermissionRule, ToolKind
from tools.base import Tool, build_tool
from tools.context import (
    Callbacks,
    PermissionPrompt,
    PermissionResponse,
    RuntimeState,
    ToolOptions,
    ToolServices,
    ToolUseContext,
)
from tools.result import ToolResult


class TextIn(BaseModel):
    text: str = ""


class CommandIn(BaseModel):
    command: str


async def _echo(inp: Any, _ctx: ToolUseContext, _progress: Any) -> ToolResult:
    return ToolResult(getattr(inp, "text", "") or "ok")


def simple_tool(name: str = "Plain", **kw: Any) -> Tool[Any]:
    """A tool with only name, schema and call (all the fail-closed defaults)."""
    kw.setdefault("input_model", TextIn)
    kw.setdefault("call", _echo)
    return build_tool(name=name, **kw)


def read_only_tool(name: str = "Peek", **kw: Any) -> Tool[Any]:
    kw.setdefault("is_read_only", True)
    kw.setdefault("is_concurrency_safe", True)
    return simple_tool(name, **kw)


def bash_like_tool(calls: list[str] | None = None) -> Tool[Any]:
    """A tool named Bash judged by the real bash analysis; records the commands it 'runs'."""
    seen = calls if calls is not None else []

    async def call(inp: CommandIn, _ctx: ToolUseContext, _p: Any) -> ToolResult:
        seen.append(inp.command)
        return ToolResult(f"ran {inp.command}")

    return build_tool(
        name="Bash",
        input_model=CommandIn,
        call=call,
        permission_kind=ToolKind.BASH,
        render_call=lambda inp: inp.command,
    )


def rules(*specs: tuple[str, str] | tuple[str, str, str]) -> tuple[PermissionRule, ...]:
    """``("Bash(rm:*)", "deny", "userSettings")`` → rules (source defaults to userSettings)."""
    out = []
    for spec in specs:
        text, behavior = spec[0], spec[1]
        source = spec[2] if len(spec) > 2 else "userSettings"  # type: ignore[misc]
        out.append(make_rule(text, behavior, source))
    return tuple(out)


@dataclass
class ScriptedPrompts:
    """Answers permission prompts in order; records every prompt it was shown."""

    answers: list[PermissionResponse] = field(default_factory=list)
    prompts: list[PermissionPrompt] = field(default_factory=list)

    async def __call__(self, prompt: PermissionPrompt) -> PermissionResponse:
        self.prompts.append(prompt)
        if not self.answers:
            raise AssertionError(f"unexpected permission prompt for {prompt.tool_name}")
        return self.answers.pop(0)


def make_ctx(
    tools: Sequence[Tool[Any]],
    *,
    mode: PermissionMode = PermissionMode.DEFAULT,
    rule_set: tuple[PermissionRule, ...] = (),
    cwd: Path | None = None,
    prompts: ScriptedPrompts | None = None,
    hooks: Any = None,
    session_dir: Path | None = None,
    services: ToolServices | None = None,
    events: list[Any] | None = None,
    progress: list[tuple[str, Any]] | None = None,
    loaded_deferred: frozenset[str] = frozenset(),
) -> ToolUseContext:
    cb: dict[str, Any] = {}
    if prompts is not None:
        cb["request_permission"] = prompts
    if events is not None:
        cb["on_event"] = events.append
    if progress is not None:
        cb["on_progress"] = lambda tid, p: progress.append((tid, p))
    return ToolUseContext(
        permissions=PermissionContext(mode=mode, rules=rule_set, cwd=cwd or Path.cwd()),
        options=ToolOptions(
            tools=tuple(tools),
            session_dir=session_dir,
            services=services or ToolServices(),
            loaded_deferred=loaded_deferred,
        ),
        state=RuntimeState(),
        callbacks=Callbacks(**cb),
        hooks=hooks,
    )


def hook_script(directory: Path, name: str, stdout: str, exit_code: int = 0) -> str:
    """A real executable hook script printing ``stdout``; returns the command to run it."""
    path = directory / name
    path.write_text(f"#!/bin/sh\ncat >/dev/null\ncat <<'EOF'\n{stdout}\nEOF\nexit {exit_code}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def hook_runner(directory: Path, config: dict[str, Any]) -> Any:
    from tools.hooks.runner import HookRunner, HookSession

    return HookRunner(
        config,
        session=HookSession("test-session", transcript_path=None, cwd=directory),
        output_dir=directory / "hook-out",
        env={"PATH": os.environ.get("PATH", "")},
        default_timeout_s=30,
    )


async def wait_for(event: asyncio.Event, what: str, timeout: float = 5.0) -> None:
    """Await ``event``; a bounded wait so a scheduling bug fails instead of hanging."""
    try:
        await asyncio.wait_for(event.wait(), timeout)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None
