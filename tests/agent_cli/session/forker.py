"""A warm ``nerve``: imports Nerve and the model SDK once, then forks a real ``nerve`` process
per request, so a test can start (and SIGKILL) many of them without paying ~1 s of imports each.

Protocol: one JSON object per stdin line, ``{"argv": [...], "cwd": DIR, "env": {...}, "out": FILE,
"err": FILE}``; the answer is one stdout line, the child's pid. The child is ``nerve`` with that
command line (``agent_cli.cli``), stdout and stderr in those files; its exit status is written to
``out + ".rc"`` when it ends by itself. Zombies are reaped before each request and at exit.
"""

from __future__ import annotations

import json
import os
import sys


def _child(req: dict) -> None:
    rc = 70
    try:
        os.chdir(req["cwd"])
        os.environ.clear()
        os.environ.update(req["env"])
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        for fd, path in ((1, req["out"]), (2, req["err"])):
            target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(target, fd)
            os.close(target)
        from agent_cli import cli

        rc = cli._main(list(req["argv"]))
        with open(req["out"] + ".rc", "w") as fh:
            fh.write(str(rc))
    except BaseException as exc:  # a child must never fall back into the request loop
        print(f"forker child: {type(exc).__name__}: {exc}", file=sys.stderr)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def main() -> int:
    from agent_cli.frontends.print import mode as print_mode  # noqa: F401
    from agent_cli.session import agent_session  # noqa: F401
    from agent_cli.session.model_setup import import_client

    import_client()  # the SDK, as the lazy client imports it on the first request
    print("ready", flush=True)
    for line in sys.stdin:
        _reap()
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(req)
        print(pid, flush=True)
    _reap()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
