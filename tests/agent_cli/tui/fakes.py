"""A scripted SessionPort test double for TUI tests. It fails loudly: an unscripted turn, an
unconsumed turn, or a call the test did not expect is recorded and raised, and ``check()``
(run by the ``session`` fixture at teardown) fails the test on any of them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from agent_cli.loop.events import (
    AgentEvent,
    PermissionDecided,
    ToolFinished,
    ToolStarted,
    TurnFinished,
)
from agent_cli.session.port import (
    BackgroundTaskView,
    PermissionHandler,
    RuleView,
    ToolView,
)
from permissions.types import (
    Decision,
    PermissionRule,
    RuleBehavior,
    RuleSource,
    RuleValue,
    SafetyCheck,
    Verdict,
)
from tools.context import PermissionPrompt, PermissionResponse

__all__ = ["Ask", "FakeSession", "Hold", "bash_prompt"]

CYCLE = ["default", "acceptEdits", "plan"]


@dataclass
class Ask:
    """Step: ask the UI's permission handler, then finish the tool by the answer."""

    prompt: PermissionPrompt
    result: str = "ok"


@dataclass
class Hold:
    """Step: a tool that runs until ``abort()`` (or ``seconds``), like a long Bash command."""

    tool_use_id: str
    seconds: float = 10.0


def bash_prompt(
    command: str,
    *,
    tool_use_id: str = "toolu_1",
    suggestions: tuple[str, ...] = (),
    reason: str = "Bash commands that change things need approval",
    rule: PermissionRule | None = None,
    safety: str | None = None,
    preview: str | None = None,
) -> PermissionPrompt:
    """A realistic prompt as the engine would build it for a Bash call."""
    verdict = Verdict(
        Decision.ASK,
        reason,
        rule=rule,
        safety=SafetyCheck(safety) if safety else None,
        suggestions=tuple(RuleValue("Bash", s) for s in suggestions),
    )
    return PermissionPrompt(
        "Bash", tool_use_id, {"command": command}, verdict, title="Bash command", preview=preview
    )


def ask_rule(value: str) -> PermissionRule:
    return PermissionRule(RuleSource.PROJECT, RuleBehavior.ASK, RuleValue("Bash", value))


