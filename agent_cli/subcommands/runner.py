"""What every ``nerve <subcommand>`` shares: help, usage errors (exit 2), settings errors
(exit 1, nothing changed)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["UsageError", "run_subcommand"]


class UsageError(ValueError):
    """The command line is wrong: the message says how, the exit status is 2."""


def run_subcommand(
    name: str, usage: str, argv: Sequence[str], dispatch: Callable[[list[str], Path], int]
) -> int:
    """Run ``nerve NAME ARGV`` through ``dispatch(args, cwd)``; 0 on success, 1 when it could
    not be done, 2 on bad usage."""
    from config.errors import SettingsError

    args = list(argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(usage, end="")
        return 0 if args else 2
    try:
        return dispatch(args, Path.cwd())
    except UsageError as exc:
        print(f"nerve {name}: {exc}", file=sys.stderr)
        print(f"Try 'nerve {name} --help'.", file=sys.stderr)
        return 2
    except SettingsError as exc:
        print(f"nerve {name}: {exc}; nothing was changed", file=sys.stderr)
        return 1
