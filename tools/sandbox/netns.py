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
import json
import os
import select
import socket
import threading
import time
from pathlib import Path
from typing import Any, Final

from tools.process.owners import note_group, owner_env
from tools.records import datarecord

__all__ = ["PROXY_PORT", "Handshake", "Relay", "handshake", "start_relay"]

PROXY_PORT: Final = 3128
_CLONE_NEWNET: Final = 0x40000000
_READY_TIMEOUT_S: Final = (
    30.0  # a loaded machine may take seconds; bubblewrap ending is seen at once
)
_LISTEN_HEX: Final = f":{PROXY_PORT:04X} 00000000:0000 0A"  # /proc/net/tcp, state LISTEN

_libc: Any = None
_JOIN_DENIED = False  # once setns was refused, this process always relays


def _setns(fd: int) -> int:
    """``setns(fd, CLONE_NEWNET)`` for the calling thread; 0 or the errno (Python 3.11 has no
    ``os.setns``)."""
    global _libc
    import ctypes

    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    if _libc.setns(fd, _CLONE_NEWNET) != 0:
        return int(ctypes.get_errno())
    return 0


def _read_info(fd: int, timeout_s: float) -> int | None:
    """The sandbox's pid from bubblewrap's ``--info-fd`` JSON; None if bubblewrap ended first.
    Raises ``TimeoutError`` if it said nothing within ``timeout_s``."""
    data = b""
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError(f"the sandbox did not report its process within {timeout_s:g} s")
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            continue
        if not chunk:
            return None
        data += chunk
        with contextlib.suppress(ValueError):
            info = json.loads(data)
            pid = info.get("child-pid") if isinstance(info, dict) else None
            return pid if isinstance(pid, int) and pid > 0 else None


def _listener(pid: int) -> socket.socket:
    """Join ``pid``'s network namespace (this thread only) and listen there. Raises
    ``PermissionError`` where this process may not join it."""
    fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
    try:
        err = _setns(fd)
    finally:
        os.close(fd)
    if err:
        raise PermissionError(err, os.strerror(err))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", PROXY_PORT))
    sock.listen(64)
    sock.setblocking(False)
    return sock


@datarecord
class Handshake:
    """What :func:`handshake` found: the sandbox's pid and, if this process could join its
    namespace, the listening socket; ``released``: the command was let go already."""

    pid: int | None = None
    sock: socket.socket | None = None
    released: bool = False
    error: OSError | None = None


def _handshake(info_r: int, block_w: int, timeout_s: float) -> Handshake:
    global _JOIN_DENIED
    try:
        out = Handshake(_read_info(info_r, timeout_s))
    except TimeoutError as exc:  # released without a proxy: no network, and it is said
        out = Handshake(error=exc)
    if out.pid is not None and not _JOIN_DENIED:
        try:
            out.sock = _listener(out.pid)
        except PermissionError:
            _JOIN_DENIED = True  # an ordinary user: from now on, the relay
        except OSError as exc:
            out.error = exc
    if out.pid is None or out.sock is not None or out.error is not None:
        with contextlib.suppress(OSError):
            os.write(block_w, b"1")
        out.released = True
    return out


def handshake(
    info_r: int, block_w: int, timeout_s: float = _READY_TIMEOUT_S
) -> asyncio.Future[Handshake]:
    """Wait for the sandbox to exist and open the proxy port inside it, in a thread of its
    own (it joins the sandbox's namespace, so it must never serve anything else afterwards).
    Releases the command unless the relay is needed (then the caller does, once it listens).
    The descriptors must stay open until the returned future is done."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Handshake] = loop.create_future()

    def work() -> None:
        try:
            result = _handshake(info_r, block_w, timeout_s)
        except BaseException as exc:  # pragma: no cover - reported to the awaiting task
            loop.call_soon_threadsafe(done.set_exception, exc)
            return
        loop.call_soon_threadsafe(done.set_result, result)

    threading.Thread(target=work, name="nerve-sandbox-netns", daemon=True).start()
    return done


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
