"""The ``nerve`` command line. Imports nothing heavy: subcommands load their modules lazily."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from agent_cli import __version__

__all__ = ["main"]

USAGE = """\
usage: nerve [options] [PROMPT]
       nerve permissions check [options] -- COMMAND
       nerve demo

Nerve: a terminal coding agent.

commands:
  permissions check   explain a permission decision without running anything
  demo                run the offline demo (no API key needed)

options:
  -h, --help          show this help and exit
  --version           print the version and exit
"""


def _permissions(argv: Sequence[str]) -> int:
    from agent_cli.commands.permissions_check import run

    return run(argv)


SUBCOMMANDS: dict[str, Callable[[Sequence[str]], int]] = {
    "permissions": _permissions,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("--version", "-v"):
        print(f"{__version__} (Nerve)")
        return 0
    if args and args[0] in ("-h", "--help", "help"):
        print(USAGE, end="")
        return 0
    if args and args[0] in SUBCOMMANDS:
        return SUBCOMMANDS[args[0]](args[1:])
    print(USAGE, end="", file=sys.stderr)
    return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
