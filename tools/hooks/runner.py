"""Command hooks compatible with Claude Code: select, run in parallel, interpret, aggregate.

``HookRunner`` implements ``HookRunnerProtocol`` for one ``HookSession`` (what every hook's input
says of the session). Every matching handler of one event runs at once; each handler's exit code and stdout become an internal effect; the effects are folded, in
config order, into one typed outcome (``tools.hooks.types``). A hook that hangs, crashes, prints garbage
or does not exist produces messages in the outcome, never an exception.

Aggregation rules (where CC's documentation is silent, the choice is ours and noted):
PreToolUse decisions combine deny > ask > allow; the reasons of the winning decision are joined;
when several hooks return ``updatedInput`` the last one in config order wins (policy hooks come
first). Any ``continue: false`` stops. Messages and contexts are concatenated in config order.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
import tempfile
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from permissions.types import Decision
from tools.hooks.matcher import (
    GUARD_EVENTS,
    TOOL_EVENTS,
    HookHandler,
    if_condition_matches,
    parse_hooks_config,
    tool_name_variants,
)
from tools.hooks.types import (
    HookEventOutcome,
    PermissionRequestOutcome,
    PostToolUseOutcome,
    PreToolUseOutcome,
)
from tools.records import datarecord

if TYPE_CHECKING:
    from tools.hooks.callbacks import HookCallback
    from tools.hooks.output import HandlerEffect
    from tools.hooks.verdict import HookAgent
    from tools.side_model import SideModel

# What runs a hook (``dispatch``: processes, HTTP, prompt and agent verdicts, output parsing) is
# imported when a hook first runs: a session without hooks (most) does not load it at start-up.

__all__ = [
    "MAX_OUTPUT_CHARS",
    "PUBLIC_PERMISSION_MODES",
    "HookRunner",
    "HookSession",
    "public_permission_mode",
]

MAX_OUTPUT_CHARS = 10_000
_PREVIEW_CHARS = 2_000
# Mode names a hook may see (Claude Code's); an internal mode such as ``bubble`` (a sub-agent
# whose asks go to its parent) is shown as ``default``: the user is asked, as in default mode.
PUBLIC_PERMISSION_MODES = frozenset(
    {"default", "plan", "acceptEdits", "auto", "dontAsk", "bypassPermissions"}
)
_MATCH_FIELDS = {
    "SessionStart": "source",
    "SessionEnd": "reason",
    "Notification": "notification_type",
    "PreCompact": "trigger",
    "PostCompact": "trigger",
    "SubagentStart": "agent_type",
    "SubagentStop": "agent_type",
}


def _json_default(obj: Any) -> Any:
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    return str(obj)


def public_permission_mode(mode: str | None) -> str | None:
    """The ``permission_mode`` a hook payload carries: a name users know, never an internal one."""
    if mode is None:
        return None
    text = str(getattr(mode, "value", mode))
    return text if text in PUBLIC_PERMISSION_MODES else "default"


@datarecord(frozen=True, slots=True)
class HookSession:
    """The session hooks run for, as every hook's input and environment tell it."""

    session_id: str
    transcript_path: str | None
    cwd: Path
    project_dir: Path | None = None  # ``CLAUDE_PROJECT_DIR`` (None: the cwd)


def _default_output_dir(session: HookSession) -> Path:
    """Where long hook outputs go: beside the transcript, else in the temp dir."""
    if session.transcript_path:
        return Path(session.transcript_path).parent / session.session_id / "hook-outputs"
    return Path(tempfile.gettempdir()) / "nerve-hook-outputs" / session.session_id


