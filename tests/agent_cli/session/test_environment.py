"""The session environment (issue 16.1): settings ``env`` over the shell's, built once and seen
by every part of the session; an untrusted project's ``env`` stays out."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent_cli.model.names import MODEL_ALIASES
from agent_cli.options import RunOptions
from agent_cli.session.agent_session import AgentSession
from agent_cli.session.environment import session_environ
from agent_cli.session.trust import STORE_NAME, TrustStore
from tests.agent_cli.session.test_trust import isolated  # noqa: F401  (fixture)


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def _user(data: dict[str, Any]) -> None:
    _write(Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json", data)


@pytest.fixture
async def session_in(isolated: Path) -> AsyncIterator[Any]:  # noqa: F811
    made: list[AgentSession] = []

    def create(**kw: Any) -> AgentSession:
        session = AgentSession.create(RunOptions(**kw), cwd=isolated, record=False)
        made.append(session)
        return session

    yield create
    for session in made:
        await session.close()


def test_settings_value_replaces_the_shell_one_and_the_rest_is_kept() -> None:
    shell = {"FOO": "shell", "PATH": "/bin"}
    assert session_environ({"FOO": "1", "NEW": "x"}, shell) == {
        "FOO": "1",
        "PATH": "/bin",
        "NEW": "x",
    }
    assert shell == {"FOO": "shell", "PATH": "/bin"}  # the base is not modified


async def test_one_environment_for_tools_shell_commands_and_hooks(
    session_in: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOO", "from-shell")
    monkeypatch.setenv("SHELL_ONLY", "kept")
    _user({"env": {"FOO": 1, "ANTHROPIC_DEFAULT_OPUS_MODEL": "glm-5"}})
    session = session_in()
    environ = session.ctx.options.environ
    assert environ["FOO"] == "1" and environ["SHELL_ONLY"] == "kept"
    assert os.environ["FOO"] == "from-shell"  # Nerve's own environment is left alone
    assert (await session.run_shell('printf "%s" "$FOO"')) == "1"  # a TUI ``!`` command
    session.set_model("opus")  # /model remaps the alias as start-up does
    assert session.model == "glm-5"


async def test_untrusted_project_env_stays_out_until_trusted(
    session_in: Any,
    isolated: Path,  # noqa: F811
) -> None:
    _write(isolated / ".claude" / "settings.json", {"env": {"PROBE": "project"}})
    assert "PROBE" not in session_in().ctx.options.environ
    TrustStore(Path(os.environ["NERVE_DATA_DIR"]) / STORE_NAME).trust(isolated)
    assert session_in().ctx.options.environ["PROBE"] == "project"


async def test_fast_model_of_the_classifier_comes_from_the_session_environment(
    session_in: Any,
) -> None:
    assert (
        session_in().ctx.options.services.classifier.config.fast_model == (MODEL_ALIASES["haiku"])
    )
    _user({"env": {"ANTHROPIC_DEFAULT_HAIKU_MODEL": "glm-air"}})
    assert session_in().ctx.options.services.classifier.config.fast_model == "glm-air"
    _user({"env": {"ANTHROPIC_SMALL_FAST_MODEL": "fast-x", "ANTHROPIC_DEFAULT_HAIKU_MODEL": "h"}})
    assert session_in().ctx.options.services.classifier.config.fast_model == "fast-x"
    _user({"autoModeFastModel": "opus", "env": {"ANTHROPIC_DEFAULT_OPUS_MODEL": "glm-5"}})
    assert session_in().ctx.options.services.classifier.config.fast_model == "glm-5"
