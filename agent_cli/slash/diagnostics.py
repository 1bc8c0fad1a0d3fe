"""What ``/status`` and ``/doctor`` report, gathered from a running session.

The session is read through attributes an ``AgentSession`` has (``settings``, ``cwd``, the tool
context's session environment) and looked up with ``getattr``, so a session without them (a
test double, a future front end) gets "unknown" lines rather than an exception. The endpoint and
the credential are resolved again from the session environment, as the model client resolved
them at start, never printing a secret.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import ssl
import subprocess
import sys
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from tools.records import datarecord

__all__ = [
    "DEFAULT_ENDPOINT",
    "Check",
    "Endpoint",
    "check_reachable",
    "doctor_checks",
    "resolve_endpoint",
    "status_lines",
]

DEFAULT_ENDPOINT = "https://api.anthropic.com"
_CONNECT_TIMEOUT_S = 5.0


@datarecord(frozen=True, slots=True)
class Check:
    """One ``/doctor`` line: ``state`` is ``ok``, ``warn`` (works, with a limit) or ``fail``."""

    state: str
    name: str
    detail: str

    def line(self) -> str:
        mark = {"ok": "✓", "warn": "!", "fail": "✗"}[self.state]
        return f"{mark} {self.name}: {self.detail}"


@datarecord(frozen=True, slots=True)
class Endpoint:
    """Where the model requests go and with which kind of credential (never its value)."""

    url: str | None  # None for Bedrock / Vertex (the SDK picks the regional endpoint)
    provider: str
    credential: str | None  # None: no credential at all
    proxy: str | None = None
    error: str | None = None  # the configuration could not be resolved


def _environ(session: Any) -> Mapping[str, str]:
    ctx = getattr(session, "ctx", None)
    env = getattr(getattr(ctx, "options", None), "environ", None)
    return env if env is not None else os.environ


def resolve_endpoint(session: Any) -> Endpoint:
    """The session's endpoint and credential kind, resolved from its environment."""
    from agent_cli.model.config import MissingApiKey, ModelConfig

    env = _environ(session)
    settings = getattr(session, "settings", None)
    merged = getattr(settings, "merged", None)
    helper = getattr(merged, "apiKeyHelper", None)
    try:
        config = ModelConfig.resolve(env=env, api_key_helper=helper)
    except MissingApiKey:
        url = (env.get("ANTHROPIC_BASE_URL") or "").strip() or DEFAULT_ENDPOINT
        return Endpoint(url, "anthropic", None)
    except Exception as exc:  # a bad value: say so, the report goes on
        return Endpoint(None, "anthropic", None, error=f"{type(exc).__name__}: {exc}")
    if config.cloud is not None:
        return Endpoint(None, config.provider, f"{config.provider} credentials (SDK)")
    if config.api_key:
        credential = "API key (ANTHROPIC_API_KEY)"
    elif config.auth_token:
        credential = "auth token (ANTHROPIC_AUTH_TOKEN)"
    elif config.key_helper is not None:
        credential = "apiKeyHelper (settings)"
    else:
        credential = "none (custom endpoint without a key)"
    return Endpoint(config.base_url or DEFAULT_ENDPOINT, "anthropic", credential, config.proxy)


def _settings_sources(session: Any) -> list[str]:
    settings = getattr(session, "settings", None)
    layers = getattr(settings, "layers", None)
    if layers is None:
        return ["  (unknown)"]
    if not layers:
        return ["  (no settings files)"]
    out = []
    for layer in layers:
        where = layer.label or (str(layer.path) if layer.path else layer.source)
        state = " — broken, see /doctor" if layer.error else ""
        out.append(f"  {layer.source}: {where}{state}")
    return out


def _mcp_lines(session: Any) -> list[str]:
    servers = getattr(session, "mcp_servers", None)
    if not callable(servers):
        return ["  (not available)"]
    views = list(servers())
    if not views:
        return ["  (none configured)"]
    return [f"  {v.name} ({v.scope}, {v.transport}): {v.status}" for v in views]


def status_lines(session: Any) -> list[str]:
    """``/status``: version, session, model, endpoint, cwd, mode, settings files, MCP servers."""
    from agent_cli import __version__
    from agent_cli.slash.thinking_commands import thinking_summary

    endpoint = resolve_endpoint(session)
    where = endpoint.url or f"{endpoint.provider} (regional, via the SDK)"
    if endpoint.proxy:
        where += f" via proxy {endpoint.proxy}"
    return [
        f"Version: Nerve {__version__}",
        f"Session ID: {getattr(session, 'session_id', 'unknown')}",
        f"cwd: {getattr(session, 'cwd', None) or os.getcwd()}",
        f"Model: {getattr(session, 'model', 'unknown')}",
        thinking_summary(session),
        f"Endpoint: {where}" + (f" ({endpoint.error})" if endpoint.error else ""),
        f"Credential: {endpoint.credential or 'none'}",
        f"Permission mode: {getattr(session, 'mode', 'unknown')}",
        "Settings files (highest precedence first):",
        *_settings_sources(session),
        "MCP servers:",
        *_mcp_lines(session),
    ]


