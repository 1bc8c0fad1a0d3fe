"""The platform seam and the seccomp program: what each OS and machine gets."""

from __future__ import annotations

import struct

from tests.tools.sandbox.support import World, needs_sandbox, run_bash
from tools.sandbox import backend_for
from tools.sandbox.seccomp import RULES, sandbox_filter


def test_macos_and_other_platforms_say_not_supported_yet() -> None:
    mac = backend_for("darwin").probe()
    assert not mac.ok
    assert mac.reason == (
        "the sandbox is not supported on this platform yet: macOS (Seatbelt, sandbox-exec)"
    )
    assert "not supported on this platform yet: win32" in backend_for("win32").probe().reason
    assert backend_for("linux").name == "bubblewrap"


def _ops(program: bytes) -> list[tuple[int, int, int, int]]:
    return [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]


def _run(program: bytes, nr: int, arch: int, arg0: int = 0) -> int:
    """Interpret the classic-BPF program on one ``seccomp_data`` (the few opcodes it uses)."""
    ops = _ops(program)
    data = {0: nr, 4: arch, 16: arg0 & 0xFFFFFFFF}
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = ops[pc]
        if code == 0x20:
            acc = data[k]
        elif code == 0x06:
            return k
        else:
            hit = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[code]
            pc += jt if hit else jf
        pc += 1


ALLOW, EPERM, ENOSYS = 0x7FFF0000, 0x00050001, 0x00050026
X86_64, I386, AARCH64, ARM = 0xC000003E, 0x40000003, 0xC00000B7, 0x40000028


def test_the_filter_refuses_each_listed_call_on_every_abi_and_allows_the_rest() -> None:
    x86, arm = sandbox_filter("x86_64") or b"", sandbox_filter("aarch64") or b""
    assert _ops(x86)[0] == (0x20, 0, 0, 4)  # seccomp_data.arch first
    for program, arch, calls in (
        (x86, X86_64, {"io_uring_setup": 425, "mount": 165, "setns": 308, "bpf": 321}),
        (x86, I386, {"io_uring_setup": 425, "umount": 22, "socketcall": 102, "keyctl": 288}),
        (arm, AARCH64, {"io_uring_enter": 426, "pivot_root": 41, "setns": 268}),
        (arm, ARM, {"open_tree": 428, "mount": 21, "userfaultfd": 388}),
    ):
        for name, nr in calls.items():
            assert _run(program, nr, arch) == EPERM, name
        assert _run(program, 435, arch) == ENOSYS  # clone3: libc falls back to clone
        for nr in (0, 1, 2, 3, 59, 60, 63, 221, 222):  # read, write, execve, exit, mmap, ...
            assert _run(program, nr, arch) == ALLOW
    assert _run(x86, 0x40000000 | 1, X86_64) == ENOSYS  # x32 is refused whole
    assert {r.name for r in RULES} >= {"io_uring_setup", "unshare", "clone3", "mount_setattr"}
    assert sandbox_filter("riscv64") is None


def test_the_filter_reads_socket_and_namespace_flags_from_the_first_argument() -> None:
    x86 = sandbox_filter("x86_64") or b""
    assert _run(x86, 41, X86_64, 1) == EPERM and _run(x86, 41, X86_64, 2) == ALLOW  # AF_UNIX
    assert _run(x86, 359, I386, 1) == EPERM and _run(x86, 359, I386, 10) == ALLOW
    new_user, clone_vm, sigchld = 0x10000000, 0x100, 17
    assert _run(x86, 272, X86_64, new_user) == EPERM  # unshare
    assert _run(x86, 272, X86_64, 0x80 | (1 << 40)) == EPERM  # CLONE_NEWTIME, high bits set
    assert _run(x86, 272, X86_64, 0x200) == ALLOW  # unshare(CLONE_FS)
    assert _run(x86, 56, X86_64, new_user | sigchld) == EPERM  # clone
    assert _run(x86, 56, X86_64, clone_vm | sigchld) == ALLOW  # fork, threads
    open_sockets = sandbox_filter("x86_64", unix_sockets=True) or b""
    assert _run(open_sockets, 41, X86_64, 1) == ALLOW  # allowAllUnixSockets lifts only that
    assert _run(open_sockets, 425, X86_64) == EPERM
    assert _run(open_sockets, 272, X86_64, new_user) == EPERM


@needs_sandbox
async def test_raw_sockets_are_refused_inside(world: World) -> None:
    out = await run_bash(
        world,
        "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, 1)' 2>&1"
        " | tail -1",
    )
    assert "Operation not permitted" in out.output
