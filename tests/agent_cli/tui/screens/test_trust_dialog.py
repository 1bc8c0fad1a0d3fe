"""The folder-trust prompt: asked before the real session is built, guarded against typing."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agent_cli.frontends.interactive import InteractiveFactory
from agent_cli.options import RunOptions
from agent_cli.session.trust import STORE_NAME, TrustStore
from agent_cli.transcripts.history import PromptHistory
from agent_cli.tui.screens.trust import TrustScreen
from agent_cli.tui.widgets.items import NoticeLine
from tests.agent_cli.tui.conftest import SIZE, wait_for


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home, proj = tmp_path / "home", tmp_path / "project"
    for d in (home, proj, tmp_path / "policy", tmp_path / "claude-policy"):
        d.mkdir()
    for key in list(os.environ):
        if key.startswith(("ANTHROPIC_", "NERVE_", "CLAUDE_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("NERVE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("NERVE_CONFIG_DIR", str(home / ".nerve"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("NERVE_POLICY_DIR", str(tmp_path / "policy"))
    monkeypatch.setenv("NERVE_CLAUDE_POLICY_DIR", str(tmp_path / "claude-policy"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")  # the model is never called here
    return proj


def _settings(project: Path, data: dict[str, Any]) -> None:
    (project / ".nerve").mkdir(exist_ok=True)
    (project / ".nerve" / "settings.json").write_text(json.dumps(data))


def _store(project: Path) -> TrustStore:
    return TrustStore(Path(os.environ["NERVE_DATA_DIR"]) / STORE_NAME)


def _app(project: Path, guard_s: float = 0.0) -> Any:
    from agent_cli.tui.app import NerveApp

    return NerveApp(
        session_factory=InteractiveFactory(RunOptions(), cwd=project),
        cwd=project,
        history=PromptHistory(project, project.parent / "history.jsonl"),
        typing_pause_s=0.0,
        guard_s=guard_s,
    )


def _allow(app: Any) -> set[str]:
    perms = app.session.ctx.permissions
    return {str(r.value) for r in perms.rules if r.behavior.value == "allow"}


def _notices(app: Any) -> list[str]:
    return [w.notice_text for w in app.query(NoticeLine)]


HOSTILE = {"permissions": {"allow": ["Bash(npm test *)"], "deny": ["Bash(rm *)"]}}


async def test_yes_records_trust_and_the_session_has_the_projects_allow_rule(
    project: Path,
) -> None:
    _settings(project, HOSTILE)
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, TrustScreen), timeout=10)
        assert not app.session_ready  # asked before the session is built
        screen = app.screen
        await wait_for(pilot, lambda: screen.query("Static"))  # pushed, then composed
        shown = " ".join(str(w.render()) for w in screen.query("Static"))
        assert "Do you trust the files in this folder?" in shown
        assert str(project) in shown and "1 allow rule" in shown
        await pilot.press("y")
        await wait_for(pilot, lambda: app.session_ready, timeout=15)
        assert _allow(app) == {"Bash(npm test *)"}
        assert _store(project).covers(project)
        assert any(n.startswith(f"Trusted {project}") for n in _notices(app))


async def test_no_keeps_the_folder_untrusted(project: Path) -> None:
    _settings(project, HOSTILE)
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, TrustScreen), timeout=10)
        await pilot.press("n")
        await wait_for(pilot, lambda: app.session_ready, timeout=15)
        assert _allow(app) == set()
        deny = {str(r.value) for r in app.session.ctx.permissions.rules}
        assert "Bash(rm *)" in deny  # restrictions apply without trust
        assert not _store(project).path.exists()
        assert any("not applied until you trust this folder" in n for n in _notices(app))


async def test_enter_on_the_first_highlight_means_no(project: Path) -> None:
    _settings(project, HOSTILE)
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, TrustScreen), timeout=10)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.session_ready, timeout=15)
        assert _allow(app) == set() and not _store(project).path.exists()


async def test_up_then_enter_trusts(project: Path) -> None:
    _settings(project, HOSTILE)
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, TrustScreen), timeout=10)
        await pilot.press("up", "enter")
        await wait_for(pilot, lambda: app.session_ready, timeout=15)
        assert _allow(app) == {"Bash(npm test *)"}


async def test_keys_during_the_guard_do_not_answer(project: Path) -> None:
    _settings(project, HOSTILE)
    app = _app(project, guard_s=0.4)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, TrustScreen), timeout=10)
        screen = app.screen
        assert isinstance(screen, TrustScreen)
        await pilot.press("y", "enter")
        if screen.armed:  # a very slow machine: the guard ran out before the keys arrived
            pytest.skip("the guard expired before the keys were delivered")
        assert app.screen is screen and screen.ignored_keys == 2
        await wait_for(pilot, lambda: screen.armed, timeout=5)
        await pilot.press("n")
        await wait_for(pilot, lambda: app.session_ready, timeout=15)
        assert _allow(app) == set() and not _store(project).path.exists()


async def test_no_prompt_when_trusted_or_when_only_restricting(project: Path) -> None:
    _settings(project, {"permissions": {"deny": ["Bash(rm *)"]}, "model": "haiku"})
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.session_ready, timeout=15)
        assert not isinstance(app.screen, TrustScreen)
    _settings(project, HOSTILE)
    _store(project).trust(project)
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.session_ready, timeout=15)
        assert not isinstance(app.screen, TrustScreen)
        assert _allow(app) == {"Bash(npm test *)"}


async def test_an_unwritable_store_still_trusts_for_this_session(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_cli.session.trust import TrustQuestion, is_trusted
    from agent_cli.tui.screens.trust import settle_trust

    blocked = project.parent / "not-a-dir"
    blocked.write_text("x")
    monkeypatch.setenv("NERVE_DATA_DIR", str(blocked))
    question = TrustQuestion(root=project, withheld=["1 allow rule"], files=["f"], message="m")
    assert await settle_trust(question, False) == [("m", "warning")]
    assert not is_trusted(project)
    [(text, level)] = await settle_trust(question, True)
    assert level == "warning" and text.endswith("trusted for this session only")
    assert is_trusted(project)
