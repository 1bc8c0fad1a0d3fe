"""The ``sandbox`` settings of every layer, resolved into one :class:`SandboxConfig`.

Claude Code's merge rules (reference §1.2): a scalar comes from the highest layer that sets it;
lists are concatenated across layers. Paths are resolved per layer, so a relative path means the
same thing it meant in the file that wrote it: ``/abs`` and ``//abs`` are absolute, ``~/`` is the
home directory, anything else is relative to the project root (project and local settings) or
to the file's own directory (user, ``--settings``, managed).

Bad input never breaks Bash: an unknown key is a warning naming it (with the nearest known key),
and an ``allowWrite`` path that does not exist is skipped with a note. A wrong *type* on a known
key is a broken settings file, reported like any other (``config.layers``).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping
from dataclasses import field
from pathlib import Path
from typing import Any, Final

from config.models import SandboxFilesystemSettings, SandboxNetworkSettings, SandboxSettings
from tools.records import datarecord

__all__ = ["INERT_KEYS", "SandboxConfig", "expand_sandbox_path", "resolve_sandbox_config"]

# Keys Claude Code documents that Nerve accepts without acting on them (macOS-only switches,
# violation filters, a custom ripgrep): no "unknown key" warning, one note in /sandbox.
INERT_KEYS: Final[dict[str, frozenset[str]]] = {
    "": frozenset(
        {
            "ignoreViolations",
            "enableWeakerNestedSandbox",
            "enableWeakerNetworkIsolation",
            "ripgrep",
            "credentials",
            "allowAppleEvents",
            "allowPty",
            "bwrapPath",
            "mandatoryDenySearchDepth",
        }
    ),
    "network": frozenset({"allowMachLookup", "strictAllowlist", "tlsTerminate"}),
    "filesystem": frozenset(),
}
_KNOWN: Final[dict[str, frozenset[str]]] = {
    "": frozenset(SandboxSettings.model_fields),
    "network": frozenset(SandboxNetworkSettings.model_fields),
    "filesystem": frozenset(SandboxFilesystemSettings.model_fields),
}
_BASE_IS_ROOT: Final[frozenset[str]] = frozenset({"projectSettings", "localSettings"})


@datarecord(frozen=True, slots=True)
class SandboxConfig:
    """The effective sandbox settings. Paths are absolute; ``deny_*``/``allow_read`` may hold
    glob patterns (``*``, ``?``, ``[...]``), expanded when a command starts."""

    enabled: bool = False
    fail_if_unavailable: bool = False
    auto_allow: bool = True
    allow_unsandboxed: bool = True
    excluded_commands: tuple[str, ...] = ()
    allow_write: tuple[Path, ...] = ()
    deny_write: tuple[str, ...] = ()
    deny_read: tuple[str, ...] = ()
    allow_read: tuple[str, ...] = ()
    allowed_domains: tuple[str, ...] = ()
    denied_domains: tuple[str, ...] = ()
    managed_domains_only: bool = False
    allow_all_unix_sockets: bool = False
    allow_unix_sockets: tuple[str, ...] = ()
    allow_local_binding: bool = False
    http_proxy_port: int | None = None
    socks_proxy_port: int | None = None
    # where each scalar came from, for /sandbox (key -> settings source)
    sources: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # skipped paths, inert keys: shown by /sandbox
    warnings: tuple[str, ...] = ()  # unknown keys: shown once at start


def expand_sandbox_path(raw: str, base: Path, home: Path) -> str:
    """``raw`` as an absolute path string (see the module docstring for the prefixes)."""
    text = raw.strip()
    if text.startswith("//"):
        text = text[1:]
    elif text == "~" or text.startswith("~/"):
        text = str(home) + text[1:]
    elif not text.startswith("/"):
        text = str(base / text)
    return os.path.normpath(text)


def _suggest(key: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _unknown_keys(data: Mapping[str, Any], label: str) -> list[str]:
    out: list[str] = []
    for scope, obj in (
        ("", data),
        ("network", data.get("network")),
        ("filesystem", data.get("filesystem")),
    ):
        if not isinstance(obj, Mapping):
            continue
        known = _KNOWN[scope] | INERT_KEYS[scope]
        for key in obj:
            if key not in known:
                dotted = ".".join(p for p in ("sandbox", scope, key) if p)
                out.append(
                    f"{label}: unknown setting {dotted!r}{_suggest(key, known)}; it is ignored "
                    "(the other sandbox settings still apply)"
                )
    return out


def _inert_keys(data: Mapping[str, Any]) -> set[str]:
    found = {k for k in data if k in INERT_KEYS[""]}
    for scope in ("network", "filesystem"):
        obj = data.get(scope)
        if isinstance(obj, Mapping):
            found |= {f"{scope}.{k}" for k in obj if k in INERT_KEYS[scope]}
    return found


def _strings(obj: Any, key: str) -> list[str]:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    return [v for v in value if isinstance(v, str) and v.strip()] if isinstance(value, list) else []


def _dedupe(items: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(dict.fromkeys(items))


class _Collector:
    """Walks the layers once (highest precedence first) and keeps what each key resolves to."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.scalars: dict[str, Any] = {}
        self.sources: dict[str, str] = {}
        self.lists: dict[str, list[Any]] = {}
        self.notes: list[str] = []
        self.warnings: list[str] = []
        self.inert: set[str] = set()
        self.policy_domains: list[str] = []

    def scalar(self, key: str, value: Any, source: str) -> None:
        if isinstance(value, bool | int) and key not in self.scalars:
            self.scalars[key] = value
            self.sources[key] = source

    def add(self, key: str, values: Iterable[Any]) -> None:
        self.lists.setdefault(key, []).extend(values)

    def layer(self, data: Mapping[str, Any], source: str, base: Path, label: str) -> None:
        self.warnings += _unknown_keys(data, label)
        self.inert |= _inert_keys(data)
        for key in ("enabled", "failIfUnavailable", "autoAllowBashIfSandboxed"):
            self.scalar(key, data.get(key), source)
        self.scalar("allowUnsandboxedCommands", data.get("allowUnsandboxedCommands"), source)
        self.add("excludedCommands", (c.strip() for c in _strings(data, "excludedCommands")))
        fs, net = data.get("filesystem"), data.get("network")
        for key in ("allowWrite", "denyWrite", "denyRead", "allowRead"):
            self.add(key, (expand_sandbox_path(p, base, self.home) for p in _strings(fs, key)))
        domains = [d.strip().lower() for d in _strings(net, "allowedDomains")]
        self.add("allowedDomains", domains)
        if source == "policySettings":
            self.policy_domains += domains
        self.add("deniedDomains", (d.strip().lower() for d in _strings(net, "deniedDomains")))
        self.add("allowUnixSockets", _strings(net, "allowUnixSockets"))
        if isinstance(net, Mapping):
            for key in ("allowAllUnixSockets", "allowLocalBinding", "httpProxyPort"):
                self.scalar(key, net.get(key), source)
            self.scalar("socksProxyPort", net.get("socksProxyPort"), source)
            if source == "policySettings":
                self.scalar("allowManagedDomainsOnly", net.get("allowManagedDomainsOnly"), source)

    def writable(self) -> tuple[Path, ...]:
        out: list[Path] = []
        for raw in _dedupe(self.lists.get("allowWrite", [])):
            path = Path(raw)
            if path.exists():
                out.append(path)
            else:
                self.notes.append(f"sandbox.filesystem.allowWrite: {raw} does not exist; skipped")
        return tuple(out)


