"""The slash-command registry: lookup, aliases, refusal of screen-only commands off a screen."""

from __future__ import annotations

from typing import Any

import pytest

from agent_cli.slash.builtin import BUILTIN_COMMANDS, default_registry
from agent_cli.slash.registry import SlashCommand, SlashRegistry, parse_slash


class Host:
    """A minimal host that records what commands say and refuses nothing."""

    def __init__(self, interactive: bool, session: Any = None) -> None:
        self.interactive = interactive
        self.session = session
        self.bypass_available = False
        self.lines: list[tuple[str, str]] = []
        self.exited: int | None = None

    def say(self, text: str, level: str = "info") -> None:
        self.lines.append((level, text))

    def refresh_status(self) -> None:
        pass

    async def clear_conversation(self) -> None:
        self.lines.append(("info", "cleared"))

    async def resume_session(self, session_id: str) -> None:
        pass

    async def choose_session(self, sessions: list[dict[str, Any]]) -> None:
        pass

    def exit(self, code: int = 0) -> None:
        self.exited = code


async def _noop(host: Any, args: str) -> None:
    host.say(f"ran with {args!r}")


def test_names_and_aliases_resolve_and_duplicates_are_refused() -> None:
    reg = SlashRegistry()
    reg.add(SlashCommand("exit", "quit", _noop, aliases=("quit",)))
    assert reg.get("quit") is reg.get("exit")
    assert set(reg.descriptions()) == {"exit", "quit"}
    with pytest.raises(ValueError, match="already registered"):
        reg.add(SlashCommand("quit", "again", _noop))


async def test_unknown_and_screen_only_commands_are_reported() -> None:
    reg = SlashRegistry()
    reg.add(SlashCommand("pick", "needs a screen", _noop, interactive_only=True))
    host = Host(interactive=False)
    await reg.run(host, "nope", "")
    await reg.run(host, "pick", "x")
    assert host.lines == [
        ("error", "Unknown command /nope. Type /help for the list."),
        ("error", "/pick works only in the interactive app."),
    ]
    screen = Host(interactive=True)
    await reg.run(screen, "pick", "x")
    assert screen.lines == [("info", "ran with 'x'")]


async def test_help_off_a_screen_lists_only_what_runs_there() -> None:
    host = Host(interactive=False)
    await default_registry().run(host, "help", "")
    ((level, text),) = host.lines
    assert level == "info" and "/cost" in text and "/permissions" in text
    assert "/clear" not in text and "/exit" not in text and "Shift+Tab" not in text
    screen = Host(interactive=True)
    await default_registry().run(screen, "help", "")
    assert "/clear" in screen.lines[0][1] and "/quit" in screen.lines[0][1]
    assert "Shift+Tab" in screen.lines[0][1]


def test_every_builtin_is_registered_once() -> None:
    names = [c.name for c in BUILTIN_COMMANDS]
    assert len(names) == len(set(names))
    assert all(default_registry().get(n) is not None for n in names)


def test_parse_slash_leaves_paths_and_double_slashes_alone() -> None:
    assert parse_slash("/Cost  now ") == ("cost", "now")
    assert parse_slash("//comment") is None
    assert parse_slash("no slash") is None


def test_layered_adds_session_commands_without_replacing_built_ins() -> None:
    base = SlashRegistry()
    base.add(SlashCommand("help", "built-in", _noop))
    extra = [
        SlashCommand("help", "a project's help.md", _noop),
        SlashCommand("pr-review", "review", _noop, argument_hint="[pr]", expands_to_prompt=True),
    ]
    layered, skipped = base.layered(extra)
    assert skipped == ["help"]
    assert layered.get("help") is base.get("help")
    assert layered.descriptions()["pr-review"] == "[pr] review"
    assert base.get("pr-review") is None  # the base table is untouched


async def test_custom_commands_of_the_session_hand_the_prompt_to_the_host(tmp_path: Any) -> None:
    from agent_cli.slash.builtin import registry_for
    from agent_cli.slash.custom import session_commands

    class Session:
        cwd = tmp_path

        def custom_commands(self) -> list[Any]:
            from agent_cli.customize.commands import PromptCommand

            return [PromptCommand("fix", "Fix an issue", "b", tmp_path / "f.md", "project")]

    submitted: list[str] = []

    class PromptHost(Host):
        async def submit_prompt(self, text: str) -> None:
            submitted.append(text)

    host = PromptHost(interactive=True, session=Session())
    registry = registry_for(host)
    assert registry.get("help") is default_registry().get("help")
    await registry.run(host, "fix", "  42 ")
    await registry.run(host, "init", "")
    assert submitted == ["/fix 42", "/init"]
    [fix] = session_commands(Session().custom_commands())
    assert fix.description == "Fix an issue (project)" and fix.expands_to_prompt


def test_the_print_command_names_are_the_registrys() -> None:
    from agent_cli.slash.builtin import default_registry
    from agent_cli.slash.names import PRINT_COMMANDS

    registry = default_registry()
    assert list(PRINT_COMMANDS) == [c.name for c in registry.commands() if not c.interactive_only]
