"""WebFetch's page cache: a fetched page is reused for 15 minutes, as in Claude Code.

The cache holds converted pages (not answers: the same page may be asked another question),
keyed by the URL after the https upgrade, bounded in total characters (least recently used
goes first). One process-wide cache serves every session and sub-agent; a context may carry
its own in ``ctx.state.conversation.web_cache`` (tests use that to control the clock).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from tools.context import ToolUseContext

__all__ = ["CACHE_TTL_S", "PageCache", "page_cache"]

CACHE_TTL_S = 15 * 60.0
MAX_CACHED_CHARS = 50_000_000

PageT = TypeVar("PageT")


class PageCache(Generic[PageT]):
    """URL -> page for ``ttl_s`` seconds; ``size`` gives a page's weight against ``max_chars``."""

    def __init__(
        self,
        *,
        ttl_s: float = CACHE_TTL_S,
        max_chars: int = MAX_CACHED_CHARS,
        size: Callable[[PageT], int] = lambda _p: 1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl_s = ttl_s
        self.max_chars = max_chars
        self._size = size
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, int, PageT]] = OrderedDict()
        self._total = 0

    def get(self, url: str) -> PageT | None:
        entry = self._entries.get(url)
        if entry is None:
            return None
        stored, _weight, page = entry
        if self._clock() - stored >= self.ttl_s:
            self._drop(url)
            return None
        self._entries.move_to_end(url)
        return page

    def put(self, url: str, page: PageT) -> None:
        weight = max(1, self._size(page))
        if weight > self.max_chars:
            return  # one page larger than the whole cache is not kept
        self._drop(url)
        self._entries[url] = (self._clock(), weight, page)
        self._total += weight
        while self._total > self.max_chars and self._entries:
            self._drop(next(iter(self._entries)))

    def clear(self) -> None:
        self._entries.clear()
        self._total = 0

    def __len__(self) -> int:
        return len(self._entries)

    def _drop(self, url: str) -> None:
        entry = self._entries.pop(url, None)
        if entry is not None:
            self._total -= entry[1]


_PROCESS_CACHE: PageCache[object] = PageCache(size=lambda p: len(getattr(p, "content", "")))


def page_cache(ctx: ToolUseContext) -> PageCache[object]:
    """The context's own cache if it carries one, else the process-wide cache."""
    own = ctx.state.conversation.web_cache
    return own if own is not None else _PROCESS_CACHE
