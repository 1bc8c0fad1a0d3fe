"""The sandbox's one way out: a proxy port on its own loopback, served from outside.

Inside the sandbox there is no network but a private loopback. Nerve makes ``127.0.0.1:3128``
there lead to its proxy (``tools.sandbox.proxy``), which runs outside, in this process:

* **Joined namespace** (root, or ``CAP_SYS_ADMIN``): a short-lived thread enters the sandbox's
  network namespace (``setns``), opens the listening socket there and leaves; the socket keeps
  belonging to that namespace, and the event loop serves it like any other. No extra process.
* **Relay** (an ordinary user, who may not join a namespace from a threaded process):
  ``nsenter --user --net`` puts ``socat`` into the sandbox's namespaces, listening on the same
  port and forwarding each connection to a unix socket the proxy serves. socat runs outside the
  sandbox's seccomp filter, which refuses unix sockets to everything inside.

Both wait until the port listens before the sandboxed command is released (bubblewrap's
``--block-fd``), so the first ``curl`` never races the set-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import socket
import threading
import time
from pathlib import Path
from typing import Final

from tools.builtin.owners import note_group, owner_env

__all__ = ["PROXY_PORT", "Relay", "listen_in_netns", "start_relay"]

PROXY_PORT: Final = 3128
_CLONE_NEWNET: Final = 0x40000000
_READY_TIMEOUT_S: Final = 5.0
_LISTEN_HEX: Final = f":{PROXY_PORT:04X} 00000000:0000 0A"  # /proc/net/tcp, state LISTEN

_libc: ctypes.CDLL | None = None
_JOIN_DENIED = False  # once setns was refused, this process always relays


def _setns(fd: int) -> int:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    if _libc.setns(fd, _CLONE_NEWNET) != 0:
        return ctypes.get_errno()
    return 0


def _listen_thread(pid: int, out: dict[str, object]) -> None:
    try:
        fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
    except OSError as exc:
        out["error"] = exc
        return
    try:
        err = _setns(fd)
    finally:
        os.close(fd)
    if err:
        out["error"] = PermissionError(err, os.strerror(err))
        return
    # This thread now lives in the sandbox's namespace; it ends right after, so nothing else
    # ever runs here. The socket stays in the namespace for good.
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", PROXY_PORT))
        sock.listen(64)
        sock.setblocking(False)
        out["sock"] = sock
    except OSError as exc:
        out["error"] = exc


async def listen_in_netns(pid: int) -> socket.socket | None:
    """A listening socket on the proxy port inside ``pid``'s network namespace, or None when
    this process may not join it (then use :func:`start_relay`). Raises ``OSError`` otherwise."""
    global _JOIN_DENIED
    if _JOIN_DENIED:
        return None
    out: dict[str, object] = {}
    thread = threading.Thread(target=_listen_thread, args=(pid, out), name="nerve-netns")
    thread.start()
    await asyncio.to_thread(thread.join)
    error = out.get("error")
    if isinstance(error, PermissionError):
        _JOIN_DENIED = True
        return None
    if isinstance(error, OSError):
        raise error
    sock = out.get("sock")
    assert isinstance(sock, socket.socket)
    return sock


class Relay:
    """A running socat relay; :meth:`stop` ends it (also its process group)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    async def stop(self) -> None:
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, 9)
        with contextlib.suppress(ProcessLookupError):
            await self.proc.wait()


def _listening(pid: int) -> bool:
    try:
        return _LISTEN_HEX in Path(f"/proc/{pid}/net/tcp").read_text()
    except OSError:
        return False


async def start_relay(pid: int, unix_path: Path, *, nsenter: str, socat: str) -> Relay:
    """socat in ``pid``'s user and network namespaces, relaying the proxy port to
    ``unix_path``; returns once it listens. Raises ``OSError`` if it cannot."""
    proc = await asyncio.create_subprocess_exec(
        nsenter,
        f"--target={pid}",
        "--user",
        "--net",
        "--preserve-credentials",
        socat,
        f"TCP-LISTEN:{PROXY_PORT},bind=127.0.0.1,reuseaddr,fork",
        f"UNIX-CONNECT:{unix_path}",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,
        env=owner_env(),  # a crashed Nerve's relay is ended by the next start's reaper
    )
    note_group(proc.pid)
    relay = Relay(proc)
    deadline = time.monotonic() + _READY_TIMEOUT_S
    while not _listening(proc.pid):
        if proc.returncode is not None or time.monotonic() > deadline:
            await relay.stop()
            raise OSError(f"the network relay ({socat} under {nsenter}) did not start")
        await asyncio.sleep(0.001)
    return relay
