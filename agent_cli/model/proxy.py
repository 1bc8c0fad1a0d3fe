"""Which proxy the model client uses, chosen from the session environment (not ``os.environ``).

The session environment carries the shell's ``HTTPS_PROXY`` / ``HTTP_PROXY`` / ``ALL_PROXY`` /
``NO_PROXY`` with settings ``env`` over them, so a proxy set only in ``~/.claude/settings.json``
takes effect. The usual rules: a lower-case name wins over its upper-case twin; ``NO_PROXY``
is a comma-separated list of hosts that connect directly — ``*`` for all, ``example.com`` or
``.example.com`` for the domain and its subdomains, ``host:port`` for one port. (Written here
rather than borrowed from ``urllib.request``, whose import costs ~70 ms of start-up.)
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

__all__ = ["DEFAULT_API_URL", "proxy_for"]

DEFAULT_API_URL = "https://api.anthropic.com"


def _proxies(env: Mapping[str, str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for name, value in env.items():  # upper-case first, so the lower-case spelling wins
        if name.isupper() and name.endswith("_PROXY") and value:
            found[name[:-6].lower()] = value
    for name, value in env.items():
        if name.islower() and name.endswith("_proxy") and value:
            found[name[:-6]] = value
    return found


def proxy_for(base_url: str | None, env: Mapping[str, str]) -> str | None:
    """The proxy URL for requests to ``base_url`` (default: the first-party API), or ``None``
    for a direct connection."""
    parts = urlsplit(base_url or DEFAULT_API_URL)
    proxies = _proxies(env)
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy:
        return None
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if _bypassed(parts.hostname or "", port, proxies.get("no", "")):
        return None
    return proxy


def _bypassed(host: str, port: int, no_proxy: str) -> bool:
    host = host.lower().rstrip(".")
    for raw in no_proxy.split(","):
        entry = raw.strip().lower()
        if not entry:
            continue
        if entry == "*":
            return True
        name, _, entry_port = entry.rpartition(":") if _has_port(entry) else (entry, "", "")
        if entry_port and entry_port != str(port):
            continue
        name = name.removeprefix("*.").lstrip(".").rstrip(".")
        if name.startswith("[") and name.endswith("]"):
            name = name[1:-1]
        if host == name or host.endswith("." + name):
            return True
    return False


def _has_port(entry: str) -> bool:
    # "example.com:8080" and "[::1]:8080" have one; a bare IPv6 address does not
    head, sep, tail = entry.rpartition(":")
    return bool(sep) and tail.isdigit() and (head.endswith("]") or ":" not in head)
