"""Bedrock and Vertex through the anthropic SDK's clients: the one module that imports the SDK.

The SDK signs the requests (SigV4 with boto3, Google credentials with google-auth) and decodes
Bedrock's AWS event stream; the events it yields are turned back into the API's dicts
(``to_dict()``: only what was on the wire) for the shared fold. The SDK's own retries are off
(``max_retries=0``): it would obey ``retry-after`` uncapped and silently. Facts relied on (SDK
2.x, reference/stack.md §3): a cut stream raises a raw ``httpx2`` transport error; an in-stream
``event: error`` becomes ``APIStatusError`` with ``status_code == 200``.

``CLAUDE_CODE_SKIP_BEDROCK_AUTH`` / ``CLAUDE_CODE_SKIP_VERTEX_AUTH``: no signing, no token (an
LLM gateway in front adds its own), so those need neither boto3 nor google-auth.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anthropic
import httpx2

from agent_cli.model.config import ModelConfig
from agent_cli.model.endpoint import require_extra
from agent_cli.model.errors import (
    AttemptError,
    BadStream,
    ErrorInfo,
    connection_lost,
    in_stream_error,
    status_error,
)
from agent_cli.model.warn import Warn

__all__ = ["SdkTransport", "classify_sdk_error", "make_sdk_client"]


class _UnsignedBedrock(anthropic.AsyncAnthropicBedrock):
    async def _prepare_request(self, request: httpx2.Request) -> None:
        return None  # CLAUDE_CODE_SKIP_BEDROCK_AUTH: the gateway authenticates


class _UnsignedVertex(anthropic.AsyncAnthropicVertex):
    async def _prepare_request(self, request: httpx2.Request) -> None:
        return None  # CLAUDE_CODE_SKIP_VERTEX_AUTH


def make_sdk_client(config: ModelConfig, **kwargs: Any) -> Any:
    """The SDK client for ``config.cloud`` (no retries of its own, our idle timeout)."""
    cloud = config.cloud
    assert cloud is not None
    require_extra(cloud)
    kwargs.setdefault("max_retries", 0)
    kwargs.setdefault(
        "timeout",
        httpx2.Timeout(config.timeout, read=config.idle_timeout, connect=10.0),
    )
    headers = dict(config.headers)
    if config.betas:
        headers["anthropic-beta"] = ",".join(config.betas)
    kwargs.setdefault("default_headers", headers or None)
    if cloud.provider == "bedrock":
        cls = _UnsignedBedrock if cloud.skip_auth else anthropic.AsyncAnthropicBedrock
        creds: dict[str, Any] = {}
        if not cloud.skip_auth:
            if cloud.bedrock_api_key:
                creds["api_key"] = cloud.bedrock_api_key
            else:
                creds.update(
                    aws_access_key=cloud.aws_access_key,
                    aws_secret_key=cloud.aws_secret_key,
                    aws_session_token=cloud.aws_session_token,
                    aws_profile=cloud.aws_profile,
                )
        return cls(aws_region=cloud.region, base_url=cloud.base_url, **creds, **kwargs)
    vcls = _UnsignedVertex if cloud.skip_auth else anthropic.AsyncAnthropicVertex
    project = cloud.project_id or ""  # resolve() requires one
    return vcls(region=cloud.region, project_id=project, base_url=cloud.base_url, **kwargs)


def classify_sdk_error(exc: BaseException) -> ErrorInfo | None:
    """An SDK or httpx2 exception as ``ErrorInfo``; None when it is something else."""
    if isinstance(exc, anthropic.APIStatusError):
        headers = exc.response.headers
        if exc.status_code == 200:  # an `event: error` inside a 200 stream
            return in_stream_error(exc.body, headers.get("request-id"))
        return status_error(exc.status_code, exc.body, headers, exc.message)
    if isinstance(exc, anthropic.APITimeoutError):
        return connection_lost("the request timed out")
    if isinstance(exc, anthropic.APIConnectionError):
        return connection_lost(str(exc.__cause__ or exc))
    if isinstance(exc, httpx2.TimeoutException):
        return connection_lost("the stream stalled")
    if isinstance(exc, httpx2.TransportError):
        return connection_lost(str(exc) or type(exc).__name__)
    if isinstance(exc, anthropic.APIError):
        return ErrorInfo(False, f"bad response: {exc.message}", message=exc.message)
    return None


class SdkTransport:
    """See the module docstring. ``client``: an SDK client to use instead (tests)."""

    def __init__(self, config: ModelConfig, *, client: Any = None) -> None:
        self.config = config
        self._client = client or make_sdk_client(config)

    async def aclose(self) -> None:
        await self._client.close()

    async def reauthenticate(self) -> bool:
        return False  # the SDK refreshes cloud credentials itself

    @asynccontextmanager
    async def stream(
        self, body: Mapping[str, Any], warn: Warn
    ) -> AsyncIterator[AsyncIterator[Mapping[str, Any]]]:
        try:
            stream = await self._client.messages.create(**body, stream=True)
        except Exception as exc:
            classified = _classified(exc)
            if classified is exc:  # credentials the SDK could not find or refresh, ...
                name = "Bedrock" if self.config.provider == "bedrock" else "Vertex AI"
                info = ErrorInfo(False, f"{name} request failed: {exc}", message=f"{name}: {exc}")
                raise AttemptError(info) from exc
            raise classified from exc
        events = _dicts(stream)
        try:
            yield events
        finally:
            await events.aclose()
            await stream.close()


async def _dicts(stream: Any) -> AsyncGenerator[Mapping[str, Any], None]:
    iterator = stream.__aiter__()
    while True:
        try:
            event = await iterator.__anext__()
        except StopAsyncIteration:
            return
        except Exception as exc:
            raise _classified(exc) from exc
        yield event.to_dict()


def _classified(exc: BaseException) -> Exception:
    info = classify_sdk_error(exc)
    if info is not None:
        return AttemptError(info)
    if isinstance(exc, ValueError):  # the SDK could not read an event's JSON
        return BadStream(str(exc))
    return exc if isinstance(exc, Exception) else RuntimeError(str(exc))
