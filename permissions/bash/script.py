"""The data model of a parsed bash script (simple commands, redirects) and the parser."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, NamedTuple

from permissions.bash.words import Word

__all__ = [
    "ParsedScript",
    "Redirect",
    "SimpleCommand",
    "echoed_text",
    "flatten_chain",
    "get_parser",
    "with_fields",
]

# Programs that print their operands: `echo 'rm x' | sh` feeds the shell that text.
_ECHOERS = frozenset({"echo", "printf"})

_parser: Any = None
_parser_lock = threading.Lock()


def get_parser() -> Any:
    """The tree-sitter parser for bash, built once (lazily: the import costs ~16 ms)."""
    global _parser
    if _parser is None:
        with _parser_lock:
            if _parser is None:
                import tree_sitter_bash
                from tree_sitter import Language, Parser

                _parser = Parser(Language(tree_sitter_bash.language()))
    return _parser


class Redirect(NamedTuple):
    """One redirection (immutable). ``target`` is None for heredocs and fd duplications
    without a word."""

    op: str
    fd: str | None
    target: Word | None
    heredoc_body: str | None = None
    heredoc_quoted: bool = False


class SimpleCommand(NamedTuple):
    """One simple command (or a pseudo-command: a bare assignment or a bare redirect);
    immutable, a tuple because every parse builds several (a frozen dataclass is slower).

    ``kind``: "command", "declaration" (export/declare/local/readonly/typeset), "unset",
    "test" (``[ ]``/``[[ ]]``), "assignment" (``x=1`` alone), "redirect" (``> f`` alone).
    ``function`` names the function whose body holds the command. ``stdin_script`` is heredoc
    text fed to it (a shell reading it runs it).
    """

    text: str
    kind: str
    words: tuple[Word, ...] = ()
    assignments: tuple[tuple[str, Word], ...] = ()
    redirects: tuple[Redirect, ...] = ()
    function: str | None = None
    stdin_script: str | None = None

    @property
    def name(self) -> Word | None:
        return self.words[0] if self.words else None


@dataclass(frozen=True, slots=True)
class ParsedScript:
    """The simple commands of a script, in execution-ish order, and what went wrong parsing."""

    source: str
    commands: tuple[SimpleCommand, ...]
    has_error: bool
    functions: frozenset[str]
    variables: tuple[tuple[str, str], ...] = ()
    # what the analysis could not model although the command parsed: each asks
    problems: tuple[str, ...] = ()
    # the variables for loops assign (they reach the commands in the loop's body)
    loop_variables: frozenset[str] = frozenset()


_KEEP: Any = object()
_new_tuple = tuple.__new__


def with_fields(
    cmd: SimpleCommand,
    *,
    redirects: tuple[Redirect, ...] | None = None,
    stdin_script: str | None = _KEEP,
    function: str | None = _KEEP,
) -> SimpleCommand:
    """``cmd`` with some fields changed (``tuple.__new__``: the NamedTuple's own constructor
    is Python code, and dataclasses.replace is 10x slower still)."""
    text, kind, words, assignments, old_redirects, old_function, old_stdin = cmd
    return _new_tuple(  # type: ignore[no-any-return]
        SimpleCommand,
        (
            text,
            kind,
            words,
            assignments,
            old_redirects if redirects is None else redirects,
            old_function if function is _KEEP else function,
            old_stdin if stdin_script is _KEEP else stdin_script,
        ),
    )


def echoed_text(cmd: SimpleCommand) -> str | None:
    """What ``echo``/``printf`` with static words prints (roughly), else None."""
    if cmd.kind != "command" or len(cmd.words) < 2 or cmd.redirects:
        return None
    if cmd.words[0].deny_value not in _ECHOERS:
        return None
    values = [w.deny_value for w in cmd.words]
    if any(v is None for v in values):
        return None
    args = [v for v in values[1:] if v is not None and not v.startswith("-")]
    return " ".join(args).replace("\\n", "\n")


def flatten_chain(node: Any) -> list[Any]:
    """Named children of a left-nested ``list``/``pipeline`` chain, in order, without recursion
    (a chain of thousands of ``&&`` must not exhaust the stack)."""
    out: list[Any] = []
    stack = [(node, 0)]
    kind = node.type
    while stack:
        cur, i = stack.pop()
        kids = cur.children
        while i < len(kids):
            child = kids[i]
            i += 1
            if child.type == kind:
                stack.append((cur, i))
                stack.append((child, 0))
                break
            if child.is_named:
                out.append(child)
    return out
