"""The platform seam and the seccomp program: what each OS and machine gets."""

from __future__ import annotations

import struct

from tests.tools.sandbox.support import World, needs_sandbox, run_bash
from tools.sandbox import backend_for
from tools.sandbox.seccomp import unix_socket_filter


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


def test_the_filter_checks_the_architecture_first_and_refuses_only_af_unix() -> None:
    for machine, arch, socket_nr in (("x86_64", 0xC000003E, 41), ("aarch64", 0xC00000B7, 198)):
        ops = _ops(unix_socket_filter(machine) or b"")
        assert ops[0] == (0x20, 0, 0, 4)  # load seccomp_data.arch
        assert ops[1][0] == 0x15 and ops[1][3] == arch
        assert any(op[0] == 0x15 and op[3] == socket_nr for op in ops)
        assert ops[-2] == (0x06, 0, 0, 0x7FFF0000) and ops[-1] == (0x06, 0, 0, 0x00050001)
        # every jump lands inside the program
        for pc, (code, jt, jf, _k) in enumerate(ops):
            if code == 0x15:
                assert pc + 1 + max(jt, jf) < len(ops)
    assert unix_socket_filter("riscv64") is None


@needs_sandbox
async def test_raw_sockets_are_refused_inside(world: World) -> None:
    out = await run_bash(
        world,
        "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, 1)' 2>&1"
        " | tail -1",
    )
    assert "Operation not permitted" in out.output
