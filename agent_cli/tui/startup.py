"""The app's session: given ready, or built after the first frame (``SessionStarter``).

``nerve`` must show its first frame within ~300 ms, but building a real session takes longer
(settings, the tool registry, hooks, git probes), and the model SDK longer still. So the app
gets a ready session (tests, the demo) or a factory (``nerve``): it paints, then
``SessionStarter.after_first_frame`` runs the factory in a thread, then asks the session to
``prewarm`` (import the SDK in the background). The app decides what the user sees through the
``started`` and ``failed`` callbacks.

Folder trust comes before the build: a factory may also have a ``trust_question()`` method
(``agent_cli.session.trust.TrustQuestion`` or ``None``), run in a thread first; if it returns a
question the ``trust`` callback answers it (the TUI asks the user) before the factory runs, so
the session is built once, with the settings the answer allows.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_cli.boot import gc_pause
from agent_cli.tui.bench_hook import BENCH_ENV, FirstFrameProbe

if TYPE_CHECKING:
    from textual.app import App

    from agent_cli.session.port import SessionPort
    from agent_cli.session.trust import TrustQuestion

__all__ = [
    "CLOSE_WAIT_S",
    "SessionFactory",
    "SessionNotReady",
    "SessionStarter",
    "startup_message",
]

SessionFactory = Callable[[], "SessionPort"]
SessionStarted = Callable[["SessionPort"], Awaitable[None]]
TrustResolver = Callable[["TrustQuestion"], Awaitable[None]]
CLOSE_WAIT_S = 30.0  # on exit, how long to wait for a session still being built, to close it


class SessionNotReady(RuntimeError):
    """The session is still being built, or failed to build."""


class SessionStarter:
    """Owns the app's session: ``session`` (raises ``SessionNotReady`` while there is none),
    ``ready`` and ``error`` read it; ``after_first_frame`` starts it; ``close`` ends it.

    ``started`` runs once the session is ready (on the event loop); ``failed`` gets what the user
    reads when the factory raised; ``trust`` answers a folder-trust question (and records a Yes).
    """

    def __init__(
        self,
        app: App[Any],
        session: SessionPort | None,
        factory: SessionFactory | None,
        *,
        started: SessionStarted,
        failed: Callable[[str], None],
        trust: TrustResolver,
    ) -> None:
        if (session is None) == (factory is None):
            raise ValueError("the app needs exactly one of session and session_factory")
        self._app = app
        self._session = session
        self._factory = factory
        self._started = started
        self._failed = failed
        self._trust = trust
        self._building: asyncio.Future[SessionPort] | None = None
        self.error: str | None = None
        bench = os.environ.get(BENCH_ENV)
        self._probe = FirstFrameProbe(Path(bench)) if bench else None

    @property
    def session(self) -> SessionPort:
        """The running session; raises SessionNotReady while there is none."""
        if self._session is None:
            raise SessionNotReady(self.error or "the session is still starting")
        return self._session

    @property
    def ready(self) -> bool:
        return self._session is not None

    def after_first_frame(self) -> None:
        """Call once the first frame is painted (``call_after_refresh`` in ``on_mount``)."""
        if self._probe is not None:
            self._probe.frame()
        if self._session is not None:
            self._app.run_worker(self._start(self._session), group="startup")
            return
        if callable(getattr(self._factory, "trust_question", None)):
            self._app.run_worker(self._trust_then_build(), group="startup")
            return
        self._start_factory()

    async def close(self) -> None:
        """Close the session; one still being built is awaited first (bounded), then closed."""
        session = self._session
        if session is None and self._building is not None:
            try:
                session = await asyncio.wait_for(asyncio.shield(self._building), CLOSE_WAIT_S)
            except Exception:
                session = None
        if session is None:
            return
        try:
            await session.close()
        except Exception:  # closing must never keep the terminal hostage
            pass

    def _start_factory(self) -> None:
        assert self._factory is not None
        # run_in_executor rather than a thread worker: on exit the result is still wanted (to
        # close it), and a cancelled worker would drop it.
        self._building = asyncio.get_running_loop().run_in_executor(None, self._factory)
        self._app.run_worker(self._await_factory(self._building), group="startup")

    async def _trust_then_build(self) -> None:
        factory: Any = self._factory  # one offering the question is duck-typed (see above)
        question: TrustQuestion | None = None
        try:
            question = await asyncio.get_running_loop().run_in_executor(
                None, factory.trust_question
            )
        except Exception:  # the factory reports settings problems itself
            question = None
        if question is not None:
            await self._trust(question)
        self._start_factory()

    async def _await_factory(self, building: asyncio.Future[SessionPort]) -> None:
        try:
            session = await asyncio.shield(building)
        except Exception as exc:
            gc_pause.resume()  # no session: start-up is over all the same
            self.error = startup_message(exc)
            self._failed(self.error)
            self._bench_done()
            return
        self._session = session
        await self._start(session)

    async def _start(self, session: SessionPort) -> None:
        prewarm = getattr(session, "prewarm", None)
        if callable(prewarm):
            try:
                prewarm()
            except Exception:  # an optimisation only: the first request imports what it needs
                pass
        self._bench_done()
        await self._started(session)

    def _bench_done(self) -> None:
        if self._probe is not None:
            self._probe.ready(self.error)
            self._app.call_after_refresh(self._app.exit, 0)  # after painting what start-up showed


def startup_message(exc: BaseException) -> str:
    """What the user reads when the session could not be built."""
    from agent_cli.model.config import MissingApiKey
    from agent_cli.session.resume import SessionError

    if isinstance(exc, (MissingApiKey, SessionError, ValueError)):
        return str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {exc}"
