"""The TUI's garbage collection between keystrokes (``agent_cli.tui.idle_gc``).

The collector is driven with a fake clock and the real ``gc`` module; each test puts the
thresholds back and unfreezes what it froze, so the rest of the suite runs as before.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

from agent_cli.tui.idle_gc import IdleCollector
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.fakes import FakeSession


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Node:
    """A cycle-capable object a weak reference can watch."""

    def __init__(self) -> None:
        self.me: Node | None = self


@pytest.fixture(autouse=True)
def _restore_gc() -> Iterator[None]:
    saved, enabled = gc.get_threshold(), gc.isenabled()
    yield
    gc.set_threshold(*saved)
    gc.unfreeze()
    if enabled:
        gc.enable()


def make_due(collector: IdleCollector) -> None:
    """As many generation-1 collections as make a full one due."""
    for _ in range(collector.due_after):
        gc.collect(1)


def collector(clock: Clock, last_key: float = 0.0, busy: bool = False) -> IdleCollector:
    keys = {"last": last_key}
    c = IdleCollector(lambda: keys["last"], lambda: busy, idle_s=1.0, deep_idle_s=5.0, clock=clock)
    c.install()
    return c


def test_install_turns_the_automatic_full_collection_off_and_uninstall_restores() -> None:
    gc.set_threshold(700, 10, 10)
    c = IdleCollector(lambda: 0.0)
    c.install()
    c.install()  # twice: still restores the original
    gen0, gen1, gen2 = gc.get_threshold()
    assert (gen0, gen1) == (700, 10) and gen2 > 10**6
    assert c.due_after == 10
    c.uninstall()
    assert gc.get_threshold() == (700, 10, 10)
    c.uninstall()
    assert gc.get_threshold() == (700, 10, 10)


def test_nothing_runs_until_a_full_collection_is_due() -> None:
    clock = Clock()
    c = collector(clock, last_key=clock.now - 2)  # idle, not yet quiet for a deep collection
    gc.collect()
    assert c.tick() is None
    make_due(c)
    assert c.tick() == "full"
    assert c.tick() is None  # the count starts again


def test_while_typing_only_the_young_generations_are_collected_and_frozen() -> None:
    clock = Clock()
    c = collector(clock, last_key=clock.now - 0.2)
    gc.collect()
    make_due(c)
    frozen = gc.get_freeze_count()
    assert c.tick() == "young"
    assert gc.get_freeze_count() >= frozen
    assert gc.get_count()[2] == 0


def test_a_frozen_object_that_dies_is_reclaimed_by_the_deep_collection_once_quiet() -> None:
    clock = Clock()
    keys = {"last": clock.now - 0.2}
    busy = {"turn": True}
    c = IdleCollector(
        lambda: keys["last"],
        lambda: busy["turn"],
        idle_s=1.0,
        deep_idle_s=5.0,
        clock=clock,
    )
    c.install()
    node = Node()
    ref = weakref.ref(node)
    make_due(c)
    assert c.tick() == "young"  # the node is alive: frozen with the rest
    del node  # now garbage, in a cycle, but frozen: no ordinary collection sees it
    gc.collect()
    assert ref() is not None
    clock.now += 10  # no key for 10 s, but a turn is running: no deep collection
    assert c.tick() is None
    assert ref() is not None
    busy["turn"] = False
    assert c.tick() == "deep"
    assert ref() is None
    assert c.deep_collections == 1
    assert c.tick() is None  # nothing frozen since: no second deep collection


def test_no_deep_collection_until_the_collector_froze_something() -> None:
    clock = Clock()
    c = collector(clock, last_key=clock.now - 0.2)
    gc.freeze()  # as start-up does: not the collector's, so no deep collection for it
    clock.now += 60
    assert c.tick() is None
    assert c.deep_collections == 0


def test_start_ups_pause_wins() -> None:
    clock = Clock()
    c = collector(clock, last_key=clock.now - 2)
    make_due(c)
    gc.disable()
    assert c.tick() is None
    gc.enable()
    assert c.tick() == "full"


def test_uninstalled_collector_does_nothing() -> None:
    c = IdleCollector(lambda: 0.0)
    make_due(c)
    assert c.tick() is None


async def test_the_app_owns_generation_2_while_it_runs(make_app: Any) -> None:
    gc.set_threshold(700, 10, 10)
    session = FakeSession()
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.idle_gc.installed
        assert gc.get_threshold()[2] > 10**6
        await pilot.press("a")
        assert app.prompt_input.last_key_time == app.idle_gc.last_key()
        assert app.idle_gc.busy() is False
    assert gc.get_threshold() == (700, 10, 10)
    session.check()


def test_typing_means_a_key_within_idle_s() -> None:
    clock = Clock()
    keys = {"last": 0.0}
    c = IdleCollector(lambda: keys["last"], idle_s=1.0, clock=clock)
    assert not c.typing()
    keys["last"] = clock.now - 0.5
    assert c.typing()
    clock.now += 1.0
    assert not c.typing()


async def test_a_streamed_answer_paces_its_appends_by_the_apps_typing(make_app: Any) -> None:
    from agent_cli.loop.events import TextDelta, TurnFinished
    from agent_cli.tui.widgets.markdown import AssistantMessage

    session = FakeSession()
    session.turns = [[TextDelta("hello "), TextDelta("world"), TurnFinished("end_turn", 1)]]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hi")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.turn_running and app.query(".assistant"))
        streamed = [w for w in app.query(".assistant") if isinstance(w, AssistantMessage)]
        # the app's "composing": a recent key (idle_gc.typing) and a draft in the input
        assert streamed and all(w.typing == app.composing for w in streamed)
        assert app.idle_gc.typing() and not app.composing()  # Enter sent it: no draft
        await pilot.press("x")
        assert app.composing()
        assert "hello world" in streamed[0].source
    session.check()
