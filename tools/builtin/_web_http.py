"""WebFetch's HTTP side: one bounded GET with httpx, redirects judged one hop at a time.

* ``http://`` is upgraded to ``https://`` except for loopback hosts (a local dev server).
* Redirects are followed only within the same host (``www.`` aside), scheme (or an http ->
  https upgrade) and port; a redirect anywhere else is returned as a :class:`CrossHostRedirect`
  for the model to follow deliberately, with a new WebFetch call the user's rules judge afresh.
* The body is read as a stream up to ``max_bytes`` (the rest is dropped and the page marked
  truncated); the whole fetch, redirects included, has one time limit.
* Only text is read: HTML becomes Markdown, other text types stay as they are, and binary
  content (images, PDFs, archives) is refused with a message naming its type.

httpx is imported on the first fetch, never at start-up.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from tools.records import datarecord

if TYPE_CHECKING:
    from tools.context import ToolUseContext

__all__ = [
    "CrossHostRedirect",
    "FetchError",
    "FetchLimits",
    "FetchedPage",
    "fetch_limits",
    "fetch_page",
    "is_loopback_host",
    "permitted_redirect",
    "upgrade_url",
]

USER_AGENT = "Nerve-WebFetch/1.0 (+terminal coding agent)"
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/xhtml+xml",
        "application/javascript",
        "application/x-javascript",
        "application/ecmascript",
        "application/rss+xml",
        "application/atom+xml",
        "application/x-yaml",
        "application/yaml",
        "application/toml",
        "application/x-sh",
    }
)
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


@datarecord(frozen=True, slots=True)
class FetchLimits:
    """Bounds of one fetch. A context may carry its own in ``ctx.options.services.fetch_limits``."""

    max_bytes: int = 10 * 1024 * 1024
    timeout_s: float = 60.0
    connect_timeout_s: float = 10.0
    max_redirects: int = 10
    max_markdown_chars: int = 100_000  # what the fast model is shown of the page


@datarecord(frozen=True, slots=True)
class FetchedPage:
    """A page as text (Markdown for HTML), ready for the prompt."""

    url: str  # the final URL, after same-host redirects
    status: int
    reason: str
    content_type: str
    content: str
    bytes: int
    truncated: bool = False  # the body was larger than ``max_bytes``


@datarecord(frozen=True, slots=True)
class CrossHostRedirect:
    original_url: str
    redirect_url: str
    status: int
    reason: str


class FetchError(Exception):
    """The fetch failed; ``message`` is for the model (status, timeout, binary type, ...)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def fetch_limits(ctx: ToolUseContext) -> FetchLimits:
    own = ctx.options.services.fetch_limits
    return own if own is not None else FetchLimits()


def is_loopback_host(host: str | None) -> bool:
    if not host:
        return False
    host = host.strip("[]").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    import ipaddress  # ~3 ms: not at start-up

    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def upgrade_url(url: str) -> str:
    """``http://`` -> ``https://``, except for loopback hosts; anything else as given."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() == "http" and not is_loopback_host(parts.hostname):
        return urlunsplit(("https", *parts[1:]))
    return url.strip()


def _bare(host: str | None) -> str:
    host = (host or "").rstrip(".").lower()
    return host[4:] if host.startswith("www.") else host


def _port(scheme: str, port: int | None) -> int | None:
    return port if port is not None else {"http": 80, "https": 443}.get(scheme)


def permitted_redirect(original: str, target: str) -> bool:
    """Same host (``www.`` aside), same port, same scheme or http -> https, no credentials."""
    a, b = urlsplit(original), urlsplit(target)
    try:
        if b.username or b.password:
            return False
        if _bare(a.hostname) != _bare(b.hostname) or not b.hostname:
            return False
        if _port(a.scheme, a.port) != _port(b.scheme, b.port) and not (
            a.scheme == "http" and b.scheme == "https" and b.port is None
        ):
            return False
    except ValueError:  # an invalid port
        return False
    return a.scheme == b.scheme or (a.scheme == "http" and b.scheme == "https")


def _media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _is_text(media: str) -> bool | None:
    """True for a text type, False for anything else, None when no type was given."""
    if not media:
        return None
    return media.startswith("text/") or media in _TEXT_TYPES or media.endswith(("+json", "+xml"))


def _decode(raw: bytes, charset: str | None) -> str:
    try:
        return raw.decode(charset or "utf-8", errors="replace")
    except LookupError:
        return raw.decode("utf-8", errors="replace")


def _binary_error(url: str, kind: str) -> FetchError:
    return FetchError(
        f"{url} is {kind}, not a text or HTML page; WebFetch reads text only "
        "(download it with Bash, e.g. curl -o FILE URL, if it is needed)"
    )


async def _read_body(
    response: Any, limit: int, *, sniff_url: str | None = None
) -> tuple[bytes, bool]:
    """Up to ``limit`` bytes, and whether more came. With ``sniff_url`` (no content type was
    given) the first KiB is checked for the NUL bytes text never has."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if sniff_url is not None and size >= 1024:
            if b"\x00" in b"".join(chunks)[:1024]:
                raise _binary_error(sniff_url, "binary data")
            sniff_url = None
        if size > limit:
            return b"".join(chunks)[:limit], True
    data = b"".join(chunks)
    if sniff_url is not None and b"\x00" in data[:1024]:
        raise _binary_error(sniff_url, "binary data")
    return data, False


