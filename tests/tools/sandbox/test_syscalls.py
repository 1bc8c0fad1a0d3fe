"""Issue 32 item 1: the seccomp filter, for real: io_uring, namespaces and mounts are refused
inside the sandbox, and ordinary work (python, git, threads, a compiler) still runs."""

from __future__ import annotations

import platform
import shutil
from pathlib import Path

import pytest

from tests.tools.sandbox.support import World, needs_sandbox, run_bash

pytestmark = needs_sandbox

# Each call is made so that the kernel, asked, would answer something other than EPERM (a
# capability-less caller gets EFAULT or EBADF for these arguments; io_uring_setup and
# unshare(CLONE_NEWUSER) simply succeed): EPERM/ENOSYS here is the filter's answer.
PROBE = r"""
import ctypes, errno, os, platform
libc = ctypes.CDLL(None, use_errno=True)
NR = {
    "x86_64": {"clone": 56, "setns": 308, "unshare": 272},
    "aarch64": {"clone": 220, "setns": 268, "unshare": 97},
}[platform.machine()]
def said(label, rc):
    print(label, "ok" if rc >= 0 else errno.errorcode.get(ctypes.get_errno()))
params = ctypes.create_string_buffer(120)
said("io_uring_setup", libc.syscall(425, 8, params))
said("io_uring_enter", libc.syscall(426, -1, 0, 0, 0, None, 0))
said("unshare", libc.unshare(0x10000000))
said("unshare-mnt", libc.syscall(NR["unshare"], ctypes.c_ulong(0x20000 | (1 << 40))))
said("clone", libc.syscall(NR["clone"], ctypes.c_ulong(0x10000000 | 17), None, None, None, None))
said("clone3", libc.syscall(435, None, 0))
said("setns", libc.syscall(NR["setns"], -1, 0))
said("open_tree", libc.syscall(428, -100, b"/", 0))
said("mount", libc.mount(None, None, None, 0, None))
said("umount2", libc.umount2(b"/", 0))
said("bpf", libc.syscall({"x86_64": 321, "aarch64": 280}[platform.machine()], 0, None, 0))
pid = os.fork()
if pid == 0:
    os._exit(0)
said("fork", os.waitpid(pid, 0)[1])
"""

REFUSED = {
    "io_uring_setup": "EPERM",
    "io_uring_enter": "EPERM",
    "unshare": "EPERM",
    "unshare-mnt": "EPERM",
    "clone": "EPERM",
    "clone3": "ENOSYS",
    "setns": "EPERM",
    "open_tree": "EPERM",
    "mount": "EPERM",
    "umount2": "EPERM",
    "bpf": "EPERM",
}

needs_known_machine = pytest.mark.skipif(
    platform.machine() not in ("x86_64", "aarch64"), reason="probe numbers for x86_64/aarch64"
)


def _answers(output: str) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in output.splitlines() if " " in line)


@needs_known_machine
async def test_io_uring_namespaces_and_mounts_are_refused_inside(world: World) -> None:
    probe = world.root / "probe.py"
    probe.write_text(PROBE)
    out = await run_bash(world, f"python3 {probe}")
    answers = _answers(out.output)
    assert {k: answers.get(k) for k in REFUSED} == REFUSED, out.output
    assert answers.get("fork") == "ok"


@needs_known_machine
async def test_allow_all_unix_sockets_keeps_io_uring_and_namespaces_refused(world: World) -> None:
    probe = world.root / "probe.py"
    probe.write_text(PROBE)
    world.session(allow_all_unix_sockets=True)
    answers = _answers((await run_bash(world, f"python3 {probe}")).output)
    assert answers.get("io_uring_setup") == "EPERM" and answers.get("unshare") == "EPERM"


async def test_unshare_and_a_nested_sandbox_are_refused(world: World) -> None:
    out = await run_bash(
        world,
        "unshare -rm true 2>&1; echo rc=$?; unshare -U true 2>&1; echo rc=$?; "
        "bwrap --ro-bind / / true 2>&1; echo rc=$?",
    )
    assert out.output.count("rc=0") == 0, out.output
    assert "Operation not permitted" in out.output


async def test_ordinary_work_still_runs(world: World) -> None:
    script = (
        "import subprocess, threading\n"
        "def run(i):\n"
        "    subprocess.run(['python3', '-c', f'print({i} * 2)'], check=True)\n"
        "threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]\n"
        "[t.start() for t in threads]; [t.join() for t in threads]\n"
        "print('threads-ok')\n"
    )
    (world.project / "work.py").write_text(script)
    out = await run_bash(
        world,
        'python3 work.py && python3 -c "import asyncio; print(asyncio.run(asyncio.sleep(0, '
        "'async-ok')))\" && mkdir -p tmp-repo && cd tmp-repo && git init -q && "
        "echo x > f && git add f && git -c user.name=n -c user.email=e@x commit -qm one && "
        "git log --oneline | wc -l && cd .. && "
        "printf 'all:\\n\\t@echo make-ok\\n' > Makefile && make",
    )
    assert out.exit_code == 0, out.output
    for word in ("threads-ok", "async-ok", "make-ok"):
        assert word in out.output
    assert (world.project / "tmp-repo" / ".git" / "HEAD").is_file()


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
async def test_a_c_program_compiles_and_its_io_uring_is_refused(world: World) -> None:
    source = Path(world.project / "ring.c")
    source.write_text(
        "#include <stdio.h>\n#include <string.h>\n#include <errno.h>\n"
        "#include <pthread.h>\n#include <unistd.h>\n#include <sys/syscall.h>\n"
        "static void *run(void *a) { return a; }\n"
        "int main(void) {\n"
        "  pthread_t t; pthread_create(&t, 0, run, 0); pthread_join(t, 0);\n"
        "  char params[120]; memset(params, 0, sizeof params);\n"
        "  long fd = syscall(425, 8, params);\n"
        '  printf("thread-ok ring=%ld %s\\n", fd, fd < 0 ? strerror(errno) : "open");\n'
        "  return 0;\n}\n"
    )
    out = await run_bash(world, "gcc -O1 -pthread -o ring ring.c && ./ring")
    assert "thread-ok ring=-1 Operation not permitted" in out.output, out.output
