"""The data model of a parsed bash script (simple commands, redirects) and the parser."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, NamedTuple

from permissions.bash.words import Word

__all__ = ["ParsedScript", "Redirect", "SimpleCommand", "get_parser"]

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
