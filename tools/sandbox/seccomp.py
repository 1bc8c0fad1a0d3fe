"""A seccomp filter that refuses new unix sockets inside the sandbox (bubblewrap ``--seccomp``).

The filesystem is mounted read-only, but ``connect()`` to a unix socket needs no write access
to the mount, so ``/var/run/docker.sock`` (root on the host), an ssh agent or a tmux server would
be one ``connect`` away. The network namespace already isolates abstract sockets, TCP and raw
sockets; what is left is ``socket(AF_UNIX, ...)``, which this filter answers with ``EPERM``.
``socketpair`` stays allowed (pipes between a program's own processes need it), and the
sandbox's only way out is the proxy, which it reaches over TCP on its own loopback.

The program is classic BPF over ``struct seccomp_data`` (``nr`` at 0, ``arch`` at 4, ``args[0]``
at 16), assembled here with labels: no libseccomp needed. The 32-bit entry points of a 64-bit
kernel are covered too; i386's ``socketcall`` is refused outright, since its arguments are behind
a pointer a filter cannot read. Other machines get no filter: :func:`unix_socket_filter` is None.
"""

from __future__ import annotations

import platform
import struct
from typing import Final

__all__ = ["unix_socket_filter"]

_LD = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_ALLOW: Final = 0x7FFF0000  # SECCOMP_RET_ALLOW
_EPERM: Final = 0x00050000 | 1  # SECCOMP_RET_ERRNO | EPERM
_AF_UNIX: Final = 1
_X32: Final = 0x40000000

# (label, opcode, k, label if true, label if false); a jump to None falls through
_Ins = tuple[str | None, int, int, str | None, str | None]


def _assemble(program: list[_Ins]) -> bytes:
    labels = {ins[0]: pc for pc, ins in enumerate(program) if ins[0]}
    out = []
    for pc, (_, code, k, yes, no) in enumerate(program):
        jt = labels[yes] - pc - 1 if yes else 0
        jf = labels[no] - pc - 1 if no else 0
        out.append(struct.pack("=HBBI", code, jt, jf, k))
    return b"".join(out)


def _filter(native: tuple[int, tuple[int, ...]], compat: tuple[int, int, int | None]) -> bytes:
    """``native``: (audit arch, socket syscall numbers); ``compat``: (audit arch, socket nr,
    socketcall nr or None) of the 32-bit ABI the kernel also runs."""
    arch, socket_nrs = native
    c_arch, c_socket, c_socketcall = compat
    prog: list[_Ins] = [
        (None, _LD, 4, None, None),
        (None, _JEQ, arch, "native", None),
        (None, _JEQ, c_arch, "compat", "allow"),
        ("native", _LD, 0, None, None),
    ]
    for i, nr in enumerate(socket_nrs):
        last = i == len(socket_nrs) - 1
        prog.append((None, _JEQ, nr, "check", "allow" if last else None))
    prog.append(("compat", _LD, 0, None, None))
    if c_socketcall is not None:
        prog.append((None, _JEQ, c_socketcall, "deny", None))
    prog += [
        (None, _JEQ, c_socket, "check", "allow"),
        ("check", _LD, 16, None, None),
        (None, _JEQ, _AF_UNIX, "deny", "allow"),
        ("allow", _RET, _ALLOW, None, None),
        ("deny", _RET, _EPERM, None, None),
    ]
    return _assemble(prog)


_MACHINES: Final[dict[str, tuple[tuple[int, tuple[int, ...]], tuple[int, int, int | None]]]] = {
    # x86-64 (and x32), with i386 beside it
    "x86_64": ((0xC000003E, (41, 41 | _X32)), (0x40000003, 359, 102)),
    # aarch64, with 32-bit ARM beside it
    "aarch64": ((0xC00000B7, (198,)), (0x40000028, 281, None)),
}
_ALIASES: Final[dict[str, str]] = {"amd64": "x86_64", "arm64": "aarch64"}
_CACHE: dict[str, bytes | None] = {}


def unix_socket_filter(machine: str | None = None) -> bytes | None:
    """The compiled filter for this machine, or None where Nerve has none."""
    name = machine or platform.machine()
    name = _ALIASES.get(name, name)
    if name not in _CACHE:
        spec = _MACHINES.get(name)
        _CACHE[name] = _filter(*spec) if spec is not None else None
    return _CACHE[name]