async def _one_hop(
    client: Any, url: str, limits: FetchLimits
) -> tuple[Any, str | None, bytes, bool]:
    """GET ``url``: (response, redirect location or None, body, truncated)."""
    async with client.stream("GET", url) as response:
        if response.status_code in _REDIRECTS:
            location = response.headers.get("location")
            if not location:
                raise FetchError(f"HTTP {response.status_code} redirect without a Location header")
            return response, urljoin(url, location), b"", False
        if response.status_code >= 400:
            body, _ = await _read_body(response, 2000)
            snippet = _decode(body, response.charset_encoding).strip()[:300]
            detail = f": {snippet}" if snippet else ""
            raise FetchError(
                f"HTTP {response.status_code} {response.reason_phrase} for {url}{detail}"
            )
        media = _media_type(response.headers.get("content-type", ""))
        text = _is_text(media)
        if text is False:
            raise _binary_error(url, media)
        body, truncated = await _read_body(
            response, limits.max_bytes, sniff_url=url if text is None else None
        )
        return response, None, body, truncated


async def fetch_page(url: str, limits: FetchLimits) -> FetchedPage | CrossHostRedirect:
    """Fetch ``url`` (already upgraded) within ``limits``; raises FetchError with the reason."""
    import httpx

    from tools.builtin._html_markdown import html_to_markdown

    timeout = httpx.Timeout(limits.timeout_s, connect=limits.connect_timeout_s)
    current = url
    try:
        async with asyncio.timeout(limits.timeout_s):
            # Proxies from the environment apply, except to the machine itself.
            async with httpx.AsyncClient(
                follow_redirects=False,
                timeout=timeout,
                trust_env=not is_loopback_host(urlsplit(url).hostname),
                headers={"user-agent": USER_AGENT, "accept": "text/html, text/*;q=0.9, */*;q=0.5"},
            ) as client:
                for _hop in range(limits.max_redirects + 1):
                    response, location, body, truncated = await _one_hop(client, current, limits)
                    if location is None:
                        break
                    if not permitted_redirect(current, location):
                        return CrossHostRedirect(
                            url, location, response.status_code, response.reason_phrase
                        )
                    current = location
                else:
                    raise FetchError(f"more than {limits.max_redirects} redirects from {url}")
    except TimeoutError:
        raise FetchError(f"timed out after {limits.timeout_s:g} s fetching {url}") from None
    except httpx.TimeoutException:
        raise FetchError(f"timed out fetching {current}") from None
    except httpx.HTTPError as exc:
        raise FetchError(f"could not fetch {current}: {type(exc).__name__}: {exc}") from None
    content_type = response.headers.get("content-type", "")
    text = _decode(body, response.charset_encoding)
    if _media_type(content_type) in _HTML_TYPES or (
        not content_type and text.lstrip()[:15].lower().startswith(("<!doctype html", "<html"))
    ):
        text = await asyncio.to_thread(html_to_markdown, text)
    return FetchedPage(
        url=current,
        status=response.status_code,
        reason=response.reason_phrase,
        content_type=content_type,
        content=text,
        bytes=len(body),
        truncated=truncated,
    )