def resolve_sandbox_config(
    layers: Iterable[Any], *, project_root: Path, home: Path | None = None
) -> SandboxConfig:
    """Merge the ``sandbox`` objects of ``layers`` (``config.LayerFile``, highest first)."""
    c = _Collector(home or Path.home())
    for layer in layers:
        data = layer.effective().get("sandbox")
        if not isinstance(data, Mapping):
            continue
        base = project_root if layer.source in _BASE_IS_ROOT else layer.base_dir
        c.layer(data, layer.source, base, layer.label or layer.source)
    s = c.scalars
    managed_only = s.get("allowManagedDomainsOnly") is True
    domains = c.policy_domains if managed_only else c.lists.get("allowedDomains", [])
    notes = [f"sandbox.{k} is accepted but has no effect in Nerve" for k in sorted(c.inert)]
    if c.lists.get("allowUnixSockets") and not s.get("allowAllUnixSockets"):
        notes.append(
            "sandbox.network.allowUnixSockets: per-path unix sockets cannot be opened on Linux "
            "(seccomp cannot see paths); use allowAllUnixSockets"
        )
    if s.get("socksProxyPort") is not None:
        notes.append("sandbox.network.socksProxyPort is not supported yet; ignored")
    return SandboxConfig(
        enabled=s.get("enabled") is True,
        fail_if_unavailable=s.get("failIfUnavailable") is True,
        auto_allow=s.get("autoAllowBashIfSandboxed") is not False,
        allow_unsandboxed=s.get("allowUnsandboxedCommands") is not False,
        excluded_commands=_dedupe(c.lists.get("excludedCommands", [])),
        allow_write=c.writable(),
        deny_write=_dedupe(c.lists.get("denyWrite", [])),
        deny_read=_dedupe(c.lists.get("denyRead", [])),
        allow_read=_dedupe(c.lists.get("allowRead", [])),
        allowed_domains=_dedupe(domains),
        denied_domains=_dedupe(c.lists.get("deniedDomains", [])),
        managed_domains_only=managed_only,
        allow_all_unix_sockets=s.get("allowAllUnixSockets") is True,
        allow_unix_sockets=_dedupe(c.lists.get("allowUnixSockets", [])),
        allow_local_binding=s.get("allowLocalBinding") is True,
        http_proxy_port=s.get("httpProxyPort") if isinstance(s.get("httpProxyPort"), int) else None,
        socks_proxy_port=None,
        sources=dict(c.sources),
        notes=tuple(c.notes + notes),
        warnings=tuple(c.warnings),
    )
