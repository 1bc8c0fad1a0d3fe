"""The sandbox's seccomp filter (bubblewrap ``--seccomp``): the doors mounts cannot close.

The mounts make the filesystem read-only and the network namespace leaves only the proxy, but
some system calls reach past both. :data:`RULES` lists every call the filter refuses, each with
its reason; in short:

* **unix sockets**: ``connect()`` to a unix socket needs no write access to the mount, so
  ``/var/run/docker.sock`` (root on the host), an ssh agent or a tmux server would be one
  ``connect`` away. ``socket(AF_UNIX, ...)`` gets ``EPERM`` (unless ``allowAllUnixSockets``);
  ``socketpair`` stays (pipes between a program's own processes need it);
* **io_uring**: its ``IORING_OP_SOCKET``/``IORING_OP_CONNECT`` requests run inside the kernel
  without a system call of their own, so this filter never sees them: a ring connected to a
  host unix socket although ``socket(2)`` was refused;
* **namespaces**: a new user namespace gives a process every capability again, and with a new
  mount namespace it could unmount or re-bind what the sandbox stacked over the project (the
  read-only ``.git/config``, the hidden ``denyRead`` files). ``unshare``/``clone`` with any
  ``CLONE_NEW*`` flag and ``setns`` are refused; ``clone3`` keeps its flags behind a pointer a
  filter cannot read, so it answers ``ENOSYS`` and glibc (2.34+), Rust and Go fall back to
  ``clone``, whose flags the filter does read;
* **mounts**: the old and the new mount API, in case a capability ever comes back;
* a few kernel interfaces no build, test or version-control tool needs and that are the usual
  first step of a kernel exploit or leak the user's secrets (``bpf``, ``userfaultfd``,
  ``perf_event_open``, the keyring, ``open_by_handle_at``).

Why a filter and not bubblewrap's ``--disable-userns`` (0.8+): that one covers user namespaces
only (not ``setns``, the mount calls or io_uring), needs ``--unshare-user`` spelled out, and runs
the command in a second, nested user namespace, which the network relay (``nsenter --user
--net`` into the command's namespaces, ``tools.sandbox.netns``) was not built for.

Deliberately *not* refused: ``ptrace`` (gdb, strace; the PID namespace hides every process
outside the sandbox, and since Linux 4.8 a tracer cannot skip this filter), ``name_to_handle_at``
(it only names a file; opening by handle is what is refused), and calls that need a capability
the sandbox dropped (``--cap-drop ALL``) and cannot regain without a user namespace (``chroot``,
``init_module``, ``kexec_load``, ``reboot``, ...): the kernel already answers ``EPERM``.

The program is classic BPF over ``struct seccomp_data`` (``nr`` at 0, ``arch`` at 4, the low
half of ``args[0]`` at 16 on these little-endian machines), assembled here with labels: no
libseccomp needed. The 32-bit entry points of a 64-bit kernel are covered with their own numbers;
i386's ``socketcall`` is refused outright (its arguments are behind a pointer), and x32 (the
x86-64 numbers with bit 30 set) is refused whole: distributions ship it disabled and no toolchain
targets it. Other machines get no filter: :func:`sandbox_filter` is None.
"""

from __future__ import annotations

import errno
import platform
import struct
from typing import Final, Literal

from tools.records import datarecord

__all__ = ["RULES", "Rule", "sandbox_filter"]

_LD = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_ALLOW: Final = 0x7FFF0000  # SECCOMP_RET_ALLOW
_ERRNO: Final = 0x00050000  # SECCOMP_RET_ERRNO | errno
_AF_UNIX: Final = 1
_X32: Final = 0x40000000
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET; unshare also takes
# CLONE_NEWTIME (0x80), which in clone()'s flags is part of the exit signal instead.
_CLONE_NEW: Final = sum(
    (0x20000, 0x2000000, 0x4000000, 0x8000000, 0x10000000, 0x20000000, 0x40000000)
)
_UNSHARE_NEW: Final = _CLONE_NEW | 0x00000080

# What a rule does: refuse the call with an errno, or look at its first argument first.
Action = Literal["EPERM", "ENOSYS", "AF_UNIX", "CLONE_NEW", "UNSHARE_NEW"]


@datarecord(frozen=True, slots=True)
class Rule:
    """One refused system call: its name, what the filter does, and why."""

    name: str
    action: Action
    reason: str
    unix_socket: bool = False  # lifted by sandbox.network.allowAllUnixSockets


