"""A broken settings file is said in the app as soon as the session is ready (issue 21 item 5):
a banner naming the file, the line and what is ignored; ``/permissions`` says it too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_cli.testing import Scenario, Turn, text
from agent_cli.tui.banner import BANNER_TITLE
from agent_cli.tui.widgets.items import NoticeLine
from agent_cli.tui.widgets.markdown import AssistantMessage
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import _app, project, serve  # noqa: F401  (fixtures)

BROKEN = '{\n  "permissions": {\n    "deny": [Read(./.env)]\n  }\n}\n'


def _notices(app: Any) -> list[str]:
    return [str(w.notice_text) for w in app.query(NoticeLine)]


async def test_a_broken_user_settings_file_is_a_banner_before_any_prompt(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
) -> None:
    settings = project.parent / "home" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(BROKEN)
    (project.parent / "home" / ".nerve").mkdir(parents=True, exist_ok=True)
    (project.parent / "home" / ".nerve" / "settings.json").write_text(
        '{"env": {"GOOD": "1", "BAD": [1]}}'
    )
    server = serve(Scenario.of(Turn([text("hello back")])))
    app = _app(project, factory=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: any(BANNER_TITLE in n for n in _notices(app)))
        [banner] = [n for n in _notices(app) if BANNER_TITLE in n]
        assert "settings.json:3:14: invalid JSON" in banner  # the file and the line
        assert "this file is ignored" in banner and "every tool call asks" in banner
        assert "env.BAD: expected a string, number or boolean" in banner
        assert "this variable is not set" in banner  # what is ignored, entry by entry
        assert server.requests == []  # said before anything went to the model

        pilot.app.prompt_input.load_text("/permissions")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "Settings problems" in _notices(app)[-1])
        assert "settings.json:3:14: invalid JSON" in _notices(app)[-1]
        await pilot.press("escape")  # close the rules editor /permissions opened

        pilot.app.prompt_input.load_text("hi")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.query(AssistantMessage))
        shown = [n for n in _notices(app) if "invalid JSON" in n]
        assert len(shown) == 2  # the banner and /permissions: the turn does not repeat it
    server.assert_done()
