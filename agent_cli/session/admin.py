"""The bookkeeping half of ``SessionPort``: rules, tools, tasks, usage, model, stored sessions.

``SessionAdmin`` is a mixin of ``AgentSession``: each method reads or replaces the loop's live
context (``/permissions``, ``/tools``, ``/tasks``, ``/cost``, ``/model``, ``/resume``'s list);
the turn itself lives in ``agent_cli.session.agent_session``.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_cli.loop.messages import system_reminder
from agent_cli.session.port import BackgroundTaskView, RuleView, ToolView
from agent_cli.session.resume import previous_tasks
from agent_cli.transcripts.transcript import TranscriptWriter, list_sessions
from permissions.types import RuleSource, RuleValue
from tools.context import ToolUseContext

if TYPE_CHECKING:
    from agent_cli.loop.agent_loop import AgentLoop

__all__ = ["SessionAdmin"]


class SessionAdmin:
    """Rules, tools, background tasks, usage, model and session listing over ``self.loop``."""

    # Set by AgentSession.__init__.
    cwd: Path
    model: str
    loop: AgentLoop
    transcript: TranscriptWriter | None
    restored_tasks: list[dict[str, Any]]
    session_id: str
    settings: Any
    warnings: list[str]

    def settings_problems(self) -> list[str]:
        """What the settings files got wrong (``file:line:col: key: problem; what is ignored``),
        for as long as the session runs."""
        return [str(w) for w in getattr(self.settings, "warnings", ())]

    def add_directory(self, path: str) -> Path:
        """``/add-dir``: ``path`` (relative to the cwd, ``~`` expanded) becomes a working
        directory for the rest of the session, as ``--add-dir`` does at start; the model is
        told. Raises ``ValueError`` (not a directory, already covered)."""
        perms = self.ctx.permissions
        target = Path(os.path.normpath(self.cwd / Path(path.strip()).expanduser()))
        if not target.is_dir():
            raise ValueError(f"{target} is not a directory")
        covering = next((d for d in perms.working_dirs if target.is_relative_to(d)), None)
        if covering is not None:
            raise ValueError(f"{target} is already inside the working directory {covering}")
        dirs = (*perms.additional_dirs, target)
        self.loop.ctx = replace(self.ctx, permissions=replace(perms, additional_dirs=dirs))
        note = system_reminder(
            f"The user added {target} as a working directory for this session.", ephemeral=False
        )
        self.loop.messages.append(note)
        if self.transcript is not None:
            self.transcript.user(note, isMeta=True)
        return target

    def attach_sdk_mcp(self, send: Any) -> None:
        """SDK mode: the ``{"type": "sdk"}`` MCP servers' messages travel through ``send``."""
        mcp = getattr(self, "_mcp", None)
        if mcp is not None:
            mcp.set_sdk_transport(send)

    async def connect_mcp(self) -> None:
        """Connect the MCP servers now if no turn has yet (the SDK's ``mcp_status``). The turn
        still awaits the same start, then adds the tools and shows the warnings."""
        mcp = getattr(self, "_mcp", None)
        if getattr(self, "_mcp_pending", False) and mcp is not None:
            mcp.set_roots(self.ctx.permissions.working_dirs)
            await mcp.start()

    def mcp_tool(self, name: str) -> Any:
        """The connected MCP tool ``name`` (``mcp__server__tool``), or None."""
        mcp = getattr(self, "_mcp", None)
        if mcp is None:
            return None
        return next((t for t in mcp.tools() if t.name == name), None)

    def take_warnings(self) -> list[str]:
        """The start-up warnings not shown yet; the app shows them at once (else the first
        turn does)."""
        out, self.warnings = self.warnings, []
        return out

    @property
    def ctx(self) -> ToolUseContext:
        return self.loop.ctx

    def rules(self) -> list[RuleView]:
        return [
            RuleView(r.behavior.value, str(r.value), r.source.value)
            for r in self.ctx.permissions.rules
        ]

    def add_rule(self, behavior: str, rule: str, destination: str = "localSettings") -> None:
        from config import add_permission_rule, local_settings_path
        from permissions.rules import make_rule

        source = RuleSource(destination)
        new = make_rule(rule, behavior, source, self.cwd)
        if source is RuleSource.LOCAL:
            add_permission_rule(local_settings_path(self.cwd), behavior, str(new.value))
        elif source in (RuleSource.PROJECT, RuleSource.USER):
            add_permission_rule(self._settings_file(source), behavior, str(new.value))
        elif source is RuleSource.SESSION:
            if self.transcript is not None:
                self.transcript.meta("session-rule", behavior=behavior, rule=str(new.value))
        else:
            raise ValueError(
                "rules can be added to localSettings, projectSettings, userSettings or session, "
                f"not {destination}"
            )
        perms = self.ctx.permissions
        self.loop.ctx = replace(self.ctx, permissions=replace(perms, rules=(*perms.rules, new)))

    def remove_rule(self, behavior: str, rule: str, source: str) -> bool:
        from config import find_project_root, local_settings_path, remove_permission_rule
        from permissions.rules import parse_rule

        value = parse_rule(rule)
        perms = self.ctx.permissions
        keep = tuple(
            r
            for r in perms.rules
            if not (r.behavior.value == behavior and r.value == value and r.source.value == source)
        )
        if len(keep) == len(perms.rules):
            return False
        if source == RuleSource.LOCAL.value:
            # both local files are one layer: approvals of older versions are in .nerve/
            legacy = find_project_root(self.cwd) / ".nerve" / "settings.local.json"
            for path in (local_settings_path(self.cwd), legacy):
                remove_permission_rule(path, behavior, rule)
        elif source in (RuleSource.PROJECT.value, RuleSource.USER.value):
            remove_permission_rule(self._settings_file(RuleSource(source)), behavior, rule)
        elif source != RuleSource.SESSION.value:
            raise ValueError(f"rules from {source} can only be removed by editing that file")
        elif self.transcript is not None:  # or a resume would bring the rule back
            self.transcript.meta(
                "session-rule", behavior=behavior, rule=str(value), action="remove"
            )
        self.loop.ctx = replace(self.ctx, permissions=replace(perms, rules=keep))
        return True

    def _settings_file(self, source: RuleSource) -> Path:
        """Where rules of ``projectSettings`` / ``userSettings`` are written (Claude Code's
        ``.claude/settings.json`` of the project, ``~/.claude/settings.json``)."""
        from config import find_project_root
        from config.paths import resolve_config_dirs

        if source is RuleSource.PROJECT:
            return find_project_root(self.cwd) / ".claude" / "settings.json"
        environ = self.ctx.options.environ or os.environ
        dirs = resolve_config_dirs(
            home=None, policy_dir=None, claude_policy_dir=None, environ=environ
        )
        return dirs.claude_user / "settings.json"

    def tools(self) -> list[ToolView]:
        loaded = self.ctx.options.loaded_deferred
        return [
            ToolView(t.name, t.description, t.should_defer and t.name not in loaded, t.is_mcp)
            for t in self.ctx.options.tools
        ]

    def background_tasks(self) -> list[BackgroundTaskView]:
        manager = self.ctx.state.shared.get("background_tasks")
        live = [] if manager is None else manager.list()
        views = [BackgroundTaskView(s.task_id, s.command, s.status) for s in live]
        seen = {v.task_id for v in views}
        # Tasks of the run this session resumed: listed, but no longer ours to manage.
        views += [v for v in previous_tasks(self.restored_tasks) if v.task_id not in seen]
        return views

    def usage_summary(self) -> dict[str, Any]:
        u = self.loop.usage
        return {
            "input_tokens": u.total.total_input,
            "output_tokens": u.total.output,
            "cost_usd": u.cost_usd,
            "context_tokens": self._context_tokens(),
            "turns": u.turns,
        }

    def set_model(self, model: str) -> None:
        from agent_cli.model.names import expand_alias

        # /model names one model: aliases remapped by the session environment, as at start-up
        self.model = expand_alias(model, self.ctx.options.environ)
        self.loop.model_name = self.model

    def list_sessions(self) -> list[dict[str, Any]]:
        from agent_cli.session.resume import session_title

        out = []
        for s in list_sessions(self.cwd):
            if s.session_id == self.session_id:
                continue  # the session in use is not one to resume
            try:
                title = session_title(s.path)
            except OSError:
                title = None
            out.append(
                {
                    "session_id": s.session_id,
                    "title": title or "(empty)",
                    "mtime": s.mtime,
                    "size": s.size,
                }
            )
        return out

    def _persist_always_rules(self, rules: tuple[RuleValue, ...]) -> list[str]:
        from config import local_settings_path

        notes = []
        for value in rules[:5]:
            try:
                self.add_rule("allow", str(value), "localSettings")
                path = local_settings_path(self.cwd)
                notes.append(f"Saved rule {value} to {os.path.relpath(path, self.cwd)}")
            except Exception as exc:  # a broken settings file must not end the turn
                notes.append(f"Could not save rule {value}: {exc}")
        return notes

    def _context_tokens(self) -> int:
        """The figure compaction acts on (the API's last count plus an estimate)."""
        return self.loop.compaction.tokens(self.loop)
