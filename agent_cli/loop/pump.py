"""Events from a producer task to an async-iterating consumer, as they are produced.

The agent loop's work (a turn, a compaction) runs as its own task and emits events into a
queue; the UI iterates them. A consumer that goes away (the UI closed the iterator) aborts the
work and waits for it to unwind, so no task outlives its consumer.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

__all__ = ["pump"]

_DONE = object()


async def pump(
    work: Callable[[Callable[[Any], None]], Awaitable[None]],
    *,
    abandon: Callable[[], None],
) -> AsyncIterator[Any]:
    """Run ``work(emit)`` and yield each emitted item; ``abandon`` is called if the consumer
    stops early. What ``work`` raises is re-raised here after the last item."""
    queue: asyncio.Queue[Any] = asyncio.Queue()

    async def produce() -> None:
        try:
            await work(queue.put_nowait)
        finally:
            queue.put_nowait(_DONE)

    producer = asyncio.create_task(produce())
    try:
        while True:
            item = await queue.get()
            if item is _DONE:
                break
            yield item
        await producer  # re-raise what the producer could not turn into an event
    finally:
        if not producer.done():
            abandon()
            producer.cancel()
            try:
                await producer
            except (asyncio.CancelledError, Exception):
                pass
