"""Fixtures for TUI tests: a loud fake session and an app factory with a private history."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_cli.transcripts.history import PromptHistory
from tests.agent_cli.tui.fakes import FakeSession

SIZE = (100, 30)


@pytest.fixture(autouse=True)
def _data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Never touch the developer's real history file.
    monkeypatch.setenv("NERVE_DATA_DIR", str(tmp_path / "data"))


@pytest.fixture
def session() -> Iterator[FakeSession]:
    s = FakeSession()
    yield s
    s.check()


@pytest.fixture
def make_app(tmp_path: Path) -> Callable[..., Any]:
    from agent_cli.tui.app import NerveApp

    def factory(session: Any, **kwargs: Any) -> NerveApp:
        kwargs.setdefault("cwd", tmp_path)
        kwargs.setdefault("history", PromptHistory(tmp_path, tmp_path / "history.jsonl"))
        kwargs.setdefault("typing_pause_s", 0.0)
        kwargs.setdefault("guard_s", 0.0)
        return NerveApp(session, **kwargs)

    return factory


async def wait_for(pilot: Any, condition: Callable[[], Any], timeout: float = 5.0) -> None:
    """Let the app run until ``condition()`` holds; fail with a clear message otherwise."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        await pilot.pause(0.01)