@dataclass
class FakeSession:
    """Plays scripted turns; every other method behaves like a tiny real session."""

    turns: list[list[Any]] = field(default_factory=list)
    session_id: str = "sess-1"
    model: str = "claude-test"
    bypass_available: bool = False
    stored: list[dict[str, Any]] = field(default_factory=list)
    stored_messages: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    restored: list[dict[str, Any]] = field(default_factory=list)  # `nerve -c` / `-r ID`
    tool_views: list[ToolView] = field(default_factory=list)
    task_views: list[BackgroundTaskView] = field(default_factory=list)
    mcp_views: list[Any] = field(default_factory=list)  # tools.mcp.McpServerView
    todo_list: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = field(
        default_factory=lambda: {
            "input_tokens": 1200,
            "output_tokens": 340,
            "cost_usd": 0.0123,
            "context_tokens": 15400,
            "turns": 1,
        }
    )
    prompts: list[str] = field(default_factory=list)
    responses: list[PermissionResponse] = field(default_factory=list)
    rule_list: list[RuleView] = field(default_factory=list)
    shell_commands: list[str] = field(default_factory=list)
    aborts: int = 0
    clears: int = 0
    closed: bool = False
    errors: list[str] = field(default_factory=list)
    _mode: str = "default"
    _handler: PermissionHandler | None = None
    _abort: asyncio.Event | None = None

    def _fail(self, message: str) -> AssertionError:
        self.errors.append(message)
        return AssertionError(message)

    def check(self) -> None:
        """Fail on anything unexpected or any scripted turn left unplayed."""
        assert not self.errors, self.errors
        assert not self.turns, f"{len(self.turns)} scripted turn(s) never ran"

    @property
    def mode(self) -> str:
        return self._mode

    def set_mode(self, mode: str) -> None:
        self._mode = mode

    def cycle_mode(self) -> str:
        cycle = [*CYCLE, "bypassPermissions"] if self.bypass_available else CYCLE
        i = cycle.index(self._mode) if self._mode in cycle else -1
        self._mode = cycle[(i + 1) % len(cycle)]
        return self._mode

    def set_permission_handler(self, handler: PermissionHandler) -> None:
        self._handler = handler

    async def run_turn(self, prompt: str) -> AsyncIterator[AgentEvent]:
        self.prompts.append(prompt)
        if not self.turns:
            raise self._fail(f"unscripted turn: {prompt!r}")
        steps = self.turns.pop(0)
        self._abort = asyncio.Event()
        for step in steps:
            if isinstance(step, Ask):
                if self._handler is None:
                    raise self._fail("no permission handler set")
                p = step.prompt
                yield ToolStarted(
                    p.tool_use_id, p.tool_name, p.input, f"Bash({p.input['command']})"
                )
                response: PermissionResponse = await self._handler(p)
                self.responses.append(response)
                decision = "allow" if response.allowed else "deny"
                yield PermissionDecided(p.tool_use_id, p.tool_name, decision, "user", "user")
                if response.allowed:
                    yield ToolFinished(p.tool_use_id, p.tool_name, step.result, False)
                else:
                    text = f"The user denied this. {response.feedback or ''}".strip()
                    yield ToolFinished(p.tool_use_id, p.tool_name, text, True)
                if self._abort.is_set():  # as the loop does: an abort ends the turn here
                    yield TurnFinished("aborted", 1)
                    return
            elif isinstance(step, Hold):
                try:
                    await asyncio.wait_for(self._abort.wait(), step.seconds)
                except TimeoutError:
                    raise self._fail("Hold was never aborted") from None
                yield ToolFinished(step.tool_use_id, "Bash", "Interrupted by user", True)
                yield TurnFinished("aborted", 1)
                return
            else:
                yield step
                await asyncio.sleep(0)

    def abort(self) -> None:
        self.aborts += 1
        if self._abort is not None:
            self._abort.set()

    async def run_shell(self, command: str) -> str:
        self.shell_commands.append(command)
        proc = await asyncio.create_subprocess_shell(
            command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        out, _ = await proc.communicate()
        return out.decode()

    def clear(self) -> None:
        self.clears += 1

    def rules(self) -> list[RuleView]:
        return list(self.rule_list)

    def add_rule(self, behavior: str, rule: str, destination: str = "localSettings") -> None:
        self.rule_list.append(RuleView(behavior, rule, destination))

    def remove_rule(self, behavior: str, rule: str, source: str) -> bool:
        view = RuleView(behavior, rule, source)
        if view in self.rule_list:
            self.rule_list.remove(view)
            return True
        return False

    def tools(self) -> list[ToolView]:
        return list(self.tool_views)

    def background_tasks(self) -> list[BackgroundTaskView]:
        return list(self.task_views)

    def mcp_servers(self) -> list[Any]:
        return list(self.mcp_views)

    def todos(self) -> list[dict[str, Any]]:
        return [dict(t) for t in self.todo_list]

    def usage_summary(self) -> dict[str, Any]:
        return dict(self.usage)

    def set_model(self, model: str) -> None:
        self.model = model

    def list_sessions(self) -> list[dict[str, Any]]:
        return list(self.stored)

    def restored_messages(self) -> list[dict[str, Any]]:
        return list(self.restored)

    async def resume(self, session_id: str) -> list[dict[str, Any]]:
        if session_id not in self.stored_messages:
            raise self._fail(f"resume of unknown session {session_id}")
        self.session_id = session_id
        return self.stored_messages[session_id]

    async def close(self) -> None:
        self.closed = True
