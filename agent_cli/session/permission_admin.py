"""The session's permissions: its context read and changed, and who answers its prompts.

``PermissionAdmin`` is the part of ``AgentSession`` behind Shift+Tab and ``/mode`` (the mode,
recorded in the transcript), ``/permissions`` and "always allow" (rules, written to the settings
file of their source or, for ``session`` rules, recorded in the transcript so a resume brings
them back), ``/add-dir`` (a working directory for the rest of the session) and ``/resume`` (the
stored session's rules and mode). It holds the session's loop: each change replaces the loop's
live context (``loop.ctx``), and the records go to the loop's transcript.

``Approvals`` is the part the loop asks (``AgentLoop.permission_handler``): a front end with a
user (the TUI, the SDK's ``can_use_tool``, an MCP prompt tool) sets a handler; without one
(print mode) an ask is a denial that tells the model how the user could allow it. Whether a
handler is set is also what "a UI is attached" means to the Notification hooks' ``idle_prompt``
and to ``/init`` (which asks before writing its file).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_cli.loop.messages import system_reminder
from agent_cli.session.port import PermissionHandler, RuleView
from agent_cli.session.resume import restored_permissions
from permissions.types import PermissionMode, RuleSource, RuleValue

if TYPE_CHECKING:
    from agent_cli.loop.agent_loop import AgentLoop
    from agent_cli.transcripts.transcript import TranscriptReader
    from permissions.types import PermissionContext

__all__ = ["Approvals", "PermissionAdmin"]


class PermissionAdmin:
    """Mode, rules and working directories of ``loop``'s context (see the module docstring)."""

    def __init__(self, loop: AgentLoop, cwd: Path) -> None:
        self._loop = loop
        self._cwd = cwd

    @property
    def mode(self) -> str:
        return self._loop.ctx.permissions.mode.value

    def set_mode(self, mode: str) -> None:
        new = PermissionMode.parse(mode)
        perms = self._loop.ctx.permissions
        if new is PermissionMode.BYPASS and not perms.bypass_available:
            raise ValueError("bypassPermissions is only available when enabled at launch")
        before = perms.mode if new is PermissionMode.PLAN else None
        if new is PermissionMode.PLAN and perms.mode is PermissionMode.PLAN:
            before = perms.mode_before_plan
        self._set(replace(perms, mode=new, mode_before_plan=before))
        self.record_mode()

    def cycle_mode(self) -> str:
        """Shift+Tab: default -> acceptEdits -> plan (-> bypassPermissions if enabled)."""
        from permissions.modes import next_mode

        perms = self._loop.ctx.permissions
        new = next_mode(perms.mode, perms.bypass_available)
        self.set_mode(new.value)
        return new.value

    def record_mode(self) -> None:
        """Record the mode in the transcript (a resume restores it)."""
        transcript = self._loop.transcript
        if transcript is not None:
            transcript.meta("permission-mode", mode=self.mode)

    def rules(self) -> list[RuleView]:
        return [
            RuleView(r.behavior.value, str(r.value), r.source.value)
            for r in self._loop.ctx.permissions.rules
        ]

    def add_rule(self, behavior: str, rule: str, destination: str = "localSettings") -> None:
        from config import add_permission_rule, local_settings_path
        from permissions.rules import make_rule

        source = RuleSource(destination)
        new = make_rule(rule, behavior, source, self._cwd)
        transcript = self._loop.transcript
        if source is RuleSource.LOCAL:
            add_permission_rule(local_settings_path(self._cwd), behavior, str(new.value))
        elif source in (RuleSource.PROJECT, RuleSource.USER):
            add_permission_rule(self._settings_file(source), behavior, str(new.value))
        elif source is RuleSource.SESSION:
            if transcript is not None:
                transcript.meta("session-rule", behavior=behavior, rule=str(new.value))
        else:
            raise ValueError(
                "rules can be added to localSettings, projectSettings, userSettings or session, "
                f"not {destination}"
            )
        perms = self._loop.ctx.permissions
        self._set(replace(perms, rules=(*perms.rules, new)))

    def remove_rule(self, behavior: str, rule: str, source: str) -> bool:
        from config import find_project_root, local_settings_path, remove_permission_rule
        from permissions.rules import parse_rule

        value = parse_rule(rule)
        perms = self._loop.ctx.permissions
        keep = tuple(
            r
            for r in perms.rules
            if not (r.behavior.value == behavior and r.value == value and r.source.value == source)
        )
        if len(keep) == len(perms.rules):
            return False
        transcript = self._loop.transcript
        if source == RuleSource.LOCAL.value:
            # both local files are one layer: approvals of older versions are in .nerve/
            legacy = find_project_root(self._cwd) / ".nerve" / "settings.local.json"
            for path in (local_settings_path(self._cwd), legacy):
                remove_permission_rule(path, behavior, rule)
        elif source in (RuleSource.PROJECT.value, RuleSource.USER.value):
            remove_permission_rule(self._settings_file(RuleSource(source)), behavior, rule)
        elif source != RuleSource.SESSION.value:
            raise ValueError(f"rules from {source} can only be removed by editing that file")
        elif transcript is not None:  # or a resume would bring the rule back
            transcript.meta("session-rule", behavior=behavior, rule=str(value), action="remove")
        self._set(replace(perms, rules=keep))
        return True

    def persist_always(self, rules: tuple[RuleValue, ...]) -> list[str]:
        """ "Always allow" answers: each rule (at most five) saved to the local settings; what
        to tell the user. A broken settings file does not end the turn."""
        from config import local_settings_path

        notes = []
        for value in rules[:5]:
            try:
                self.add_rule("allow", str(value), "localSettings")
                path = local_settings_path(self._cwd)
                notes.append(f"Saved rule {value} to {os.path.relpath(path, self._cwd)}")
            except Exception as exc:  # a broken settings file must not end the turn
                notes.append(f"Could not save rule {value}: {exc}")
        return notes

    def add_directory(self, path: str) -> Path:
        """``/add-dir``: ``path`` (relative to the cwd, ``~`` expanded) becomes a working
        directory for the rest of the session, as ``--add-dir`` does at start; the model is
        told. Raises ``ValueError`` (not a directory, already covered)."""
        perms = self._loop.ctx.permissions
        target = Path(os.path.normpath(self._cwd / Path(path.strip()).expanduser()))
        if not target.is_dir():
            raise ValueError(f"{target} is not a directory")
        covering = next((d for d in perms.working_dirs if target.is_relative_to(d)), None)
        if covering is not None:
            raise ValueError(f"{target} is already inside the working directory {covering}")
        self._set(replace(perms, additional_dirs=(*perms.additional_dirs, target)))
        note = system_reminder(
            f"The user added {target} as a working directory for this session.", ephemeral=False
        )
        self._loop.messages.append(note)
        transcript = self._loop.transcript
        if transcript is not None:
            transcript.user(note, isMeta=True)
        return target

    def resume_from(self, reader: TranscriptReader) -> list[str]:
        """``/resume``: the stored session's rules replace this one's session rules, and its
        mode (else the default) is the mode; the warnings about what could not be restored."""
        perms = self._loop.ctx.permissions
        stored_rules, mode, warnings = restored_permissions(reader, self._cwd)
        rules = [r for r in perms.rules if r.source is not RuleSource.SESSION] + stored_rules
        mode = PermissionMode.DEFAULT if mode is None else mode
        self._set(replace(perms, rules=tuple(rules), mode=mode))
        return warnings

    def _set(self, perms: PermissionContext) -> None:
        self._loop.ctx = replace(self._loop.ctx, permissions=perms)

    def _settings_file(self, source: RuleSource) -> Path:
        """Where rules of ``projectSettings`` / ``userSettings`` are written (Claude Code's
        ``.claude/settings.json`` of the project, ``~/.claude/settings.json``)."""
        from config import find_project_root
        from config.paths import resolve_config_dirs

        if source is RuleSource.PROJECT:
            return find_project_root(self._cwd) / ".claude" / "settings.json"
        environ = self._loop.ctx.options.environ or os.environ
        dirs = resolve_config_dirs(
            home=None, policy_dir=None, claude_policy_dir=None, environ=environ
        )
        return dirs.claude_user / "settings.json"


class Approvals:
    """The permission handler a front end set, and the ask the loop makes through it."""

    def __init__(self) -> None:
        self._handler: PermissionHandler | None = None

    def set_handler(self, handler: PermissionHandler) -> None:
        self._handler = handler

    @property
    def attached(self) -> bool:
        """A front end with someone to ask is attached (a handler is set)."""
        return self._handler is not None

    async def ask(self, prompt: Any) -> Any:
        """Ask about ``prompt`` (a ``tools.context.PermissionPrompt``): the handler's answer."""
        if self._handler is None:
            return await _deny_non_interactive(prompt)
        return await self._handler(prompt)


async def _deny_non_interactive(prompt: Any) -> Any:
    from tools.context import PermissionAnswer, PermissionResponse

    verdict = prompt.verdict
    why = verdict.reason
    return PermissionResponse(
        PermissionAnswer.DENY,
        feedback=(
            f"Permission to use {prompt.tool_name} was not granted ({why}). Nerve is running "
            "non-interactively, so a call that needs approval is denied. The user can allow it "
            "with --allowedTools, a permission rule in settings, or --permission-mode."
        ),
    )
