"""Shared helpers for the Bash and task tests (no tests here).

Long-running test commands use ``sleep 98NN`` so that leftovers can be found by scanning
``/proc/*/cmdline``; the autouse fixture ``no_survivors`` (imported by each test module) fails a
test that leaves any such process alive. Only processes that carry this test run's own
environment marker count (children inherit the environment), so a concurrent run of the same
tests elsewhere on the machine is neither reported nor killed.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from permissions.types import PermissionContext
from tools.base import Tool
from tools.context import RuntimeState, ToolOptions, ToolUseContext
from tools.result import ToolResult

__all__ = ["call", "live_marked", "make_ctx", "no_survivors"]

_MARK = re.compile(rb"sleep[\x00 ]+98\d\d")
_RUN_VAR = "NERVE_BASH_TEST_RUN"
os.environ[_RUN_VAR] = uuid.uuid4().hex  # this test process and its descendants
_RUN_MARK = f"{_RUN_VAR}={os.environ[_RUN_VAR]}".encode()


def live_marked() -> list[tuple[int, bytes]]:
    """Live (non-zombie) processes of this test run whose command line has ``sleep 98NN``."""
    found: list[tuple[int, bytes]] = []
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmdline = fh.read()
            if not _MARK.search(cmdline):
                continue
            with open(f"/proc/{entry}/environ", "rb") as fh:
                environ = fh.read().split(b"\x00")
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        state = stat[stat.rfind(b")") + 2 :].split()[:1]
        if state != [b"Z"] and _RUN_MARK in environ:
            found.append((int(entry), cmdline))
    return found


@pytest.fixture(autouse=True)
def no_survivors() -> Iterator[None]:
    before = {pid for pid, _ in live_marked()}
    yield
    left = [(pid, cmd) for pid, cmd in live_marked() if pid not in before]
    for pid, _ in left:  # do not let one failure poison the next tests
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    assert not left, f"processes survived the test: {left}"


def make_ctx(tmp_path: Path, *, additional: tuple[Path, ...] = ()) -> ToolUseContext:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    session = tmp_path / "session"
    session.mkdir(exist_ok=True)
    return ToolUseContext(
        permissions=PermissionContext(cwd=work, additional_dirs=additional),
        options=ToolOptions(session_dir=session),
        state=RuntimeState(),
    )


async def call(
    tool: Tool[Any], ctx: ToolUseContext, progress: list[Any] | None = None, **raw: Any
) -> ToolResult:
    """Validate ``raw`` like the pipeline does, then call the tool."""
    inp = tool.input_model.model_validate(raw)
    err = await tool.validate_input(inp, ctx)
    assert err is None, err
    sink: list[Any] = progress if progress is not None else []
    return await tool.call(inp, ctx, sink.append)
