"""The seam between the client (retries, the turn) and the wire: one ``Transport``, two kinds.

* ``HttpTransport`` (``agent_cli.model.http_transport``): the first-party Messages API and
  compatible endpoints, on httpcore (never httpx). It never imports the anthropic SDK, which costs
  more start-up time (~1 s) than a whole short print-mode run.
* ``SdkTransport`` (``agent_cli.model.sdk_transport``): Bedrock and Vertex, through the SDK's
  clients for them (request signing, AWS event streams); imported only when one is configured.

Chosen once, at start, from ``ModelConfig.cloud`` (``make_transport``, which imports the one it
picks). Either one yields the API's stream events as plain dicts and raises ``AttemptError`` for
every failure, classified the same way; what they skip but survive goes to ``warn``
(``agent_cli.model.warn``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from agent_cli.model.config import ModelConfig
from agent_cli.model.warn import Warn

__all__ = ["Transport", "make_transport"]


class Transport(Protocol):
    """Streams one request; see the module docstring."""

    def stream(
        self, body: Mapping[str, Any], warn: Warn
    ) -> AbstractAsyncContextManager[AsyncIterator[Mapping[str, Any]]]:
        """``async with t.stream(body, warn) as events: async for event in events: ...``.

        ``body`` is the request without ``stream``. Raises ``AttemptError`` (HTTP status,
        in-stream error, lost or stalled connection), ``BadStream`` (bytes that are not an
        event stream) or ``KeyHelperError``; ``warn`` hears what was skipped but survivable.
        """
        ...

    async def reauthenticate(self) -> bool:
        """After a 401: get fresh credentials if there is a way to (True), else False."""
        ...

    async def aclose(self) -> None: ...


def make_transport(config: ModelConfig, **kwargs: Any) -> Transport:
    """The transport for ``config``: the SDK only for a cloud provider."""
    if config.cloud is not None:
        from agent_cli.model.sdk_transport import SdkTransport

        return SdkTransport(config, **kwargs)
    from agent_cli.model.http_transport import HttpTransport

    return HttpTransport(config, **kwargs)
