"""Pydantic models of a settings file: tolerant of unknown keys, strict on the known ones.

Users' files carry many keys we do not know (``statusLine``, ``outputStyle``, keys of newer
Claude Code versions); ``extra="allow"`` keeps them so nothing a user wrote is lost on the way
through. The keys we act on are validated strictly (no coercion of ``"30"`` to ``30``): a wrong
type there is a broken file, reported with file, line and field.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "HOOK_TYPES",
    "PERMISSION_MODES",
    "HookHandler",
    "HookMatcherGroup",
    "PermissionsSettings",
    "SandboxFilesystemSettings",
    "SandboxNetworkSettings",
    "SandboxSettings",
    "Settings",
    "normalize_mode",
]

# The modes a settings file may name; ``manual`` is accepted as an alias of ``default``.
PERMISSION_MODES: Final[tuple[str, ...]] = (
    "default",
    "acceptEdits",
    "plan",
    "bypassPermissions",
    "dontAsk",
    "auto",
)


def _no_strings() -> list[str]:
    """A fresh empty list. Not ``default_factory=list``: pydantic reads a factory's signature,
    and a builtin's is parsed with ``tokenize``, whose first use compiles a large regex (~8 ms
    of every start-up)."""
    return []


_MODE_ALIASES: Final[dict[str, str]] = {"manual": "default"}

HOOK_TYPES: Final[tuple[str, ...]] = ("command", "http", "prompt", "agent", "mcp_tool")

_LENIENT_STRICT = ConfigDict(extra="allow", strict=True, populate_by_name=True)


def normalize_mode(value: str) -> str:
    """Return the canonical mode name for ``value``; raise ``ValueError`` for an unknown mode."""
    mode = _MODE_ALIASES.get(value, value)
    if mode not in PERMISSION_MODES:
        allowed = ", ".join((*PERMISSION_MODES, *_MODE_ALIASES))
        raise ValueError(f"unknown permission mode {value!r} (expected one of {allowed})")
    return mode


class PermissionsSettings(BaseModel):
    """The ``permissions`` object: rule lists, the start-up mode and extra working dirs."""

    model_config = _LENIENT_STRICT

    allow: list[str] = Field(default_factory=_no_strings)
    deny: list[str] = Field(default_factory=_no_strings)
    ask: list[str] = Field(default_factory=_no_strings)
    defaultMode: str | None = None
    additionalDirectories: list[str] = Field(default_factory=_no_strings)
    disableBypassPermissionsMode: Literal["disable"] | None = None

    @field_validator("defaultMode")
    @classmethod
    def _known_mode(cls, value: str | None) -> str | None:
        return None if value is None else normalize_mode(value)


class HookHandler(BaseModel):
    """One handler of a matcher group (``type`` plus the fields of that type)."""

    model_config = _LENIENT_STRICT

    type: Literal["command", "http", "prompt", "agent", "mcp_tool"]
    command: str | None = None
    args: list[str] | None = None
    # seconds, as in Claude Code; int or float accepted
    timeout: float | None = Field(default=None, gt=0)
    if_: str | None = Field(default=None, alias="if")
    async_: bool | None = Field(default=None, alias="async")
    statusMessage: str | None = None
    url: str | None = None
    headers: dict[str, str] | None = None
    shell: str | None = None

    @model_validator(mode="after")
    def _required_by_type(self) -> HookHandler:
        # A handler that cannot run would fail at every event; better to say so at load time.
        if self.type == "command" and not self.command:
            raise ValueError("a 'command' hook needs a non-empty 'command'")
        if self.type == "http" and not self.url:
            raise ValueError("an 'http' hook needs a 'url'")
        return self


class HookMatcherGroup(BaseModel):
    """A matcher (tool-name pattern; omitted, ``""`` or ``"*"`` = all) and its handlers."""

    model_config = _LENIENT_STRICT

    matcher: str | None = None
    hooks: list[HookHandler]


class SandboxFilesystemSettings(BaseModel):
    """``sandbox.filesystem``: paths (``/abs``, ``~/``, or relative to the settings file's base)."""

    model_config = _LENIENT_STRICT

    allowWrite: list[str] = Field(default_factory=_no_strings)
    denyWrite: list[str] = Field(default_factory=_no_strings)
    denyRead: list[str] = Field(default_factory=_no_strings)
    allowRead: list[str] = Field(default_factory=_no_strings)
    allowManagedReadPathsOnly: bool | None = None


class SandboxNetworkSettings(BaseModel):
    """``sandbox.network``: the domains the proxy lets through, and the sockets left open."""

    model_config = _LENIENT_STRICT

    allowedDomains: list[str] = Field(default_factory=_no_strings)
    deniedDomains: list[str] = Field(default_factory=_no_strings)
    allowManagedDomainsOnly: bool | None = None
    allowUnixSockets: list[str] = Field(default_factory=_no_strings)
    allowAllUnixSockets: bool | None = None
    allowLocalBinding: bool | None = None
    httpProxyPort: int | None = Field(default=None, ge=1, le=65535)
    socksProxyPort: int | None = Field(default=None, ge=1, le=65535)


class SandboxSettings(BaseModel):
    """``sandbox``: Claude Code's keys for running Bash in an OS sandbox (``tools.sandbox``)."""

    model_config = _LENIENT_STRICT

    enabled: bool | None = None
    failIfUnavailable: bool | None = None
    autoAllowBashIfSandboxed: bool | None = None
    allowUnsandboxedCommands: bool | None = None
    excludedCommands: list[str] = Field(default_factory=_no_strings)
    filesystem: SandboxFilesystemSettings = Field(default_factory=SandboxFilesystemSettings)
    network: SandboxNetworkSettings = Field(default_factory=SandboxNetworkSettings)


class Settings(BaseModel):
    """A whole settings file (or the merged effective settings). Unknown keys are kept."""

    model_config = _LENIENT_STRICT

    permissions: PermissionsSettings = Field(default_factory=PermissionsSettings)
    hooks: dict[str, list[HookMatcherGroup]] = Field(default_factory=dict)
    disableAllHooks: bool | None = None
    env: dict[str, str] = Field(default_factory=dict)
    model: str | None = None
    apiKeyHelper: str | None = None
    cleanupPeriodDays: int | None = Field(default=None, ge=0)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)

    def extras(self) -> dict[str, Any]:
        """The keys this model does not know, as written."""
        return dict(self.model_extra or {})
