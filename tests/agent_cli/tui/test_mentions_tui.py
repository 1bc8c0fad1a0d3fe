"""``@path`` in the app over a real session: completion, Enter, the request carries the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_cli.testing import Scenario, Turn, text
from agent_cli.tui.widgets.items import NoticeLine
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import _app, project, serve  # noqa: F401


async def test_a_completed_mention_attaches_the_file(project: Path, serve: Any) -> None:  # noqa: F811
    body = "".join(f"value_{i} = {i}\n" for i in range(1, 41))
    (project / "a.py").write_text(body)
    server = serve(Scenario.of(Turn([text("It defines forty values.")])))
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"explain @a.")
        await wait_for(pilot, lambda: bool(app.completion_list.items))
        assert [c.label for c in app.completion_list.items] == ["@a.py"]
        await pilot.press("enter")  # takes the completion
        assert app.prompt_input.text == "explain @a.py "
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.turn_running and bool(server.requests), timeout=15)
        notices = [n.notice_text for n in app.query(NoticeLine)]
        assert "Read a.py (40 lines)" in notices
        # The transcript shows the one line, not the file.
        shown = "\n".join(str(w.render()) for w in app.query("Static"))
        assert "value_17 = 17" not in shown
    server.assert_done()
    blocks = server.requests[0].body["messages"][0]["content"]
    assert blocks[0]["text"].strip() == "explain @a.py"
    sent = json.dumps(blocks)
    assert "    17\\tvalue_17 = 17" in sent and "    40\\tvalue_40 = 40" in sent
