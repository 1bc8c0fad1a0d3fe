from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.tools.builtin.test_bash_support import no_survivors  # noqa: F401  (autouse)
from tests.tools.sandbox.support import World, world_at


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    w = world_at(tmp_path)
    yield w
    if w.sandbox is not None:
        await w.sandbox.close()
