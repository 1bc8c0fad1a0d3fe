"""``apiKeyHelper``: a shell command whose standard output is the API key.

Run on first use, again when its ``CLAUDE_CODE_API_KEY_HELPER_TTL_MS`` has passed and after a
401 (the key may have rotated). A helper that fails, hangs past its time limit or prints
nothing is a ``KeyHelperError`` with a one-line message; the client reports it as a final
error, so print mode exits non-zero instead of sending a request without a key.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable

from agent_cli.model.endpoint import KeyHelperConfig

__all__ = ["ApiKeyHelper", "KeyHelperError"]


class KeyHelperError(Exception):
    """The helper gave no key; the message says why (never the key itself)."""


class ApiKeyHelper:
    """Runs the helper and keeps its key until the TTL passes or ``invalidate()``."""

    def __init__(
        self, config: KeyHelperConfig, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.config = config
        self._clock = clock
        self._key: str | None = None
        self._fetched = 0.0
        self._lock = asyncio.Lock()
        self.runs = 0

    def invalidate(self) -> None:
        self._key = None

    async def key(self) -> str:
        async with self._lock:  # the classifier and the loop may ask at once: one run
            ttl = self.config.ttl_s
            fresh = self._key is not None and (ttl is None or self._clock() - self._fetched < ttl)
            if not fresh:
                self._key = await self._run()
                self._fetched = self._clock()
            assert self._key is not None
            return self._key

    async def _run(self) -> str:
        self.runs += 1
        cfg = self.config
        proc = await asyncio.create_subprocess_shell(
            cfg.command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(cfg.env) if cfg.env is not None else None,
            start_new_session=True,  # so a hung helper is killed with its children
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(), cfg.timeout_s)
        except TimeoutError:
            _kill_group(proc.pid)
            await proc.wait()
            raise KeyHelperError(
                f"apiKeyHelper timed out after {cfg.timeout_s:g} s: {cfg.command}"
            ) from None
        finally:
            if proc.returncode is None:
                _kill_group(proc.pid)
        if proc.returncode != 0:
            tail = err.decode(errors="replace").strip().splitlines()[-1:] or [""]
            detail = f": {tail[0][:200]}" if tail[0] else ""
            raise KeyHelperError(
                f"apiKeyHelper failed (exit status {proc.returncode}){detail}: {cfg.command}"
            )
        key = out.decode(errors="replace").strip()
        if not key:
            raise KeyHelperError(f"apiKeyHelper printed no key: {cfg.command}")
        return key


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
