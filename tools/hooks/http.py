"""``http`` hooks (Claude Code's type): POST the event JSON to the hook's url.

The reply is read as a command hook's stdout: a 2xx with an empty body is success with no
output, a 2xx with a JSON object goes through the same protocol (``permissionDecision``,
``decision: "block"``, ``additionalContext``...). A 2xx with any other body, another status, a
connection failure or the timeout is an error shown to the user, and — unlike Claude Code, which
lets the call proceed — on a guard event (PreToolUse, PermissionRequest) the call is denied: a
guard that could not answer must not let it through. Header values fill ``$VAR``/``${VAR}`` only
from the variables the hook lists in ``allowedEnvVars`` (others become empty, as in Claude
Code). Redirects are not followed; at most 1 MB of the reply is read.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from tools.hooks.matcher import HookHandler
from tools.hooks.output import HandlerEffect, interpret_result
from tools.hooks.process import ProcessResult
from tools.hooks.verdict import failed_effect

__all__ = ["MAX_REPLY_BYTES", "expand_header", "run_http_hook"]

MAX_REPLY_BYTES = 1_000_000
_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def expand_header(value: str, allowed: tuple[str, ...], env: Mapping[str, str]) -> str:
    """``$VAR``/``${VAR}`` from ``env`` when ``VAR`` is allowed, else the empty string."""

    def one(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        return env.get(name, "") if name in allowed else ""

    return _REF.sub(one, value)


def _loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def _post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> tuple[int, str]:
    import httpx  # on first use: building a session (and its hooks) must not pay for it

    # A proxy from the environment is for the world outside: never for a loopback hook server.
    async with httpx.AsyncClient(timeout=timeout, trust_env=not _loopback(url)) as client:
        async with client.stream("POST", url, content=body, headers=headers) as resp:
            data = bytearray()
            async for chunk in resp.aiter_bytes():
                data.extend(chunk)
                if len(data) > MAX_REPLY_BYTES:
                    break
            return resp.status_code, bytes(data[:MAX_REPLY_BYTES]).decode("utf-8", "replace")


async def run_http_hook(
    h: HookHandler, event: str, body: bytes, env: Mapping[str, str], timeout_s: float
) -> HandlerEffect:
    """POST ``body`` (the event JSON) to the hook's url and read the reply as its output."""
    headers = {k: expand_header(v, h.allowed_env_vars, env) for k, v in h.headers}
    headers["Content-Type"] = "application/json"
    import httpx

    try:
        status, text = await _post(h.command, body, headers, timeout_s)
    except httpx.TimeoutException:
        return failed_effect(h, event, f"no answer within {timeout_s:g}s (timeout)")
    except httpx.HTTPError as exc:
        return failed_effect(h, event, f"the request failed ({type(exc).__name__}: {exc})")
    if not 200 <= status < 300:
        preview = " ".join(text.split())[:200]
        return failed_effect(
            h, event, f"it answered HTTP {status}" + (f": {preview}" if preview else "")
        )
    reply = text.strip()
    if not reply:
        return HandlerEffect(h.name)
    try:
        obj = json.loads(reply)
    except ValueError:
        obj = None
    if not isinstance(obj, dict):
        preview = " ".join(reply.split())[:200]
        return failed_effect(h, event, f"its reply is not a JSON object: {preview}")
    return interpret_result(h.name, event, ProcessResult(0, stdout=reply), timeout_s)
