"""/model without a name: a picker of the models, the current one highlighted; choosing one
sets the model the next request asks for (real session, scripted server)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import OptionList

from agent_cli.model.names import MODEL_ALIASES
from agent_cli.testing import Scenario, Turn, text
from agent_cli.tui.screens.picker import ChoiceScreen
from agent_cli.tui.widgets.items import NoticeLine
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import _app, project, serve

__all__ = ["project", "serve"]  # fixtures shared with test_real_session


async def _send(pilot: Any, line: str) -> None:
    pilot.app.prompt_input.load_text(line)
    await pilot.press("enter")


def _options(screen: ChoiceScreen) -> tuple[list[str], int | None]:
    olist = screen.query_one("#choice-list", OptionList)
    labels = [str(olist.get_option_at_index(i).prompt) for i in range(olist.option_count)]
    return labels, olist.highlighted


async def test_model_picker_highlights_current_and_sets_the_next_request(
    project: Path, serve: Any
) -> None:
    server = serve(Scenario.of(Turn([text("hi from haiku")])))
    app = _app(project, model="sonnet")
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "/model")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        labels, highlighted = _options(app.screen)  # type: ignore[arg-type]
        assert len(labels) == 3
        assert highlighted == 1 and labels[1].startswith("✓ Sonnet")
        assert MODEL_ALIASES["sonnet"] in labels[1] and not labels[0].startswith("✓")
        await pilot.press("down", "enter")  # sonnet -> haiku
        await wait_for(pilot, lambda: not isinstance(app.screen, ChoiceScreen))
        await wait_for(pilot, lambda: app.session.model == MODEL_ALIASES["haiku"])
        notices = [n.notice_text for n in app.query(NoticeLine)]
        assert f"Model: {MODEL_ALIASES['haiku']}" in notices
        await _send(pilot, "hello")
        await wait_for(pilot, lambda: not app.turn_running and server.requests, timeout=15)
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)

        # Esc leaves the model as it was; a model no alias names is listed, marked, last
        app.session.set_model("claude-custom-1")
        await _send(pilot, "/model")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        labels, highlighted = _options(app.screen)  # type: ignore[arg-type]
        assert labels[-1] == "✓ claude-custom-1" and highlighted == len(labels) - 1
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ChoiceScreen))
        assert app.session.model == "claude-custom-1"
    assert server.requests[0].body["model"] == MODEL_ALIASES["haiku"]
    server.assert_done()


async def test_model_thinking_and_effort_apply_to_the_next_requests_and_show_in_status(
    project: Path, serve: Any
) -> None:
    server = serve(Scenario.of(Turn([text("one")]), Turn([text("two")]), Turn([text("three")])))
    app = _app(project, model="sonnet")  # claude-sonnet-4-6: adaptive thinking, effort

    def said() -> list[str]:
        return [n.notice_text for n in app.query(NoticeLine)]

    async def ask(prompt: str, n: int) -> None:
        await _send(pilot, prompt)
        await wait_for(pilot, lambda: len(server.requests) == n and not app.turn_running, 15)

    async with app.run_test(size=SIZE) as pilot:
        await ask("plain", 1)
        await _send(pilot, "/model thinking on")
        await wait_for(pilot, lambda: "Thinking: on · effort: as configured" in said())
        await _send(pilot, "/model effort low")
        await wait_for(pilot, lambda: "Thinking: on · effort: low" in said())
        await ask("think", 2)
        await _send(pilot, "/model thinking off")
        await wait_for(pilot, lambda: "Thinking: off · effort: low" in said())
        await _send(pilot, "/model effort huge")
        await wait_for(pilot, lambda: any("Usage: /model effort" in s for s in said()))
        await ask("quick", 3)
        await _send(pilot, "/status")
        await wait_for(pilot, lambda: any("Thinking: off · effort: low" in s for s in said()[-1:]))
    server.assert_done()
    plain, think, quick = (r.body for r in server.requests)
    assert "thinking" not in plain and "output_config" not in plain
    assert think["thinking"] == {"type": "adaptive"}
    assert think["output_config"] == {"effort": "low"}
    assert "thinking" not in quick and quick["output_config"] == {"effort": "low"}
