"""The ``nerve`` command line. Imports nothing heavy: subcommands load their modules lazily."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from agent_cli import __version__
from agent_cli.boot import gc_pause

__all__ = ["main"]

USAGE = """\
usage: nerve [options] [PROMPT]
       nerve permissions check [options] -- COMMAND
       nerve demo [-p]
       nerve mcp add|add-json|list|get|remove ...
       nerve config get|set|list [-g] [KEY [VALUE]]

Nerve: a terminal coding agent. Without -p it opens the interactive app.

commands:
  permissions check            explain a permission decision without running anything
  demo                         an offline tour with a scripted model (no API key needed)
  mcp                          add, list, show and remove MCP servers (Claude Code's files)
  config                       read and write settings (-g: your user settings)

options:
  -p, --print                  answer PROMPT (or stdin) once and exit
  --output-format FMT          text | json | stream-json (with -p)
  --permission-mode MODE       default | acceptEdits | plan | bypassPermissions | dontAsk
  --allowedTools RULES         allow rules, e.g. "Bash(npm test *),Read" (repeatable)
  --disallowedTools RULES      deny rules (repeatable)
  --max-turns N                stop after N model calls
  --model NAME                 model id or alias (sonnet, opus, haiku)
  --settings FILE|JSON         an extra settings file or inline JSON
  --add-dir DIR                another working directory (repeatable)
  -c, --continue               continue the latest session in this directory
  -r, --resume [ID]            resume a session (a picker without ID)
  --fork-session               with -c/-r: continue in a new session
  --dangerously-skip-permissions  start in bypassPermissions mode
  --allow-dangerously-skip-permissions  offer bypassPermissions without starting in it
  -w, --worktree NAME          work in the git worktree .nerve/worktrees/NAME (created if new)
  --max-budget-usd AMOUNT      (-p) stop before a request once the run cost this much
  --system-prompt TEXT         replace the default system prompt ("" keeps it)
  --append-system-prompt TEXT  add TEXT at the end of the system prompt
  --input-format stream-json   headless, driven by JSON lines on stdin (the Agent SDK)
  --include-partial-messages   (stream-json) also stream the text as it comes
  --thinking MODE              enabled | adaptive | disabled (over the settings)
  --max-thinking-tokens N      thinking on with a budget of N tokens (0: off)
  --effort LEVEL               low | medium | high | xhigh | max
  --agents JSON                sub-agent types: {"name": {"description", "prompt", ...}}
  --no-session-persistence     write no transcript (the session cannot be resumed)
  -h, --help                   show this help and exit
  --version                    print the version and exit

environment: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, ANTHROPIC_MODEL
"""


def _permissions(argv: Sequence[str]) -> int:
    from agent_cli.subcommands.permissions_check import run

    return run(argv)


def _demo(argv: Sequence[str]) -> int:
    from agent_cli.frontends.demo.tour import run_demo

    return run_demo(argv)


def _mcp(argv: Sequence[str]) -> int:
    from agent_cli.subcommands.mcp_cmd import run

    return run(argv)


def _config(argv: Sequence[str]) -> int:
    from agent_cli.subcommands.config_cmd import run

    return run(argv)


SUBCOMMANDS: dict[str, Callable[[Sequence[str]], int]] = {
    "permissions": _permissions,
    "demo": _demo,
    "mcp": _mcp,
    "config": _config,
}


def _run(argv: Sequence[str]) -> int:
    from agent_cli.options import OptionsError, parse_run_options

    try:
        options = parse_run_options(argv)
    except OptionsError as exc:
        print(f"nerve: {exc}", file=sys.stderr)
        print("Try 'nerve --help'.", file=sys.stderr)
        return 2
    if options.input_format == "stream-json":  # the Agent SDK's headless mode, -p or not
        from agent_cli.frontends.sdk.mode import run_sdk_mode

        return run_sdk_mode(options)
    if options.print_mode:
        from agent_cli.frontends.print.mode import run_print_mode

        return run_print_mode(options)
    from agent_cli.frontends.interactive import run_interactive

    return run_interactive(options)


def _exit_now(rc: int) -> int:
    """End the process without the interpreter's teardown.

    Finalising the model SDK's objects takes 0.4-0.9 s after a print-mode run; by now every
    file is closed, background tasks are ended and the transcript is flushed, so skip it.
    """
    import os

    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:
        args = sys.argv[1:]
        gc_pause.pause()  # until the session is built (see agent_cli.boot.gc_pause)
        try:
            rc = _main(args)
        except BrokenPipeError:
            # `nerve ... | head`: the reader left; say nothing more (no traceback), as cat does.
            import os

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 141
        finally:
            gc_pause.resume()
        headless = any(a in ("-p", "--print") or a.startswith("--input-format") for a in args)
        if headless or args[:1] == ["demo"]:
            _exit_now(rc)
        return rc
    return _main(list(argv))


def _main(args: list[str]) -> int:
    if args and args[0] in ("--version", "-v"):
        print(f"{__version__} (Nerve)")
        return 0
    if args and args[0] in ("-h", "--help", "help"):
        print(USAGE, end="")
        return 0
    if args and args[0] in SUBCOMMANDS:
        return SUBCOMMANDS[args[0]](args[1:])
    return _run(args)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
