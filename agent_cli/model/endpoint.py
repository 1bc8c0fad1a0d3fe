"""Where the model lives and how to reach it: provider, credentials, headers, timeouts.

Read from an explicit environment mapping (the caller passes the session's environment, the
settings ``env`` merged in; ``os.environ`` by default), with Claude Code's variable names:

* ``CLAUDE_CODE_USE_BEDROCK`` / ``CLAUDE_CODE_USE_VERTEX``: the cloud providers, through the
  SDK's clients (``AWS_REGION``, ``ANTHROPIC_BEDROCK_BASE_URL``, ``CLAUDE_CODE_SKIP_BEDROCK_AUTH``;
  ``ANTHROPIC_VERTEX_PROJECT_ID``, ``CLOUD_ML_REGION``, ``ANTHROPIC_VERTEX_BASE_URL``,
  ``CLAUDE_CODE_SKIP_VERTEX_AUTH``). Any other ``CLAUDE_CODE_USE_*`` flag names a provider Nerve
  does not speak: an error, never a silent fall back to the first-party API.
* ``ANTHROPIC_AUTH_TOKEN`` (``Authorization: Bearer``), ``ANTHROPIC_API_KEY`` (``x-api-key``), the
  ``apiKeyHelper`` setting (``CLAUDE_CODE_API_KEY_HELPER_TTL_MS``), ``ANTHROPIC_CUSTOM_HEADERS``.
* ``CLAUDE_STREAM_IDLE_TIMEOUT_MS`` (as Claude Code: default 90 s, at least 15 s) or
  ``NERVE_STREAM_IDLE_TIMEOUT_S`` (no minimum): silence after which a stream counts as stalled;
  ``CLAUDE_CODE_MAX_RETRIES``.

A value that cannot be read is a ``ModelConfigError``: one line for the user, no guessing.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from typing import Literal

from tools.records import datarecord

__all__ = [
    "DEFAULT_HELPER_TIMEOUT_S",
    "DEFAULT_STREAM_IDLE_TIMEOUT_S",
    "CloudConfig",
    "KeyHelperConfig",
    "ModelConfigError",
    "Provider",
    "cloud_config",
    "custom_headers",
    "env_flag",
    "env_number",
    "key_helper_config",
    "max_retries",
    "provider",
    "require_extra",
    "stream_idle_timeout",
]

Provider = Literal["anthropic", "bedrock", "vertex"]
DEFAULT_STREAM_IDLE_TIMEOUT_S = 90.0
DEFAULT_HELPER_TIMEOUT_S = 30.0
DEFAULT_VERTEX_REGION = "us-east5"  # Claude Code's default
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"", "0", "false", "no", "off"})
_SUPPORTED = {"CLAUDE_CODE_USE_BEDROCK": "bedrock", "CLAUDE_CODE_USE_VERTEX": "vertex"}


class ModelConfigError(ValueError):
    """The model settings cannot be used as they are; the message says which and why."""


@datarecord(frozen=True, slots=True)
class KeyHelperConfig:
    """``apiKeyHelper``: a shell command whose standard output is the API key."""

    command: str
    ttl_s: float | None = None  # None: kept until a 401 says it is stale
    timeout_s: float = DEFAULT_HELPER_TIMEOUT_S
    env: tuple[tuple[str, str], ...] | None = None  # the helper's environment; None: ours


@datarecord(frozen=True, slots=True)
class CloudConfig:
    """A cloud provider's endpoint, served through the anthropic SDK's client for it."""

    provider: Literal["bedrock", "vertex"]
    region: str
    base_url: str | None = None
    skip_auth: bool = False
    project_id: str | None = None  # Vertex
    aws_access_key: str | None = None  # Bedrock: explicit credentials, else boto3's own chain
    aws_secret_key: str | None = None
    aws_session_token: str | None = None
    aws_profile: str | None = None
    bedrock_api_key: str | None = None  # AWS_BEARER_TOKEN_BEDROCK


def _get(env: Mapping[str, str], name: str) -> str:
    return str(env.get(name) or "").strip()


def env_flag(env: Mapping[str, str], name: str) -> bool:
    """A boolean variable: 1/true/yes/on or 0/false/no/off (any case); anything else is an error."""
    value = _get(env, name).lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ModelConfigError(f"{name} must be 1 or 0 (true/false), got {env.get(name)!r}")


def env_number(
    env: Mapping[str, str], name: str, *, scale: float = 1.0, minimum: float = 0.0
) -> float | None:
    """A non-negative number times ``scale``; None when unset; below ``minimum``: the minimum."""
    raw = _get(env, name)
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise ModelConfigError(f"{name} must be a non-negative number, got {env.get(name)!r}")
    return max(value * scale, minimum)


def provider(env: Mapping[str, str]) -> Provider:
    """The provider the environment asks for; two at once, or one Nerve lacks, is an error."""
    chosen = [n for n in sorted(env) if n.startswith("CLAUDE_CODE_USE_") and env_flag(env, n)]
    unknown = [name for name in chosen if name not in _SUPPORTED]
    if unknown:
        raise ModelConfigError(
            f"{unknown[0]} asks for a model provider Nerve does not support "
            "(supported: CLAUDE_CODE_USE_BEDROCK, CLAUDE_CODE_USE_VERTEX); unset it to use "
            "the Anthropic API"
        )
    if len(chosen) > 1:
        raise ModelConfigError(f"{' and '.join(chosen)} are both set; choose one provider")
    return _SUPPORTED[chosen[0]] if chosen else "anthropic"  # type: ignore[return-value]


def cloud_config(env: Mapping[str, str], which: Provider) -> CloudConfig | None:
    """The Bedrock or Vertex endpoint; None for the Anthropic API."""
    cloud = _cloud(env, which)
    if cloud is not None:
        require_extra(cloud)
    return cloud


def _cloud(env: Mapping[str, str], which: Provider) -> CloudConfig | None:
    if which == "bedrock":
        region = _get(env, "AWS_REGION") or _get(env, "AWS_DEFAULT_REGION")
        if not region:
            raise ModelConfigError(
                "CLAUDE_CODE_USE_BEDROCK is set but AWS_REGION is not (e.g. AWS_REGION=us-east-1)"
            )
        return CloudConfig(
            "bedrock",
            region,
            base_url=_get(env, "ANTHROPIC_BEDROCK_BASE_URL") or None,
            skip_auth=env_flag(env, "CLAUDE_CODE_SKIP_BEDROCK_AUTH"),
            aws_access_key=_get(env, "AWS_ACCESS_KEY_ID") or None,
            aws_secret_key=_get(env, "AWS_SECRET_ACCESS_KEY") or None,
            aws_session_token=_get(env, "AWS_SESSION_TOKEN") or None,
            aws_profile=_get(env, "AWS_PROFILE") or None,
            bedrock_api_key=_get(env, "AWS_BEARER_TOKEN_BEDROCK") or None,
        )
    if which == "vertex":
        project = _get(env, "ANTHROPIC_VERTEX_PROJECT_ID")
        if not project:
            raise ModelConfigError(
                "CLAUDE_CODE_USE_VERTEX is set but ANTHROPIC_VERTEX_PROJECT_ID is not "
                "(your Google Cloud project id)"
            )
        return CloudConfig(
            "vertex",
            _get(env, "CLOUD_ML_REGION") or DEFAULT_VERTEX_REGION,
            base_url=_get(env, "ANTHROPIC_VERTEX_BASE_URL") or None,
            skip_auth=env_flag(env, "CLAUDE_CODE_SKIP_VERTEX_AUTH"),
            project_id=project,
        )
    return None


# What each provider imports: the SDK, plus what signs its requests and reads its stream.
_EXTRAS = {"bedrock": ("anthropic", "botocore", "boto3"), "vertex": ("anthropic", "google.auth")}


def require_extra(cloud: CloudConfig) -> None:
    """A one-line error naming what to install when the provider's libraries are missing."""
    needed = _EXTRAS[cloud.provider]
    if cloud.skip_auth:  # no signing; Bedrock still needs botocore to read its event stream
        needed = needed[:2] if cloud.provider == "bedrock" else needed[:1]
    for module in needed:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            name = "Bedrock" if cloud.provider == "bedrock" else "Vertex AI"
            raise ModelConfigError(
                f"{name} needs the {module.split('.')[0]} package, which is not installed: "
                f"pip install 'nerve[{cloud.provider}]'"
            )


