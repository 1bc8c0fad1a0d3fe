"""The sandbox's HTTP proxy (plain requests and HTTPS ``CONNECT``), running outside it.

Every connection names its host (``CONNECT host:443``, or an absolute URI), and the host is
judged before anything is connected (:class:`DomainGate`):

1. ``sandbox.network.deniedDomains`` and ``WebFetch(domain:...)`` deny rules: refused;
2. ``WebFetch(domain:...)`` ask rules: asked;
3. ``sandbox.network.allowedDomains`` and ``WebFetch(domain:...)`` allow rules, and hosts the
   user allowed earlier this session: let through (only managed ones when the managed settings
   set ``allowManagedDomainsOnly``);
4. anything else asks the user through the normal permission prompt (the TUI); print mode and
   dontAsk mode deny it. Background tasks cannot ask: refused.

A host that resolves to a loopback, link-local or unspecified address (the host's own services,
cloud metadata) is refused unless it is listed by exact name. The reason for every refusal goes
back to the client (``403``, ``X-Nerve-Sandbox``) and into the command's result as a notice.
With ``httpProxyPort`` set, connections go unchanged to the user's own proxy on that port.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import field
from pathlib import Path

from permissions.domains import domain_rule_matches
from permissions.types import PermissionRule, RuleBehavior, RuleSource
from tools.records import datarecord
from tools.sandbox.settings import SandboxConfig

__all__ = ["AskAnswer", "DomainGate", "NetworkAsk", "Proxy", "entry_matches"]

_HEAD_LIMIT = 65536
_CONNECT_TIMEOUT_S = 30.0
_HEAD_TIMEOUT_S = 30.0
_CHUNK = 65536


@datarecord(frozen=True, slots=True)
class AskAnswer:
    """The user's answer to "may this command reach host?"; ``remember``: for the session."""

    allowed: bool
    reason: str = ""
    remember: bool = False


NetworkAsk = Callable[[str, int], Awaitable[AskAnswer]]


def entry_matches(entry: str, host: str, port: int) -> bool:
    """``example.com``, ``*.example.com`` (subdomains), optionally ``:port``; ``*`` is any."""
    pattern, sep, tail = entry.rpartition(":")
    if sep and tail.isdigit() and "]" not in tail:
        if int(tail) != port:
            return False
        entry = pattern
    entry = entry.strip("[]")
    return entry == "*" or domain_rule_matches(f"domain:{entry}", f"http://{_url_host(host)}/")


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


@datarecord
class DomainGate:
    """Judges the hosts one sandboxed command wants to reach (see the module docstring)."""

    config: SandboxConfig
    rules: Sequence[PermissionRule] = ()
    approved: set[str] = field(default_factory=set)  # the session's "always" answers
    ask: NetworkAsk | None = None
    deny_asks: str | None = None  # why asks are refused (dontAsk mode, a background task)
    _decided: dict[str, tuple[bool, str]] = field(default_factory=dict)
    _pending: dict[str, asyncio.Future[tuple[bool, str]]] = field(default_factory=dict)

    def _rule(self, behavior: RuleBehavior, host: str) -> PermissionRule | None:
        """The first ``WebFetch(domain:...)`` rule of ``behavior`` matching ``host``; with
        ``allowManagedDomainsOnly`` only managed allow rules count (deny rules always do)."""
        url = f"https://{_url_host(host)}/"
        managed_only = self.config.managed_domains_only and behavior is RuleBehavior.ALLOW
        for rule in self.rules:
            if rule.behavior is not behavior or rule.value.tool_name != "WebFetch":
                continue
            if not (rule.value.content or "").startswith("domain:"):
                continue
            if managed_only and rule.source is not RuleSource.POLICY:
                continue
            if domain_rule_matches(rule.value.content, url):
                return rule
        return None

    def listed(self, host: str) -> bool:
        """Named exactly (no wildcard) in allowedDomains: trusted even on a local address."""
        return any(e.rpartition(":")[0] == host or e == host for e in self.config.allowed_domains)

    def static(self, host: str, port: int) -> tuple[bool, str] | None:
        """The verdict of the settings and rules alone; None: someone must be asked."""
        for entry in self.config.denied_domains:
            if entry_matches(entry, host, port):
                return False, f"{host} is in sandbox.network.deniedDomains ({entry})"
        if (rule := self._rule(RuleBehavior.DENY, host)) is not None:
            return False, f"{host} is denied by the rule {rule.value} from {rule.source.value}"
        if self._rule(RuleBehavior.ASK, host) is not None:
            return None
        for entry in self.config.allowed_domains:
            if entry_matches(entry, host, port):
                return True, f"{entry} is in sandbox.network.allowedDomains"
        if self._rule(RuleBehavior.ALLOW, host) is not None or host in self.approved:
            return True, "allowed"
        if self.config.managed_domains_only:
            return False, f"{host} is not in the managed sandbox.network.allowedDomains"
        return None

    async def decide(self, host: str, port: int) -> tuple[bool, str]:
        """(allowed, reason) for ``host:port``; one question per host per command."""
        key = f"{host}:{port}"
        if key in self._decided:
            return self._decided[key]
        verdict = self.static(host, port)
        if verdict is None:
            verdict = await self._asked(host, port, key)
        self._decided[key] = verdict
        return verdict

    async def _asked(self, host: str, port: int, key: str) -> tuple[bool, str]:
        if self.deny_asks is not None or self.ask is None:
            why = self.deny_asks or "nobody can be asked"
            return False, f"{host} is not in sandbox.network.allowedDomains and {why}"
        pending = self._pending.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[tuple[bool, str]] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            answer = await self.ask(host, port)
        except Exception as exc:  # a broken prompt refuses; it never lets through
            answer = AskAnswer(False, f"the permission prompt failed: {exc}")
        if answer.allowed and answer.remember:
            self.approved.add(host)
        if answer.allowed:
            verdict = (True, answer.reason or "allowed")
        else:
            why = answer.reason or "declined"
            verdict = (False, f"{host} is not in sandbox.network.allowedDomains; {why}")
        future.set_result(verdict)
        return verdict


