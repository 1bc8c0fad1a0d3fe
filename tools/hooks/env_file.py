"""``CLAUDE_ENV_FILE``: what SessionStart hooks write there is exported into later commands.

Claude Code gives SessionStart hooks a file path in ``CLAUDE_ENV_FILE``; lines such as
``export NODE_ENV=production`` or ``export PATH="$PATH:/opt/x/bin"`` written there apply to the
Bash commands that follow. Nerve sources the file once after the hooks, with ``sh`` in the
session environment, and takes the variables that changed.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["ENV_FILE_TIMEOUT_S", "exported_by_env_file"]

ENV_FILE_TIMEOUT_S = 10.0
_SCRIPT = 'set -a; . "$1" >/dev/null 2>&1 || exit 3; env -0'


async def exported_by_env_file(
    path: Path, base: Mapping[str, str]
) -> tuple[dict[str, str], str | None]:
    """Variables the env file sets or changes relative to ``base``, and an error text or None."""
    try:
        if not path.is_file() or path.stat().st_size == 0:
            return {}, None
    except OSError as exc:
        return {}, f"CLAUDE_ENV_FILE {path}: {exc}"
    proc = await asyncio.create_subprocess_exec(
        "sh",
        "-c",
        _SCRIPT,
        "sh",
        str(path),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=dict(base),
        start_new_session=True,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), ENV_FILE_TIMEOUT_S)
    except TimeoutError:
        try:
            os.killpg(proc.pid, 9)
        except OSError:
            pass
        await proc.wait()
        return {}, f"CLAUDE_ENV_FILE {path}: sourcing it took over {ENV_FILE_TIMEOUT_S:g}s"
    if proc.returncode != 0:
        return {}, f"CLAUDE_ENV_FILE {path}: the file failed in sh (exit {proc.returncode})"
    seen: dict[str, str] = {}
    for item in out.decode("utf-8", "replace").split("\0"):
        name, sep, value = item.partition("=")
        if sep and name:
            seen[name] = value
    skip = {"PWD", "OLDPWD", "SHLVL", "_"}
    changed = {k: v for k, v in seen.items() if k not in skip and base.get(k) != v}
    return changed, None
