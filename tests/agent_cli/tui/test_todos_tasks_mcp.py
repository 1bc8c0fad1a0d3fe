"""``/tasks``, ``/mcp``, ``/todos`` and the TodoWrite checklist, under Pilot over the fake."""

from __future__ import annotations

from typing import Any

from agent_cli.loop.events import ToolFinished, ToolStarted, TurnFinished
from agent_cli.session.port import BackgroundTaskView
from agent_cli.slash.text import checklist
from agent_cli.tui.todos import result_view, todo_items
from agent_cli.tui.widgets.items import NoticeLine, ToolCall
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.fakes import FakeSession
from tools.builtin.todo import RESULT_MESSAGE, TodoWriteOutput
from tools.mcp.manager import McpServerView

TODOS = [
    {"content": "Read the parser", "status": "completed", "activeForm": "Reading the parser"},
    {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
    {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
]
CHECKLIST = "☑ Read the parser\n◐ Fix the bug\n☐ Run the tests"


def last_notice(app: Any) -> str:
    return str(app.query(NoticeLine).last().notice_text)


async def run(pilot: Any, text: str) -> None:
    pilot.app.prompt_input.load_text(text)
    pilot.app.prompt_input.completion_list.hide()
    await pilot.press("enter")
    await pilot.pause(0.02)


async def test_help_lists_the_new_commands(session: FakeSession, make_app: Any) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "/help")
        text = last_notice(app)
        assert "/tasks" in text and "/mcp" in text and "/todos" in text


async def test_tasks_lists_background_tasks(session: FakeSession, make_app: Any) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "/tasks")
        assert last_notice(app) == "No background tasks."
        session.task_views = [
            BackgroundTaskView("b1", "npm run dev\n  --port 3000", "running"),
            BackgroundTaskView("b2", "make test", "completed"),
        ]
        await run(pilot, "/tasks")
        lines = last_notice(app).splitlines()
        assert lines[0] == "Background tasks (2):"
        assert lines[1].split() == ["b1", "running", "npm", "run", "dev", "--port", "3000"]
        assert lines[2].split() == ["b2", "completed", "make", "test"]
    assert session.prompts == []


async def test_mcp_lists_servers(session: FakeSession, make_app: Any) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "/mcp")
        assert last_notice(app).startswith("No MCP servers configured")
        session.mcp_views = [
            McpServerView("docs", "project", "stdio", "connected", 3, None, 0.25, None),
            McpServerView("db", "user", "http", "failed", 0, "connection refused", None, None),
        ]
        await run(pilot, "/mcp")
        assert last_notice(app).splitlines() == [
            "docs (project, stdio): connected, 3 tool(s), 0.25 s",
            "db (user, http): failed — connection refused",
        ]


async def test_mcp_and_todos_on_a_session_without_them(make_app: Any) -> None:
    class Minimal(FakeSession):
        # A SessionPort that implements neither optional method.
        def __getattribute__(self, name: str) -> Any:
            if name in ("mcp_servers", "todos"):
                raise AttributeError(name)
            return super().__getattribute__(name)

    session = Minimal()
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "/mcp")
        assert last_notice(app) == "MCP is not available in this session."
        await run(pilot, "/todos")
        assert last_notice(app) == "Todos are not available in this session."
    session.check()


async def test_todos_shows_the_checklist(session: FakeSession, make_app: Any) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "/todos")
        assert last_notice(app) == "No todos."
        session.todo_list = TODOS
        await run(pilot, "/todos")
        assert last_notice(app) == f"Todos (1/3 completed):\n{CHECKLIST}"


async def test_todo_write_result_renders_as_a_whole_checklist(
    session: FakeSession, make_app: Any
) -> None:
    many = TODOS + [
        {"content": f"Step {i}", "status": "pending", "activeForm": f"Doing {i}"} for i in range(4)
    ]
    output = TodoWriteOutput(old_todos=[], new_todos=many)
    session.turns = [
        [
            ToolStarted("t1", "TodoWrite", {"todos": many}, "TodoWrite(7 items)"),
            ToolFinished("t1", "TodoWrite", RESULT_MESSAGE, False, output=output),
            ToolStarted("t2", "TodoWrite", {"todos": []}, "TodoWrite(2 items)"),
            ToolFinished("t2", "TodoWrite", "Todo item 1 has empty content.", True),
            TurnFinished("end_turn", 1),
        ]
    ]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "plan it")
        await wait_for(pilot, lambda: not app.turn_running)
        ok, bad = app.query(ToolCall)
        assert ok.result_text is not None and ok.result_text.startswith(CHECKLIST)
        assert RESULT_MESSAGE not in ok.result_text
        shown = str(ok.query_one(".tool-body").render())
        assert "◐ Fix the bug" in shown and "☐ Step 3" in shown  # all 7 lines, not collapsed
        assert "lines (enter to" not in shown
        assert bad.is_error and bad.result_text == "Todo item 1 has empty content."


def test_todo_items_from_a_model_a_dict_or_nothing() -> None:
    model = TodoWriteOutput(old_todos=[], new_todos=TODOS)
    assert todo_items(model) == TODOS
    assert todo_items(model.model_dump()) == TODOS  # as stored in a transcript
    assert todo_items({"newTodos": TODOS[:1]}) == TODOS[:1]
    assert todo_items(None) is None and todo_items({"new_todos": "x"}) is None
    assert checklist([]) == "(no todos)"
    assert checklist([{"content": "a\nb", "status": "weird"}]) == "☐ a b"
    assert result_view("Bash", "out", False, model) == ("out", False)
    assert result_view("TodoWrite", "err", True, model) == ("err", False)
    assert result_view("TodoWrite", RESULT_MESSAGE, False, None) == (RESULT_MESSAGE, False)