def _is_local(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    return ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast


def _parse_target(head: bytes) -> tuple[str, str, int, bytes] | None:
    """(method, host, port, head rewritten for the origin server), or None if malformed."""
    line, _, rest = head.partition(b"\r\n")
    parts = line.split(b" ")
    if len(parts) != 3:
        return None
    method, target, version = (p.decode("latin-1") for p in parts)
    if method == "CONNECT":
        name, _, digits = target.rpartition(":")
        name = name.strip("[]").lower().rstrip(".")
        return (method, name, int(digits), b"") if digits.isdigit() and name else None
    if not target.startswith("http://"):
        return None
    authority, slash, path = target[len("http://") :].partition("/")
    host, port = authority, 80
    left, _, tail = authority.rpartition(":")
    if tail.isdigit() and not authority.endswith("]"):
        host, port = left, int(tail)
    headers = [
        h
        for h in rest.split(b"\r\n")
        if h and not h.lower().startswith((b"proxy-", b"connection:", b"keep-alive:"))
    ]
    origin = f"{method} {slash}{path} {version}".encode("latin-1")
    out = b"\r\n".join([origin, *headers, b"Connection: close"]) + b"\r\n\r\n"
    return method, host.strip("[]").lower().rstrip("."), port, out


async def _pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    try:
        while data := await src.read(_CHUNK):
            dst.write(data)
            await dst.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(Exception):
            if dst.can_write_eof():
                dst.write_eof()


class Proxy:
    """One command's proxy: serves a listening socket (or a unix path), records refusals."""

    def __init__(self, gate: DomainGate, upstream_port: int | None = None) -> None:
        self.gate = gate
        self.upstream_port = upstream_port
        self.notices: list[str] = []
        self._servers: list[asyncio.AbstractServer] = []
        self._tasks: set[asyncio.Task[None]] = set()

    async def serve_socket(self, sock: socket.socket) -> None:
        self._servers.append(await asyncio.start_server(self._handle, sock=sock))

    async def serve_unix(self, path: Path) -> None:
        self._servers.append(await asyncio.start_unix_server(self._handle, path=str(path)))

    async def close(self) -> None:
        for server in self._servers:
            server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        self._servers.clear()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)  # type: ignore[arg-type]
        try:
            await self._serve(reader, writer)
        except (ConnectionError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            self._tasks.discard(task)  # type: ignore[arg-type]
            with contextlib.suppress(Exception):
                writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.upstream_port is not None:
            up_r, up_w = await asyncio.open_connection("127.0.0.1", self.upstream_port)
            await asyncio.gather(_pump(reader, up_w), _pump(up_r, writer))
            up_w.close()
            return
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _HEAD_TIMEOUT_S)
        target = _parse_target(head[:_HEAD_LIMIT])
        if target is None:
            await self._refuse(writer, "400 Bad Request", "not a proxy request Nerve understands")
            return
        method, host, port, forward = target
        allowed, reason = await self.gate.decide(host, port)
        address = await self._resolve(host, port) if allowed else None
        if allowed and address is None:
            allowed, reason = False, f"{host} cannot be resolved"
        if allowed and address is not None and _is_local(address[0]) and not self.gate.listed(host):
            allowed = False
            reason = f"{host} resolves to a local address; list it by name in allowedDomains"
        if not allowed or address is None:
            self._note(host, port, reason)
            await self._refuse(writer, "403 Forbidden", reason)
            return
        up_r, up_w = await asyncio.wait_for(
            asyncio.open_connection(address[0], address[1]), _CONNECT_TIMEOUT_S
        )
        if method == "CONNECT":
            writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        else:
            up_w.write(forward)
        await asyncio.gather(_pump(reader, up_w), _pump(up_r, writer))
        up_w.close()

    async def _resolve(self, host: str, port: int) -> tuple[str, int] | None:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host, port, type=socket.SOCK_STREAM
            )
        except OSError:
            return None
        # every address is checked: a name that also resolves locally is refused
        addresses = [info[4] for info in infos]
        local = [a for a in addresses if _is_local(str(a[0]))]
        first = local[0] if local else addresses[0] if addresses else None
        return (str(first[0]), int(first[1])) if first is not None else None

    def _note(self, host: str, port: int, reason: str) -> None:
        note = f"[sandbox] network access to {host}:{port} was refused: {reason}"
        if note not in self.notices:
            self.notices.append(note)

    async def _refuse(self, writer: asyncio.StreamWriter, status: str, reason: str) -> None:
        reason = " ".join(reason.split())  # one header line, whatever the user typed
        body = f"Nerve sandbox: {reason}\n".encode()
        writer.write(
            f"HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
            f"X-Nerve-Sandbox: {reason}\r\nConnection: close\r\n\r\n".encode("latin-1", "replace")
            + body
        )
        await writer.drain()
