"""``WebFetch(domain:...)`` rules: hostname patterns, case-insensitive.

``domain:example.com`` is that host only; ``domain:*.example.com`` any subdomain at any depth
but not the apex; a ``*`` elsewhere stands for exactly one label; ``domain:*`` is every host.
Content that is not a ``domain:`` pattern is matched as a glob over the whole URL.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import urlsplit

__all__ = ["DOMAIN_PREFIX", "domain_rule_matches", "is_domain_rule", "url_host"]

DOMAIN_PREFIX = "domain:"


def url_host(url: str) -> str | None:
    """The URL's hostname, lower-cased and without a trailing dot; None if it has none."""
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    if not host:
        return None
    return host.rstrip(".").lower() or None


def is_domain_rule(content: str) -> bool:
    return content.startswith(DOMAIN_PREFIX)


@lru_cache(maxsize=512)
def _domain_regex(pattern: str) -> re.Pattern[str]:
    pattern = pattern.strip().rstrip(".").lower()
    if pattern.startswith("*."):
        # any depth of subdomains, never the apex itself
        return re.compile(r"^(?:[^.]+\.)+" + re.escape(pattern[2:]) + "$")
    labels = [r"[^.]+" if label == "*" else re.escape(label) for label in pattern.split(".")]
    return re.compile("^" + r"\.".join(labels) + "$")


@lru_cache(maxsize=512)
def _url_glob(pattern: str) -> re.Pattern[str]:
    return re.compile("^" + ".*".join(re.escape(p) for p in pattern.split("*")) + "$", re.DOTALL)


def domain_rule_matches(content: str | None, url: str) -> bool:
    """Does a WebFetch rule content match ``url``? None (a bare rule) matches every URL."""
    if content is None:
        return True
    if not is_domain_rule(content):
        return bool(_url_glob(content).match(url))
    pattern = content[len(DOMAIN_PREFIX) :].strip()
    if pattern == "*":
        return True
    host = url_host(url)
    if host is None:
        return False
    return bool(_domain_regex(pattern).match(host))