RULES: Final[tuple[Rule, ...]] = (
    Rule("socket", "AF_UNIX", "a unix socket reaches daemons outside (docker, ssh-agent)", True),
    Rule("socketcall", "EPERM", "i386 socket calls, arguments behind a pointer", True),
    Rule("io_uring_setup", "EPERM", "io_uring opens and connects sockets past this filter"),
    Rule("io_uring_enter", "EPERM", "io_uring (a ring passed in from outside)"),
    Rule("io_uring_register", "EPERM", "io_uring (a ring passed in from outside)"),
    Rule("unshare", "UNSHARE_NEW", "a new user/mount namespace could undo the mounts"),
    Rule("clone", "CLONE_NEW", "the same namespaces, made with a new process"),
    Rule("clone3", "ENOSYS", "flags behind a pointer; ENOSYS makes libc fall back to clone"),
    Rule("setns", "EPERM", "joining another namespace through a descriptor"),
    Rule("mount", "EPERM", "re-mounting over or beside the sandbox's mounts"),
    Rule("umount", "EPERM", "i386's old umount: uncovering what a mount hides"),
    Rule("umount2", "EPERM", "uncovering what a mount hides (.git/config, denyRead)"),
    Rule("pivot_root", "EPERM", "swapping the root the mounts are built on"),
    Rule("open_tree", "EPERM", "new mount API: cloning a mount to attach elsewhere"),
    Rule("open_tree_attr", "EPERM", "new mount API: open_tree with new attributes (6.15)"),
    Rule("move_mount", "EPERM", "new mount API: attaching or moving a mount"),
    Rule("fsopen", "EPERM", "new mount API: a new filesystem"),
    Rule("fsconfig", "EPERM", "new mount API: configuring a new filesystem"),
    Rule("fsmount", "EPERM", "new mount API: turning a filesystem into a mount"),
    Rule("fspick", "EPERM", "new mount API: reconfiguring an existing mount"),
    Rule("mount_setattr", "EPERM", "new mount API: making a read-only mount writable"),
    Rule("bpf", "EPERM", "eBPF: a kernel attack surface no build or test tool needs"),
    Rule("userfaultfd", "EPERM", "stalls the kernel mid-copy, the usual exploit helper"),
    Rule("perf_event_open", "EPERM", "kernel and hardware events: side channels"),
    Rule("add_key", "EPERM", "the kernel keyring is not namespaced"),
    Rule("request_key", "EPERM", "the kernel keyring is not namespaced"),
    Rule("keyctl", "EPERM", "reads the user's session keyring (Kerberos tickets, ...)"),
    Rule("open_by_handle_at", "EPERM", "opens a file by inode, past every mount"),
)

# name -> (x86_64, i386, aarch64, 32-bit ARM EABI); None where the ABI has no such call.
# From arch/x86/entry/syscalls/syscall_{64,32}.tbl, include/uapi/asm-generic/unistd.h and
# arch/arm/tools/syscall.tbl; calls added since 2019 share one number on every ABI.
_NUMBERS: Final[dict[str, tuple[int | None, int | None, int | None, int | None]]] = {
    "socket": (41, 359, 198, 281),
    "socketcall": (None, 102, None, None),
    "io_uring_setup": (425, 425, 425, 425),
    "io_uring_enter": (426, 426, 426, 426),
    "io_uring_register": (427, 427, 427, 427),
    "unshare": (272, 310, 97, 337),
    "clone": (56, 120, 220, 120),
    "clone3": (435, 435, 435, 435),
    "setns": (308, 346, 268, 375),
    "mount": (165, 21, 40, 21),
    "umount": (None, 22, None, None),
    "umount2": (166, 52, 39, 52),
    "pivot_root": (155, 217, 41, 218),
    "open_tree": (428, 428, 428, 428),
    "open_tree_attr": (467, 467, 467, 467),
    "move_mount": (429, 429, 429, 429),
    "fsopen": (430, 430, 430, 430),
    "fsconfig": (431, 431, 431, 431),
    "fsmount": (432, 432, 432, 432),
    "fspick": (433, 433, 433, 433),
    "mount_setattr": (442, 442, 442, 442),
    "bpf": (321, 357, 280, 386),
    "userfaultfd": (323, 374, 282, 388),
    "perf_event_open": (298, 336, 241, 364),
    "add_key": (248, 286, 217, 309),
    "request_key": (249, 287, 218, 310),
    "keyctl": (250, 288, 219, 311),
    "open_by_handle_at": (304, 342, 265, 371),
}