class HookRunner:
    """Runs the command hooks of one session. Construct once; methods are safe to call often."""

    def __init__(
        self,
        config: Mapping[str, Any] | Any,
        *,
        session: HookSession,
        policy_config: Mapping[str, Any] | Any | None = None,
        disable_all: bool = False,
        env: Mapping[str, str] | None = None,
        default_timeout_s: float = 600,
        notify: Callable[[str], None] | None = None,
        output_dir: Path | None = None,
    ) -> None:
        self.session_id = session.session_id
        self.transcript_path = session.transcript_path
        self.cwd = Path(session.cwd)
        self.project_dir = Path(session.project_dir) if session.project_dir is not None else None
        self.default_timeout_s = default_timeout_s
        self._settings_env = dict(env or {})
        self._notify = notify
        self._warnings: list[str] = []
        # The model ``prompt`` hooks ask; the session attaches its own (None: they fail closed).
        self.side_model: SideModel | None = None
        # The read-only sub-agent ``agent`` hooks run (None: they fail closed).
        self.agent_hook: HookAgent | None = None
        # The program that answers ``callback`` hooks (the Agent SDK; None: they fail).
        self.hook_callback: HookCallback | None = None
        # Told of each handler as it starts (effect None) and ends: (event, label, id, effect)
        self.observer: Callable[[str, str, str, HandlerEffect | None], None] | None = None
        if output_dir is None:
            output_dir = _default_output_dir(session)
        self._output_dir = output_dir
        # SessionStart hooks may write ``export X=...`` lines here (Claude Code's CLAUDE_ENV_FILE)
        self.env_file = output_dir.parent / "session-env.sh"
        # Policy hooks first: they run whatever the user disabled, and come first in order.
        policy = parse_hooks_config(policy_config, policy=True, warn=self._warn)
        user = {} if disable_all else parse_hooks_config(config, policy=False, warn=self._warn)
        self._handlers: dict[str, list[HookHandler]] = {}
        for source in (policy, user):
            for event, handlers in source.items():
                self._handlers.setdefault(event, []).extend(handlers)

    # -- public API -----------------------------------------------------------------------

    @property
    def warnings(self) -> tuple[str, ...]:
        """Configuration problems found at construction (malformed groups/handlers, regexes)."""
        return tuple(self._warnings)

    def add_handlers(self, handlers: Mapping[str, Sequence[HookHandler]]) -> None:
        """More handlers (the Agent SDK's callbacks), after the configured ones of each event."""
        for event, more in handlers.items():
            self._handlers.setdefault(event, []).extend(more)

    def has_hooks(self, event: str) -> bool:
        """Cheap check: is any handler configured for ``event``?"""
        return bool(self._handlers.get(event))

    async def pre_tool_use(
        self,
        *,
        tool_name: str,
        tool_input: dict[str, Any],
        tool_use_id: str,
        permission_mode: str,
        agent: Mapping[str, str] | None = None,
    ) -> PreToolUseOutcome:
        """Run PreToolUse hooks; decision deny > ask > allow, last ``updatedInput`` wins.

        ``agent`` (here and in the other tool events): the ``agent_id``/``agent_type`` of the
        sub-agent whose call it is, which the payload carries (absent on the main thread)."""
        payload = {"tool_name": tool_name, "tool_input": tool_input, "tool_use_id": tool_use_id}
        payload.update(agent or {})
        effects = await self._fire("PreToolUse", payload, permission_mode, tool_name, tool_input)
        decisions = [e.decision for e in effects if e.decision is not None]
        decision = max(decisions) if decisions else None
        reasons = [
            e.decision_reason for e in effects if e.decision == decision and e.decision_reason
        ]
        updated = [e.updated_input for e in effects if e.updated_input is not None]
        return PreToolUseOutcome(
            **self._fold(effects),
            decision=decision,
            decision_reason=self._join(reasons),
            updated_input=updated[-1] if updated else None,
        )

    async def post_tool_use(
        self,
        *,
        tool_name: str,
        tool_input: dict[str, Any],
        tool_response: Any,
        tool_use_id: str,
        permission_mode: str,
        duration_ms: int | None = None,
        agent: Mapping[str, str] | None = None,
    ) -> PostToolUseOutcome:
        """Run PostToolUse hooks; the last ``updatedToolOutput`` in config order wins."""
        payload: dict[str, Any] = {
            "tool_name": tool_name,
            "tool_input": tool_input,
            "tool_response": tool_response,
            "tool_use_id": tool_use_id,
            **(agent or {}),
        }
        if duration_ms is not None:
            payload["duration_ms"] = duration_ms
        effects = await self._fire("PostToolUse", payload, permission_mode, tool_name, tool_input)
        from tools.hooks.output import UNSET

        outputs = [e.updated_output for e in effects if e.updated_output is not UNSET]
        return PostToolUseOutcome(
            **self._fold(effects), updated_output=outputs[-1] if outputs else None
        )

    async def post_tool_use_failure(
        self,
        *,
        tool_name: str,
        tool_input: dict[str, Any],
        tool_use_id: str,
        error: str,
        permission_mode: str,
        is_interrupt: bool = False,
        agent: Mapping[str, str] | None = None,
    ) -> HookEventOutcome:
        """Run PostToolUseFailure hooks (cannot block; stderr of exit 2 goes to the model)."""
        payload = {
            "tool_name": tool_name,
            "tool_input": tool_input,
            "tool_use_id": tool_use_id,
            "error": error,
            "is_interrupt": is_interrupt,
            **(agent or {}),
        }
        effects = await self._fire(
            "PostToolUseFailure", payload, permission_mode, tool_name, tool_input
        )
        return HookEventOutcome(**self._fold(effects))

    async def permission_request(
        self,
        *,
        tool_name: str,
        tool_input: dict[str, Any],
        permission_mode: str,
        suggestions: list[dict[str, Any]],
        agent: Mapping[str, str] | None = None,
    ) -> PermissionRequestOutcome:
        """Run PermissionRequest hooks; any deny wins over allow."""
        payload = {
            "tool_name": tool_name,
            "tool_input": tool_input,
            "permission_suggestions": suggestions,
            **(agent or {}),
        }
        effects = await self._fire(
            "PermissionRequest", payload, permission_mode, tool_name, tool_input
        )
        decisions = [e.perm_decision for e in effects if e.perm_decision is not None]
        decision = max(decisions) if decisions else None
        winners = [
            e for e in effects if e.perm_decision is not None and e.perm_decision == decision
        ]
        updated = [e.updated_input for e in winners if e.updated_input is not None]
        return PermissionRequestOutcome(
            **self._fold(effects),
            decision=decision,
            message=self._join([e.perm_message for e in winners if e.perm_message]),
            updated_input=updated[-1] if updated and decision == Decision.ALLOW else None,
            interrupt=any(e.perm_interrupt for e in winners),
        )

    async def permission_denied(
        self, *, tool_name: str, tool_input: dict[str, Any], tool_use_id: str, reason: str
    ) -> HookEventOutcome:
        """Run PermissionDenied hooks (informational; ``retry`` is not modelled yet)."""
        payload = {
            "tool_name": tool_name,
            "tool_input": tool_input,
            "tool_use_id": tool_use_id,
            "reason": reason,
        }
        effects = await self._fire("PermissionDenied", payload, None, tool_name, tool_input)
        return HookEventOutcome(**self._fold(effects))

    async def run_event(
        self, event: str, payload: dict[str, Any], *, match_value: str | None = None
    ) -> HookEventOutcome:
        """Run any other event. Without ``match_value`` the event's own payload field is used."""
        if match_value is None and event in _MATCH_FIELDS:
            candidate = payload.get(_MATCH_FIELDS[event])
            match_value = candidate if isinstance(candidate, str) else None
        tool_name = payload.get("tool_name") if event in TOOL_EVENTS else None
        tool_input = payload.get("tool_input")
        effects = await self._fire(
            event,
            dict(payload),
            payload.get("permission_mode"),
            tool_name if isinstance(tool_name, str) else None,
            tool_input if isinstance(tool_input, dict) else {},
            match_value=match_value,
        )
        return HookEventOutcome(**self._fold(effects))

    # -- selection and running -----------------------------------------------------------

    def _warn(self, message: str) -> None:
        self._warnings.append(message)
        if self._notify is not None:
            try:
                self._notify(message)
            except Exception:  # a broken UI callback must not break hook loading
                pass

    def _select(
        self,
        event: str,
        match_value: str | None,
        tool_name: str | None,
        tool_input: Mapping[str, Any],
    ) -> list[HookHandler]:
        if tool_name is not None:
            values: tuple[str, ...] | None = tool_name_variants(tool_name)
        elif match_value is not None:
            values = (match_value,)
        else:
            values = None  # nothing to compare with: the matcher does not apply
        seen: set[tuple[str, str, tuple[str, ...] | None]] = set()
        out: list[HookHandler] = []
        for h in self._handlers.get(event, ()):
            if h.unrunnable is not None and event not in GUARD_EVENTS:
                continue  # reported at load time; it only guards where it can deny
            if h.matcher.broken or (values is not None and not h.matcher.matches(values)):
                continue
            if h.if_rule is not None and tool_name is not None:
                if not if_condition_matches(
                    h.if_rule, tool_name, tool_input, cwd=self.cwd, project_dir=self.project_dir
                ):
                    continue
            if h.key in seen:
                continue
            seen.add(h.key)
            out.append(h)
        return out

    async def _fire(
        self,
        event: str,
        payload: dict[str, Any],
        permission_mode: str | None,
        tool_name: str | None,
        tool_input: Mapping[str, Any],
        *,
        match_value: str | None = None,
    ) -> list[HandlerEffect]:
        handlers = self._select(event, match_value, tool_name, tool_input)
        if not handlers:
            return []
        data: dict[str, Any] = {
            "session_id": self.session_id,
            "transcript_path": self.transcript_path,
            "cwd": str(self.cwd),
            "hook_event_name": event,
        }
        data.update(payload)
        mode = public_permission_mode(permission_mode or payload.get("permission_mode"))
        if mode is not None:
            data["permission_mode"] = mode
        data["hook_event_name"] = event
        try:
            stdin = json.dumps(data, default=_json_default).encode()
        except (TypeError, ValueError) as exc:
            from tools.hooks.output import HandlerEffect

            msg = f"{event} hook error: could not encode the hook input ({exc})"
            return [HandlerEffect(h.name, system_messages=[msg]) for h in handlers]
        env = self._env()
        if event == "SessionStart":
            try:
                self.env_file.parent.mkdir(parents=True, exist_ok=True)
                self.env_file.touch()
                env["CLAUDE_ENV_FILE"] = str(self.env_file)
            except OSError as exc:
                self._warn(f"SessionStart: cannot create CLAUDE_ENV_FILE {self.env_file}: {exc}")
        label = f"{event}:{match_value}" if match_value else event
        runs = (self._observed(h, event, label, stdin, env) for h in handlers)
        return list(await asyncio.gather(*runs))

    async def _observed(
        self, h: HookHandler, event: str, label: str, stdin: bytes, env: Mapping[str, str]
    ) -> HandlerEffect:
        observer = self.observer
        if observer is None:
            return await self._run_one(h, event, stdin, env)
        run_id = str(uuid.uuid4())
        observer(event, label, run_id, None)
        effect = await self._run_one(h, event, stdin, env)
        observer(event, label, run_id, effect)
        return effect

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update({k: str(v) for k, v in self._settings_env.items()})
        root = str(self.project_dir or self.cwd)
        env["CLAUDE_PROJECT_DIR"] = root
        env["NERVE_PROJECT_DIR"] = root
        # Markers hooks test to know they run under an agent (Claude Code sets CLAUDECODE=1).
        env["CLAUDECODE"] = "1"
        env["NERVE"] = "1"
        return env

    def argv(self, h: HookHandler, env: Mapping[str, str]) -> list[str]:
        """The command line of command hook ``h`` (used by ``tools.hooks.dispatch``)."""
        if h.args is None:
            return ["sh", "-c", h.command]  # as Claude Code runs a hook's command

        # Exec form has no shell, so expand the project-dir variables users put in paths.
        def expand(text: str) -> str:
            for name in ("CLAUDE_PROJECT_DIR", "NERVE_PROJECT_DIR"):
                text = text.replace("${" + name + "}", env[name]).replace("$" + name, env[name])
            return text

        return [expand(h.command), *(expand(a) for a in h.args)]

    async def _run_one(
        self, h: HookHandler, event: str, stdin: bytes, env: Mapping[str, str]
    ) -> HandlerEffect:
        from tools.hooks.dispatch import run_handler  # the runners, on first use

        return await run_handler(self, h, event, stdin, env)

    # -- aggregation ---------------------------------------------------------------------

    def _fold(self, effects: list[HandlerEffect]) -> dict[str, Any]:
        stop_reasons = [e.stop_reason for e in effects if e.stop and e.stop_reason]
        return {
            "stop": any(e.stop for e in effects),
            "stop_reason": self._cap(stop_reasons[0]) if stop_reasons else None,
            "system_messages": tuple(self._cap(m) for e in effects for m in e.system_messages),
            "additional_context": tuple(
                self._cap(c) for e in effects for c in e.additional_context
            ),
            "blocked": any(e.blocked for e in effects),
            "block_reason": self._join([e.block_reason for e in effects if e.blocked]),
            "ran": tuple(e.name for e in effects),
        }

    def _join(self, texts: Sequence[str | None]) -> str | None:
        unique = list(dict.fromkeys(t for t in texts if t))
        return self._cap("\n".join(unique)) if unique else None

    def _cap(self, text: str) -> str:
        """Strings over 10,000 chars go to a file; the model/user get a preview and the path."""
        if len(text) <= MAX_OUTPUT_CHARS:
            return text
        digest = hashlib.sha256(text.encode("utf-8", errors="replace")).hexdigest()[:16]
        path = self._output_dir / f"hook-output-{digest}.txt"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8", errors="replace")
        except OSError as exc:
            return f"{text[:_PREVIEW_CHARS]}\n[hook output truncated: {len(text)} chars; {exc}]"
        return (
            f"{text[:_PREVIEW_CHARS]}\n[hook output truncated: {len(text)} chars in total; "
            f"full output saved to {path}]"
        )
