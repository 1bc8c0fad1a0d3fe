"""The platform seam: which OS mechanism confines a command here, and whether it works.

Linux uses bubblewrap (``bwrap``: namespaces, bind mounts, a seccomp filter). macOS would use
Seatbelt (``sandbox-exec`` with a generated profile); it is not implemented yet and says so, as
does every other platform. A backend is probed once per process: a sandbox that cannot start
must never be assumed to be there (no auto-allow without a working sandbox).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from typing import Protocol

from tools.records import datarecord
from tools.sandbox.seccomp import sandbox_filter

__all__ = [
    "Availability",
    "Backend",
    "Bubblewrap",
    "Unsupported",
    "backend_for",
    "minimal_dev_args",
]

_PROBE_TIMEOUT_S = 10.0


@datarecord(frozen=True, slots=True)
class Availability:
    """Whether the sandbox can start here; ``missing`` names packages to install."""

    ok: bool
    reason: str = ""
    missing: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # works, but with a limit (no seccomp filter, no relay)


class Backend(Protocol):
    """One platform's sandbox mechanism."""

    name: str

    def probe(self) -> Availability:
        """Can it confine a command here? Cached by the caller."""
        ...


def minimal_dev_args() -> list[str]:
    """A private ``/dev`` with only the harmless devices (not ``--dev``: its devpts needs a
    second user namespace, which would keep the network relay from joining the sandbox)."""
    args = ["--tmpfs", "/dev"]
    for name in ("null", "zero", "full", "random", "urandom", "tty"):
        if os.path.exists(f"/dev/{name}"):
            args += ["--dev-bind", f"/dev/{name}", f"/dev/{name}"]
    for name, target in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        args += ["--symlink", target, f"/dev/{name}"]
    return [*args, "--dir", "/dev/shm"]


class Bubblewrap:
    """Linux: ``bwrap`` (Debian/Ubuntu package ``bubblewrap``); ``socat`` relays the network
    where this process may not join the sandbox's network namespace itself (not root)."""

    name = "bubblewrap"

    def __init__(self, bwrap: str | None = None) -> None:
        # NERVE_SANDBOX_BWRAP: a bwrap outside PATH (or, in tests, a missing one)
        chosen = bwrap or os.environ.get("NERVE_SANDBOX_BWRAP") or shutil.which("bwrap")
        self.bwrap = chosen if chosen and os.access(chosen, os.X_OK) else None
        self.socat = shutil.which("socat")
        self.nsenter = shutil.which("nsenter")

    def probe(self) -> Availability:
        if self.bwrap is None:
            return Availability(
                False, "bubblewrap (bwrap) is not installed", missing=("bubblewrap",)
            )
        argv = [
            self.bwrap,
            "--ro-bind",
            "/",
            "/",
            *minimal_dev_args(),
            "--proc",
            "/proc",
            "--unshare-all",
            "--die-with-parent",
            "--cap-drop",
            "ALL",
        ]
        program = sandbox_filter()
        r = w = -1
        try:
            if program is not None:
                r, w = os.pipe()
                os.write(w, program)
                os.close(w)
                w = -1
                argv += ["--seccomp", str(r)]
            proc = subprocess.run(
                [*argv, "--", "/bin/sh", "-c", "exit 0"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=_PROBE_TIMEOUT_S,
                pass_fds=(r,) if r >= 0 else (),
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return Availability(False, f"bubblewrap cannot run: {exc}")
        finally:
            for fd in (r, w):
                if fd >= 0:
                    os.close(fd)
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            detail = err[-1] if err else f"exit code {proc.returncode}"
            return Availability(
                False,
                f"bubblewrap cannot create the sandbox's namespaces ({detail}); user namespaces "
                "may be disabled (sysctl kernel.unprivileged_userns_clone / "
                "user.max_user_namespaces, or an AppArmor restriction)",
            )
        notes: list[str] = []
        missing: list[str] = []
        if program is None:
            notes.append(
                f"no seccomp filter for {os.uname().machine}: unix sockets, io_uring and new "
                "namespaces stay open"
            )
        if os.geteuid() != 0 and (self.socat is None or self.nsenter is None):
            missing.append("socat" if self.socat is None else "util-linux (nsenter)")
            notes.append("no network relay: sandboxed commands get no network at all")
        return Availability(True, missing=tuple(missing), notes=tuple(notes))


class Unsupported:
    """A platform without a sandbox backend yet (macOS Seatbelt is the next one to add)."""

    def __init__(self, platform: str) -> None:
        self.name = "none"
        self.platform = platform

    def probe(self) -> Availability:
        what = "macOS (Seatbelt, sandbox-exec)" if self.platform == "darwin" else self.platform
        return Availability(False, f"the sandbox is not supported on this platform yet: {what}")


_BACKENDS: dict[str, Backend] = {}
_LOCK = threading.Lock()


def backend_for(platform: str | None = None) -> Backend:
    """The backend for ``platform`` (default: this one); one instance per process."""
    name = platform or sys.platform
    with _LOCK:
        if name not in _BACKENDS:
            _BACKENDS[name] = Bubblewrap() if name.startswith("linux") else Unsupported(name)
        return _BACKENDS[name]
