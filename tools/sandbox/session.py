"""A session's sandbox: its settings, whether it works here, its temp dir, and each run.

:class:`SandboxSession` lives in ``ctx.options.services.sandbox``, shared with sub-agents.
:meth:`SandboxSession.prepare` turns one command into a :class:`PreparedRun`: the bubblewrap
command line (``tools.sandbox.mounts``), the environment (no credentials of Nerve's, ``TMPDIR``
the session's temp dir, the proxy variables), and the two steps around the spawn —
``after_spawn`` opens the proxy port inside the new network namespace before the command is
released, ``cleanup`` closes the proxy and removes the stubs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import Final

from tools.records import datarecord
from tools.sandbox.gitlinks import GitlinkGuard
from tools.sandbox.netns import PROXY_PORT, Handshake, Relay, handshake, start_relay
from tools.sandbox.platform import Availability, Backend, Bubblewrap, backend_for, minimal_dev_args
from tools.sandbox.policy import Confinement, confinement
from tools.sandbox.proxy import DomainGate, Proxy
from tools.sandbox.readrules import DeniedReads
from tools.sandbox.seccomp import sandbox_filter
from tools.sandbox.settings import SandboxConfig
from tools.sandbox.stubs import StubRegistry

__all__ = ["SECRET_ENV", "PreparedRun", "SandboxSession"]

# Credentials Nerve itself uses: a sandboxed command never sees them.
SECRET_ENV: Final[frozenset[str]] = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_CUSTOM_HEADERS",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "NERVE_API_KEY",
        "AWS_BEARER_TOKEN_BEDROCK",
    }
)
_PROXY_VARS: Final = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY")


def sandbox_env(base: dict[str, str], tmp: Path, *, network: bool) -> dict[str, str]:
    """``base`` without Nerve's credentials, with the temp dir and the proxy settings."""
    env = {k: v for k, v in base.items() if k not in SECRET_ENV}
    env.update(TMPDIR=str(tmp), TMP=str(tmp), TEMP=str(tmp), NERVE_SANDBOX="1")
    for name in (*_PROXY_VARS, "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        env.pop(name, None)
    if network:
        url = f"http://127.0.0.1:{PROXY_PORT}"
        env.update(dict.fromkeys(_PROXY_VARS, url))
        env["NO_PROXY"] = env["no_proxy"] = "localhost,127.0.0.1,::1"
    return env


@datarecord
class PreparedRun:
    """One sandboxed command, ready to spawn (``argv``, ``env``, ``pass_fds``)."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...]
    proxy: Proxy | None
    notices: list[str] = field(default_factory=list)
    _session: SandboxSession | None = None
    _child_fds: list[int] = field(default_factory=list)  # our copies of the child's ends
    _own_fds: list[int] = field(default_factory=list)  # info read end, block write end
    _stubs: list[Path] = field(default_factory=list)
    _relay: Relay | None = None
    _unix: Path | None = None
    _shake: asyncio.Future[Handshake] | None = None
    _closed: bool = False

    def _close_child_fds(self) -> None:
        for fd in self._child_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._child_fds.clear()

    async def after_spawn(self, _pid: int) -> None:
        """Open the proxy port inside the sandbox, then let the command run."""
        self._close_child_fds()
        info_r, block_w = self._own_fds
        shake = Handshake()
        try:
            self._shake = handshake(info_r, block_w)
            shake = await asyncio.shield(self._shake)
            if shake.error is not None:
                self.notices.append(
                    f"[sandbox] the network proxy could not start ({shake.error}): no network"
                )
            elif shake.sock is not None and self.proxy is not None:
                await self.proxy.serve_socket(shake.sock)
            elif shake.pid is not None:
                await self._relay_network(shake.pid)
        finally:
            if not shake.released:
                with contextlib.suppress(OSError):
                    os.write(block_w, b"1")

    async def _relay_network(self, child: int) -> None:
        assert self.proxy is not None and self._session is not None
        try:
            backend = self._session.backend
            if not isinstance(backend, Bubblewrap) or not (backend.socat and backend.nsenter):
                self.notices.append("[sandbox] no network relay (socat): no network at all")
                return
            self._unix = self._session.private_dir() / f"proxy-{os.getpid()}-{id(self)}.sock"
            await self.proxy.serve_unix(self._unix)
            self._relay = await start_relay(
                child, self._unix, nsenter=backend.nsenter, socat=backend.socat
            )
        except OSError as exc:
            self.notices.append(f"[sandbox] the network proxy could not start ({exc}): no network")

    async def cleanup(self) -> None:
        """After the command: the proxy, the relay, the stubs, the descriptors. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._close_child_fds()
        if self._shake is not None and not self._shake.done():
            await asyncio.wait({self._shake})  # its thread still uses the descriptors
        for fd in self._own_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        if self.proxy is not None:
            await self.proxy.close()
            self.notices += [n for n in self.proxy.notices if n not in self.notices]
        if self._relay is not None:
            await self._relay.stop()
        if self._unix is not None:
            with contextlib.suppress(OSError):
                self._unix.unlink()
        if self._session is not None:
            self._session.stubs.release(self._stubs)


class SandboxSession:
    """The sandbox of one session (see the module docstring)."""

    def __init__(
        self,
        config: SandboxConfig,
        *,
        backend: Backend | None = None,
        home: Path | None = None,
        protect: Sequence[Path] = (),
    ) -> None:
        self.config = config
        self.backend = backend or backend_for()
        self.home = home or Path.home()
        self.protect = tuple(protect)  # read-only even inside a writable directory
        self.approved_domains: set[str] = set()
        self.stubs = StubRegistry()
        # the gitlinks sandboxed commands may not add (tools.sandbox.gitlinks): shared by every
        # agent of the session, so a background task's window is seen by the others' commands
        self.gitlinks = GitlinkGuard()
        self._availability: Availability | None = None
        self._tmp: Path | None = None
        self._private: Path | None = None

    @property
    def availability(self) -> Availability:
        if self._availability is None:
            self._availability = self.backend.probe()
        return self._availability

    @property
    def active(self) -> bool:
        """Enabled and working: only then is anything confined (or auto-allowed)."""
        return self.config.enabled and self.availability.ok

    def set_config(self, config: SandboxConfig) -> None:
        self.config = config

    def set_enabled(self, enabled: bool, auto_allow: bool | None = None) -> None:
        auto = self.config.auto_allow if auto_allow is None else auto_allow
        self.config = replace(self.config, enabled=enabled, auto_allow=auto)

    def confinement(self, command: str, disable: bool = False) -> Confinement:
        if not self.config.enabled:
            return confinement(self.config, False, command, disable)
        return confinement(self.config, self.availability.ok, command, disable)

    def has_tmp_dir(self) -> bool:
        return self._tmp is not None

    def tmp_dir(self) -> Path:
        """The session's temp dir (``TMPDIR`` inside the sandbox), made on first use."""
        if self._tmp is None or not self._tmp.is_dir():
            self._tmp = Path(tempfile.mkdtemp(prefix="nerve-sandbox-"))
        return self._tmp

    def private_dir(self) -> Path:
        """Outside the writable set: the relay's unix socket."""
        if self._private is None or not self._private.is_dir():
            self._private = Path(tempfile.mkdtemp(prefix="nerve-proxy-"))
        return self._private

    def prepare(
        self,
        inner: list[str],
        *,
        cwd: Path,
        working_dirs: Sequence[Path],
        env: dict[str, str],
        gate: DomainGate,
        reads: DeniedReads | None = None,
        gitlinks: Sequence[Path] = (),
    ) -> PreparedRun:
        """The sandboxed form of ``inner`` (a ``bash -c`` argv). Raises ``OSError``.
        ``reads``: what the call's ``Read(...)`` deny rules match (``denied_reads``, a walk
        the caller runs off the event loop), hidden from the command like ``denyRead``;
        ``gitlinks``: the submodule paths the git indexes record (``GitlinkWatch.checkouts``,
        from the watch begun before this), guarded like those ``.gitmodules`` lists."""
        from tools.sandbox.mounts import MountRequest, plan_mounts

        backend = self.backend
        assert isinstance(backend, Bubblewrap) and backend.bwrap is not None
        tmp = self.tmp_dir()
        child_fds: list[int] = []
        own_fds: list[int] = []

        def void() -> int:
            fd = os.open(os.devnull, os.O_RDONLY)
            child_fds.append(fd)
            return fd

        reads = reads or DeniedReads()
        plan = None
        try:
            request = MountRequest(
                writable=[*working_dirs, tmp, *self.config.allow_write],
                stub_roots=working_dirs,
                deny_write=self.config.deny_write,
                deny_read=self.config.deny_read,
                allow_read=self.config.allow_read,
                protect=[self.home, *self.protect],
                home=self.home,
                deny_read_rules=reads.paths,
                gitlinks=gitlinks,
            )
            plan = plan_mounts(request, void=void, stubs=self.stubs)
            info_r, info_w = os.pipe()
            block_r, block_w = os.pipe()
            child_fds += [info_w, block_r]
            own_fds += [info_r, block_w]
            args = [
                backend.bwrap,
                "--die-with-parent",
                "--unshare-all",
                "--cap-drop",
                "ALL",
                "--ro-bind",
                "/",
                "/",
                *minimal_dev_args(),
                "--proc",
                "/proc",
                *plan.args,
                "--chdir",
                str(cwd),
                "--info-fd",
                str(info_w),
                "--block-fd",
                str(block_r),
            ]
            # allowAllUnixSockets lifts only the unix-socket rule: io_uring, namespaces and
            # mounts stay refused
            program = sandbox_filter(unix_sockets=self.config.allow_all_unix_sockets)
            if program is not None:
                sec_r, sec_w = os.pipe()
                os.write(sec_w, program)
                os.close(sec_w)
                child_fds.append(sec_r)
                args += ["--seccomp", str(sec_r)]
        except BaseException:
            for fd in (*child_fds, *own_fds):
                os.close(fd)
            if plan is not None:
                self.stubs.release(plan.stubs)
            raise
        proxy = Proxy(gate, self.config.http_proxy_port)
        return PreparedRun(
            argv=[*args, "--", *inner],
            env=sandbox_env(env, tmp, network=True),
            pass_fds=tuple(child_fds),
            proxy=proxy,
            notices=[*plan.notes, *reads.notes],
            _session=self,
            _child_fds=child_fds,
            _own_fds=own_fds,
            _stubs=plan.stubs,
        )

    async def close(self) -> None:
        """Session end: the temp dir and the private dir go."""
        for path in (self._tmp, self._private):
            if path is not None:
                await asyncio.to_thread(shutil.rmtree, path, True)
        self._tmp = self._private = None