@datarecord(frozen=True, slots=True)
class _Machine:
    native_arch: int  # AUDIT_ARCH_* of the 64-bit ABI
    native: int  # column of _NUMBERS
    compat_arch: int  # AUDIT_ARCH_* of the 32-bit ABI the kernel also runs
    compat: int
    x32: bool  # the native arch also carries x32 calls (bit 30 of nr)


_MACHINES: Final[dict[str, _Machine]] = {
    "x86_64": _Machine(0xC000003E, 0, 0x40000003, 1, x32=True),
    "aarch64": _Machine(0xC00000B7, 2, 0x40000028, 3, x32=False),
}
_ALIASES: Final[dict[str, str]] = {"amd64": "x86_64", "arm64": "aarch64"}
_ARG_CHECKS: Final[dict[str, tuple[int, int]]] = {
    # label: (BPF jump opcode, constant) applied to the low half of args[0]
    "AF_UNIX": (_JEQ, _AF_UNIX),
    "CLONE_NEW": (_JSET, _CLONE_NEW),
    "UNSHARE_NEW": (_JSET, _UNSHARE_NEW),
}

# (label, opcode, k, label if true, label if false); a jump to None falls through
_Ins = tuple[str | None, int, int, str | None, str | None]


def _assemble(program: list[_Ins]) -> bytes:
    labels = {ins[0]: pc for pc, ins in enumerate(program) if ins[0]}
    out = []
    for pc, (_, code, k, yes, no) in enumerate(program):
        jt = labels[yes] - pc - 1 if yes else 0
        jf = labels[no] - pc - 1 if no else 0
        out.append(struct.pack("=HBBI", code, jt, jf, k))  # struct.error past 255: fail loud
    return b"".join(out)


def _dispatch(column: int, rules: tuple[Rule, ...]) -> list[_Ins]:
    """Compare ``nr`` (already loaded) with each rule's number on this ABI."""
    out: list[_Ins] = []
    for rule in rules:
        nr = _NUMBERS[rule.name][column]
        if nr is not None:
            out.append((None, _JEQ, nr, rule.action, None))
    out.append((None, _RET, _ALLOW, None, None))
    return out


def _filter(machine: _Machine, rules: tuple[Rule, ...]) -> bytes:
    prog: list[_Ins] = [
        (None, _LD, 4, None, None),
        (None, _JEQ, machine.native_arch, "native", None),
        (None, _JEQ, machine.compat_arch, "compat", None),
        # another ABI cannot reach this kernel; should one, it gets nothing
        (None, _RET, _ERRNO | errno.ENOSYS, None, None),
        ("native", _LD, 0, None, None),
    ]
    if machine.x32:
        prog.append((None, _JGE, _X32, "ENOSYS", None))
    prog += _dispatch(machine.native, rules)
    prog.append(("compat", _LD, 0, None, None))
    prog += _dispatch(machine.compat, rules)
    used = {rule.action for rule in rules}
    for label, (op, k) in _ARG_CHECKS.items():
        if label in used:
            prog += [(label, _LD, 16, None, None), (None, op, k, "EPERM", "allow")]
    prog += [
        ("allow", _RET, _ALLOW, None, None),
        ("EPERM", _RET, _ERRNO | errno.EPERM, None, None),
        ("ENOSYS", _RET, _ERRNO | errno.ENOSYS, None, None),
    ]
    return _assemble(prog)


_CACHE: dict[tuple[str, bool], bytes | None] = {}


def sandbox_filter(machine: str | None = None, *, unix_sockets: bool = False) -> bytes | None:
    """The compiled filter for this machine (None where Nerve has none); ``unix_sockets``
    leaves unix sockets open (``allowAllUnixSockets``) and refuses everything else still."""
    name = machine or platform.machine()
    name = _ALIASES.get(name, name)
    key = (name, unix_sockets)
    if key not in _CACHE:
        spec = _MACHINES.get(name)
        rules = tuple(r for r in RULES if not (unix_sockets and r.unix_socket))
        _CACHE[key] = _filter(spec, rules) if spec is not None else None
    return _CACHE[key]
