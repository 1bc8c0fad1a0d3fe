"""The app over a session FACTORY: first frame first, the session built in a thread after it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from agent_cli.loop.events import TextDelta, TurnFinished
from agent_cli.model.config import MissingApiKey
from agent_cli.session.resume import SessionError
from agent_cli.tui.app import STARTING
from agent_cli.tui.startup import SessionNotReady, startup_message
from agent_cli.tui.widgets.items import NoticeLine, UserMessage
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.fakes import FakeSession


class WarmSession(FakeSession):
    """A FakeSession that counts ``prewarm`` calls, like AgentSession's SDK prewarm."""

    prewarms = 0

    def prewarm(self) -> None:
        self.prewarms += 1


class GatedFactory:
    """A slow factory: blocks in its thread until the test opens the gate."""

    def __init__(self, build: Callable[[], Any]) -> None:
        self.build = build
        self.gate = threading.Event()
        self.calls = 0
        self.thread: threading.Thread | None = None

    def __call__(self) -> Any:
        self.calls += 1
        self.thread = threading.current_thread()
        if not self.gate.wait(10):
            raise TimeoutError("the test never opened the gate")
        return self.build()


@pytest.fixture
def warm() -> Iterator[WarmSession]:
    s = WarmSession()
    yield s
    s.check()


def notices(app: Any) -> list[str]:
    return [w.notice_text for w in app.query(NoticeLine)]


def status(app: Any) -> str:
    return str(app.status.render())


async def test_prompt_typed_before_ready_is_sent_once_ready(warm: WarmSession, make_app: Any):
    warm.turns = [[TextDelta("Hi there."), TurnFinished("end_turn", 1)]]
    factory = GatedFactory(lambda: warm)
    app = make_app(None, session_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: factory.calls == 1)
        # Painted and usable while the factory is still running.
        assert status(app) == STARTING
        assert app.focused is app.prompt_input
        assert not app.session_ready
        with pytest.raises(SessionNotReady):
            app.session.mode  # noqa: B018
        assert factory.thread is not threading.main_thread()
        await pilot.press(*"hello", "enter")
        assert "Queued until the session is ready: hello" in notices(app)
        assert warm.prompts == []
        factory.gate.set()
        await wait_for(pilot, lambda: warm.prompts == ["hello"])
        await wait_for(pilot, lambda: not app.turn_running)
        assert app.session is warm
        assert warm.prewarms == 1
        assert warm._handler is not None  # the permission handler was installed
        assert "default mode" in status(app) and "claude-test" in status(app)
        assert [w.prompt_text for w in app.query(UserMessage)] == ["hello"]
        assert app.query(".assistant").last().source == "Hi there."  # type: ignore[attr-defined]
    assert factory.calls == 1
    assert warm.closed


async def test_commands_before_ready(warm: WarmSession, make_app: Any) -> None:
    factory = GatedFactory(lambda: warm)
    app = make_app(None, session_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: factory.calls == 1)
        await pilot.press(*"/help", "enter")  # needs no session: runs now
        assert any(n.startswith("Commands:") for n in notices(app))
        await pilot.press("shift+tab")  # no session to cycle: a notice, no crash
        await pilot.press(*"/mode plan", "enter")  # needs the session: waits for it
        assert "Queued until the session is ready: /mode plan" in notices(app)
        factory.gate.set()
        await wait_for(pilot, lambda: warm.mode == "plan")
        assert "Permission mode: ⏸ plan mode on" in notices(app)


@pytest.mark.parametrize(
    ("error", "shown"),
    [
        (SessionError("bad rule 'Bash(': rule 'Bash(' must end with ')'"), "must end with ')'"),
        (RuntimeError("disk on fire"), "RuntimeError: disk on fire"),
    ],
)
async def test_factory_error_is_shown_and_exit_still_works(
    make_app: Any, error: Exception, shown: str
) -> None:
    def factory() -> Any:
        raise error

    app = make_app(None, session_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.startup_error is not None)
        assert shown in app.startup_error
        errors = [w.notice_text for w in app.query(NoticeLine) if w.has_class("error")]
        assert errors == [f"Could not start the session: {app.startup_error}"]
        assert "failed to start" in status(app)
        await pilot.press(*"hello", "enter")
        assert notices(app)[-1].startswith("No session: ")
        await pilot.press(*"/exit", "enter")
        await wait_for(pilot, lambda: not app.is_running)
    assert app.return_code == 0


async def test_queued_input_is_reported_when_start_up_fails(make_app: Any) -> None:
    factory = GatedFactory(lambda: (_ for _ in ()).throw(SessionError("broken settings")))
    app = make_app(None, session_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: factory.calls == 1)
        await pilot.press(*"one", "enter", *"two", "enter")
        factory.gate.set()
        await wait_for(pilot, lambda: app.startup_error is not None)
        assert "2 queued inputs not sent." in notices(app)


async def test_exit_while_building_closes_the_built_session(
    warm: WarmSession, make_app: Any
) -> None:
    factory = GatedFactory(lambda: warm)
    app = make_app(None, session_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: factory.calls == 1)
        # Let the factory finish only once the app is already shutting down.
        threading.Timer(0.2, factory.gate.set).start()
        app.exit(0)
    assert warm.closed, "a session built during exit must still be closed"


def test_exactly_one_of_session_and_factory(make_app: Any, warm: WarmSession) -> None:
    with pytest.raises(ValueError):
        make_app(None)
    with pytest.raises(ValueError):
        make_app(warm, session_factory=lambda: warm)


def test_startup_messages_for_the_user() -> None:
    assert startup_message(MissingApiKey()).startswith("No API key found. Set ANTHROPIC_API_KEY")
    assert startup_message(ValueError("unknown permission mode 'x'")) == (
        "unknown permission mode 'x'"
    )
    assert startup_message(SessionError("no session abc")) == "no session abc"
    assert startup_message(OSError(28, "No space left")) == "OSError: [Errno 28] No space left"