async def check_reachable(url: str, proxy: str | None = None) -> Check:
    """A TCP connection (and a TLS handshake for https) to the endpoint or its proxy. No HTTP
    request is sent: a request would be a model call to pay for, or an error to log."""
    target = urlsplit(proxy or url)
    host = target.hostname
    if not host:
        return Check("fail", "Endpoint", f"not a URL: {url}")
    tls = target.scheme == "https"
    port = target.port or (443 if tls else 80)
    via = f" (via proxy {proxy})" if proxy else ""
    try:
        _, writer = await asyncio.wait_for(
            asyncio.open_connection(
                host, port, ssl=ssl.create_default_context() if tls and not proxy else None
            ),
            _CONNECT_TIMEOUT_S,
        )
    except TimeoutError:
        return Check("fail", "Endpoint", f"{url}{via}: no answer within {_CONNECT_TIMEOUT_S:g} s")
    except (OSError, ssl.SSLError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return Check("fail", "Endpoint", f"{url}{via}: cannot connect ({reason})")
    writer.close()
    try:
        await writer.wait_closed()
    except (OSError, ssl.SSLError):
        pass
    return Check("ok", "Endpoint", f"{url}{via} reachable")


def _version(argv: list[str]) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"cannot run: {exc}"
    first = (proc.stdout or proc.stderr).strip().splitlines()
    return first[0] if first else f"exit code {proc.returncode}"


def _ripgrep() -> Check:
    from tools.builtin._rg import find_rg

    rg = find_rg()
    if rg is None:
        return Check("fail", "ripgrep", "rg not found (Grep and Glob need it): install ripgrep")
    return Check("ok", "ripgrep", f"{_version([rg, '--version'])} ({rg})")


def _git() -> Check:
    git = shutil.which("git")
    if git is None:
        return Check("warn", "git", "not found: worktrees, checkpoints of git files need it")
    return Check("ok", "git", f"{_version([git, '--version'])} ({git})")


def _bubblewrap(session: Any) -> Check:
    if not sys.platform.startswith("linux"):
        return Check("ok", "bubblewrap", f"not used on {sys.platform}")
    from tools.sandbox.platform import Bubblewrap

    found = Bubblewrap()
    probe = found.probe()
    if probe.ok:
        notes = "; ".join(probe.notes)
        return Check(
            "ok",
            "bubblewrap",
            f"{found.bwrap} works" + (f" ({notes})" if notes else ""),
        )
    merged = getattr(getattr(session, "settings", None), "merged", None)
    sandbox = getattr(merged, "sandbox", None)
    wanted = bool(getattr(sandbox, "enabled", False))
    # the sandbox is optional: missing bwrap only fails when settings turn the sandbox on
    return Check("fail" if wanted else "warn", "bubblewrap", f"{probe.reason} (sandbox off)")


def _settings_checks(session: Any) -> list[Check]:
    settings = getattr(session, "settings", None)
    if settings is None:
        return [Check("warn", "Settings", "not available in this session")]
    problems = list(getattr(settings, "warnings", []))
    layers = list(getattr(settings, "layers", []))
    if not problems:
        return [Check("ok", "Settings", f"{len(layers)} file(s) loaded, no errors")]
    # a broken file is an error (what it set is ignored); the rest (entries dropped, project
    # settings withheld until the folder is trusted) are warnings
    errors = [layer.error for layer in layers if layer.error]
    return [
        Check("fail" if any(text.startswith(e) for e in errors) else "warn", "Settings", text)
        for text in problems
    ]


def _mcp_checks(session: Any) -> list[Check]:
    servers = getattr(session, "mcp_servers", None)
    if not callable(servers):
        return []
    out = []
    for v in servers():
        if v.status == "failed":
            out.append(Check("fail", f"MCP server {v.name}", v.error or "failed to start"))
    return out


async def doctor_checks(session: Any) -> list[Check]:
    """``/doctor``: credential, endpoint, ripgrep, git, bubblewrap, settings, MCP servers."""
    endpoint = resolve_endpoint(session)
    checks: list[Check] = []
    if endpoint.error:
        checks.append(Check("fail", "Credential", endpoint.error))
    elif endpoint.credential is None:
        checks.append(Check("fail", "Credential", "no API key: set ANTHROPIC_API_KEY"))
    else:
        checks.append(Check("ok", "Credential", endpoint.credential))
    if endpoint.url:
        checks.append(await check_reachable(endpoint.url, endpoint.proxy))
    elif not endpoint.error:
        checks.append(Check("ok", "Endpoint", f"{endpoint.provider}: not checked (SDK)"))
    checks.append(await asyncio.to_thread(_ripgrep))
    checks.append(await asyncio.to_thread(_git))
    checks.append(await asyncio.to_thread(_bubblewrap, session))
    checks += _settings_checks(session)
    checks += _mcp_checks(session)
    return checks
