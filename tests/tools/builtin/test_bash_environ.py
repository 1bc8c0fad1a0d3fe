"""The Bash tool runs commands in the session environment (``ToolOptions.environ``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.tools.builtin.test_bash_support import call, make_ctx, no_survivors
from tests.tools.builtin.test_tasks import body, output, start
from tools.builtin.bash import BASH_TOOL
from tools.context import ToolUseContext

__all__ = ["no_survivors"]


def _with_environ(ctx: ToolUseContext, environ: dict[str, str]) -> ToolUseContext:
    return dataclasses.replace(ctx, options=dataclasses.replace(ctx.options, environ=environ))


async def test_foreground_and_background_commands_see_the_session_environment(
    tmp_path: Path,
) -> None:
    environ = {"PATH": "/usr/bin:/bin", "FROM_SETTINGS": "yes", "HOME": str(tmp_path)}
    ctx = _with_environ(make_ctx(tmp_path), environ)
    res = await call(
        BASH_TOOL, ctx, command='printf "%s|%s" "$FROM_SETTINGS" "${HOSTNAME_X-unset}"'
    )
    assert not res.is_error
    assert BASH_TOOL.to_content(res.data).strip() == "yes|unset"
    task_id = await start(ctx, 'printf "%s" "$FROM_SETTINGS"')
    done = await output(ctx, task_id=task_id, block=True, timeout=10_000)
    assert body(done).strip() == "yes"


async def test_without_a_session_environment_the_process_one_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NERVE_TEST_PROCESS_VAR", "process")
    res = await call(BASH_TOOL, make_ctx(tmp_path), command="printf %s $NERVE_TEST_PROCESS_VAR")
    assert BASH_TOOL.to_content(res.data).strip() == "process"


async def test_sandboxed_commands_see_the_session_environment_without_secrets(
    tmp_path: Path,
) -> None:
    from tests.tools.sandbox.support import world_at
    from tools.builtin.bash import BashInput
    from tools.builtin.bash.format import BashOutput
    from tools.sandbox import backend_for

    probe = backend_for().probe()
    if not probe.ok:
        pytest.skip(f"the sandbox cannot start here: {probe.reason}")
    world = world_at(tmp_path)
    ctx = world.ctx()
    environ = {
        "PATH": "/usr/bin:/bin",
        "FROM_SETTINGS": "yes",
        "ANTHROPIC_API_KEY": "sk-secret",
        "HOME": str(tmp_path / "home"),
    }
    ctx = _with_environ(ctx, environ)
    try:
        inp = BashInput(
            command='printf "%s|%s|" "$FROM_SETTINGS" "${ANTHROPIC_API_KEY-unset}"; touch /nerve-ro-probe 2>/dev/null || echo confined'
        )
        res = await BASH_TOOL.call(inp, ctx, lambda _p: None)
        assert isinstance(res.data, BashOutput)
        assert BASH_TOOL.to_content(res.data).strip() == "yes|unset|confined"
    finally:
        assert world.sandbox is not None
        await world.sandbox.close()
