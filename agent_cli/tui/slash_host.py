"""The TUI as a slash-command host: commands print into the conversation and may open pickers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_cli.slash.builtin import default_registry

if TYPE_CHECKING:
    from agent_cli.session.port import SessionPort
    from agent_cli.tui.app import NerveApp

__all__ = ["TuiSlashHost", "run_slash", "slash_descriptions", "works_without_session"]


class TuiSlashHost:
    """:class:`agent_cli.slash.registry.SlashHost` over a running :class:`NerveApp`."""

    interactive = True

    def __init__(self, app: NerveApp) -> None:
        self.app = app

    @property
    def session(self) -> SessionPort:
        return self.app.session

    @property
    def bypass_available(self) -> bool:
        return self.app.bypass_available

    def say(self, text: str, level: str = "info") -> None:
        self.app.say(text, level)

    def refresh_status(self) -> None:
        self.app.refresh_status()

    async def clear_conversation(self) -> None:
        self.app.session.clear()
        await self.app.conversation.clear_log()

    async def resume_session(self, session_id: str) -> None:
        await self.app.resume_session(session_id)

    async def choose_session(self, sessions: list[dict[str, Any]]) -> None:
        from agent_cli.tui.resume import ResumeScreen

        app = self.app

        def chosen(session_id: str | None) -> None:
            if session_id:
                app.run_worker(app.resume_session(session_id), group="resume")

        app.push_screen(ResumeScreen(sessions), chosen)

    def exit(self, code: int = 0) -> None:
        self.app.exit(code)


async def run_slash(app: NerveApp, name: str, args: str) -> None:
    """Run ``/name args`` in the app."""
    await default_registry().run(TuiSlashHost(app), name, args)


def slash_descriptions() -> dict[str, str]:
    return default_registry().descriptions()


def works_without_session(name: str) -> bool:
    """Commands such as /help and /exit run while the session is still starting."""
    command = default_registry().get(name)
    return command is not None and not command.needs_session
