"""When and how long to wait before asking the model again. Pure: no SDK, no clock.

The SDK's own retries obey ``retry-after`` with no upper bound and are invisible to the user, so
the client owns retries: bounded exponential backoff with jitter, ``retry-after`` honoured up to
a cap, and every wait announced through ``on_retry`` as a ``RetryNotice``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping

from tools.records import datarecord

__all__ = [
    "DEFAULT_MAX_RETRIES",
    "OVERLOADS_BEFORE_FALLBACK",
    "RetryNotice",
    "RetryPolicy",
    "parse_retry_after",
]

# As Claude Code: 10 retries, backoff 0.5 s doubling up to 32 s: about 2.7 minutes of waiting
# before a run of 500/529s is given up (CLAUDE_CODE_MAX_RETRIES changes the count).
DEFAULT_MAX_RETRIES = 10
# As Claude Code: after this many overloaded (529) answers in a row, a --fallback-model takes over.
OVERLOADS_BEFORE_FALLBACK = 3


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait: ``retry-after-ms``, ``retry-after`` seconds or date.

    None when absent or unreadable. ``headers`` must look up names case-insensitively (httpx
    headers do) or be lower-cased.
    """
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import email.utils  # only for the rare date form: ~10 ms of imports

    parsed = email.utils.parsedate_tz(value)
    if parsed is None:
        return None
    return max(0.0, email.utils.mktime_tz(parsed) - (time.time() if now is None else now))


@datarecord(frozen=True, slots=True)
class RetryPolicy:
    """Bounded exponential backoff with jitter.

    ``max_attempts`` counts every request of a turn, the first included. Without a server hint
    the wait before attempt n+1 is ``min(base_delay * 2**(n-1), max_delay)`` shrunk by up to
    ``jitter`` (a fraction), so many clients do not retry in lockstep. A server hint
    (``retry-after``) wins but is capped at ``retry_after_cap``: a server asking for ten minutes
    must not freeze a terminal session.
    """

    max_attempts: int = DEFAULT_MAX_RETRIES + 1
    base_delay: float = 0.5
    max_delay: float = 32.0
    retry_after_cap: float = 60.0
    jitter: float = 0.25

    def delay(
        self,
        attempt: int,
        retry_after: float | None = None,
        rand: Callable[[], float] = random.random,
    ) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        if retry_after is not None and retry_after > 0:
            return min(retry_after, self.retry_after_cap)
        backoff = min(self.base_delay * 2 ** max(0, attempt - 1), self.max_delay)
        return max(0.0, backoff * (1 - self.jitter * rand()))


@datarecord(frozen=True, slots=True)
class RetryNotice:
    """Told to ``on_retry`` before the client waits and asks again.

    ``discarded_text``: text already streamed to ``on_text`` by the failed attempt; the retry
    streams the answer from the start, so a UI should drop what it showed. ``handed_out``: ids
    of tool_use blocks the failed attempt gave to ``on_tool_use``; under the client's strategy a
    failure after a hand-out returns a partial turn instead of retrying, so this is always empty
    when a retry happens — it is part of the notice so that contract is checkable.
    """

    attempt: int  # the attempt that failed, 1-based
    delay: float  # seconds until the next attempt
    reason: str
    discarded_text: str = ""
    handed_out: tuple[str, ...] = ()
    endpoint: str = ""  # where the next attempt goes (the URL, or the cloud provider)
    max_attempts: int = 0  # attempts allowed in all; 0: unknown
    status: int | None = None  # the failed attempt's HTTP status (None: no answer, a stream error)
    error_type: str | None = None  # the API's error type (``overloaded_error``...), when it said
    fallback_model: str | None = None  # set when the client switched to the fallback model