def custom_headers(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """``ANTHROPIC_CUSTOM_HEADERS``: ``Name: value`` lines, split at the first colon."""
    out: list[tuple[str, str]] = []
    for line in str(env.get("ANTHROPIC_CUSTOM_HEADERS") or "").splitlines():
        name, colon, value = line.partition(":")
        if colon and name.strip():
            out.append((name.strip(), value.strip()))
    return tuple(out)


def key_helper_config(command: str | None, env: Mapping[str, str]) -> KeyHelperConfig | None:
    """The ``apiKeyHelper`` command with its refresh interval and time limit."""
    if not command or not command.strip():
        return None
    ttl = env_number(env, "CLAUDE_CODE_API_KEY_HELPER_TTL_MS", scale=0.001)
    timeout = env_number(env, "NERVE_API_KEY_HELPER_TIMEOUT_S", minimum=0.05)
    return KeyHelperConfig(
        command.strip(), ttl or None, DEFAULT_HELPER_TIMEOUT_S if timeout is None else timeout
    )


def stream_idle_timeout(env: Mapping[str, str]) -> float:
    """Seconds without a byte after which a stream (or a response still to start) is stalled."""
    nerve = env_number(env, "NERVE_STREAM_IDLE_TIMEOUT_S", minimum=0.05)
    if nerve is not None:
        return nerve
    claude = env_number(env, "CLAUDE_STREAM_IDLE_TIMEOUT_MS", scale=0.001, minimum=15.0)
    return DEFAULT_STREAM_IDLE_TIMEOUT_S if claude is None else claude


def max_retries(env: Mapping[str, str], default: int) -> int:
    """``CLAUDE_CODE_MAX_RETRIES``: retries after the first attempt."""
    value = env_number(env, "CLAUDE_CODE_MAX_RETRIES")
    if value is None:
        return default
    if value != int(value):
        raise ModelConfigError(
            f"CLAUDE_CODE_MAX_RETRIES must be a whole number, got {env.get('CLAUDE_CODE_MAX_RETRIES')!r}"
        )
    return int(value)
