"""Paths a command reads without naming them, against the ``Read`` deny and ask rules.

A command that reads the contents of whole folders (``grep -r x .``, ``rg x``, ``tar c``: see
:mod:`permissions.bash.recursive`), a glob (``cat */*.txt``) or ``xargs cat`` reads paths it
never names: when a ``Read`` deny (or ask) rule could cover one of them, the command asks,
naming the rule. That is decided from the rule's pattern and the command's words
(``pathrules.RuleReach``), without walking the file system, and only when there is such a rule
at all (``PathWalk.guarded``).
"""

from __future__ import annotations

import os
from typing import Protocol

from permissions.bash.operand_specs import NAMES_ONLY_EXEC, RECURSIVE_READERS, SPECS
from permissions.bash.pathrules import (
    GLOB_MAGIC,
    PathRules,
    RuleReach,
    path_shape,
    rule_reaches,
    shapes_meet,
    word_from,
)
from permissions.bash.recursive import RecursiveRead, recursive_reads
from permissions.bash.script import SimpleCommand
from permissions.bash.words import Word
from permissions.bash.wrappers import basename, deny_unwrap
from permissions.types import Decision, PermissionContext, ReasonKind, RuleBehavior, Verdict

__all__ = ["Reach", "Walk"]

_STDIN_OPS = frozenset({"<", "<<", "<<-", "<<<", "<&"})


class Walk(Protocol):
    """What :class:`Reach` uses of the walk it serves (``pathcheck.PathWalk``): the possible
    working directories, its doubts and verdicts, path resolution and judging."""

    cwds: list[str] | None
    doubts: list[str]
    ask: Verdict | None
    deny: Verdict | None

    def resolve(self, word: Word, base: list[str] | None) -> list[str] | None: ...

    def real(self, lex: str) -> str: ...

    def deny_only_paths(self, paths: list[str]) -> None: ...


class Reach:
    """Asks, into ``walk.ask``, when a Read deny/ask rule may cover a path read unnamed: by a
    glob (``glob``), a recursive read (``recursive``) or the command ``xargs`` runs."""

    def __init__(self, walk: Walk, rules: PathRules, ctx: PermissionContext, command: str) -> None:
        self.walk = walk
        self._rules = rules
        self._ctx = ctx
        self._command = command
        self._reaches: tuple[RuleReach, ...] | None = None

    def glob(self, prog: str, word: Word, paths: list[str]) -> None:
        """Ask when the pattern ``word`` (among ``paths``) may expand to a path a Read
        deny/ask rule covers. What it expands to today was judged as paths; this is about
        what it may expand to when it runs (a file created in between, `*/*.txt`)."""
        for p in paths:
            reach = self._reaching(p, False) if GLOB_MAGIC.search(p) else None
            if reach is not None:
                who = "a redirect" if prog == "<" else prog
                self._ask_reach(reach, f"{who} reads {word.shown}, a pattern that may match", p)
                return

    def recursive(
        self,
        prog: str,
        argv: list[str],
        words: tuple[Word, ...],
        as_run: bool,
        stdin_fed: bool = False,
    ) -> None:
        """Ask when ``prog`` reads the contents of a folder below which a Read deny/ask rule
        may cover a file. ``as_run``: the argv as it runs (not a form seen through a wrapper
        or an obfuscation), whose unknowable folders are doubts. ``stdin_fed``: its stdin is
        a pipe or a file (``git log | rg x`` searches that, not ``.``)."""
        rec = recursive_reads(prog, argv[1:])
        if rec is None:
            return
        if rec.stdin_first and stdin_fed:
            rec = rec._replace(cwd=False)
        base, shown = self._recursive_operands(prog, rec, words, as_run)
        if rec.cwd and base is None and as_run:
            self.walk.doubts.append(f"the folder {rec.how} reads is unknown")
        elif rec.cwd and base is not None:
            self._below(rec.how, shown, base)
        if rec.anywhere:
            self._below(rec.how, "a magic pathspec (`:/...`)", ["/"])

    def _recursive_operands(
        self, prog: str, rec: RecursiveRead, words: tuple[Word, ...], as_run: bool
    ) -> tuple[list[str] | None, str]:
        """Ask for the folders a recursive read names; the folder it reads when it names none
        (the working directories, or where its ``-C`` options lead) and how to show it."""
        walk = self.walk
        base, shown = walk.cwds, "."
        for op in rec.ops:
            if op.indirect:
                if as_run:
                    src = "stdin" if op.pos < 0 else repr(words[op.pos + 1].shown[op.offset :])
                    walk.doubts.append(f"{rec.how} reads the names of more files from {src}")
                continue
            if op.pos + 1 >= len(words):
                continue
            word = word_from(words[op.pos + 1], op.offset)
            paths = walk.resolve(word, base)
            if op.chdir:
                base, shown = paths, word.shown
            elif paths is None:
                if as_run:
                    walk.doubts.append(f"the folder {word.text!r} {rec.how} reads is unknown")
            else:
                if prog not in SPECS:
                    walk.deny_only_paths(paths)  # tar, cp, ...: not judged as operands yet
                self._below(rec.how, word.shown, paths)
        return base, shown

    def stdin_fed(self, cmd: SimpleCommand) -> bool:
        """Is the stdin of ``cmd`` a redirect or a pipe? A pipe is seen in the source text:
        every occurrence of the command's text must follow ``|`` (or ``|&``) on its line, so
        that a look-alike elsewhere (in quotes, after a comment) never counts."""
        if any(r.op in _STDIN_OPS and (r.fd in (None, "0")) for r in cmd.redirects):
            return True
        text, source = cmd.text.strip(), self._command
        at = source.find(text) if text else -1
        if at < 0:
            return False
        while at >= 0:
            before = source[:at].rstrip(" \t")
            if not before.endswith(("|", "|&")) or before.endswith("||"):
                return False
            at = source.find(text, at + 1)
        return True

    def xargs(self, form: list[str]) -> None:
        """``... | xargs cat``: the files it reads are named only when it runs; a Read
        deny/ask rule may cover any of them."""
        inner, _ = deny_unwrap(form)
        for argv in inner:
            prog = basename(argv[0])
            if prog in NAMES_ONLY_EXEC or (prog not in SPECS and prog not in RECURSIVE_READERS):
                continue  # names only, or no reader of files (rm, mkdir: not a read)
            reaches = self._reach_rules()
            if reaches:
                text = f"xargs hands {prog} file names known only when it runs, which may include"
                cwds = self.walk.cwds
                self._ask_reach(reaches[0], text, cwds[0] if cwds else "/")
            return

    def _below(self, how: str, shown: str, paths: list[str]) -> None:
        walk = self.walk
        for p in paths:
            if walk.ask is not None or walk.deny is not None:
                return
            if not GLOB_MAGIC.search(p) and os.path.exists(p) and not os.path.isdir(p):
                continue  # a file (or a device): there is nothing below it
            reach = self._reaching(p, True)
            if reach is not None:
                self._ask_reach(reach, f"{how} reads {shown} recursively, which may hold", p)

    def _reach_rules(self) -> tuple[RuleReach, ...]:
        if self._reaches is None:
            rules = self._rules
            self._reaches = rule_reaches((*rules.read_deny, *rules.read_ask), self._ctx)
        return self._reaches

    def _reaching(self, path: str, below: bool) -> RuleReach | None:
        """The first Read deny, then ask, rule that may cover a path ``path`` stands for (a
        glob: any it may expand to) or, ``below``, a path under it; as written and real."""
        shapes = [path_shape(path, below)]
        real = self.walk.real(path)
        if real != path:
            shapes.append(path_shape(real, below))
        for reach in self._reach_rules():
            for rule_shape in reach.shapes:
                if any(shapes_meet(s, rule_shape) for s in shapes):
                    return reach
        return None

    def _ask_reach(self, reach: RuleReach, text: str, folder: str) -> None:
        """ASK naming the rule. Its kind is RULE and it carries the Read rule: the engine
        holds it like an ask rule (bypassPermissions asks, dontAsk denies), while auto mode's
        classifier may still answer it (the rule is not an *ask* rule)."""
        if self.walk.ask is None:
            how = "denied by" if reach.rule.behavior is RuleBehavior.DENY else "covered by ask"
            self.walk.ask = Verdict(
                Decision.ASK,
                f"{text} {reach.what(folder)}, {how} rule {reach.rule.value}",
                ReasonKind.RULE,
                reach.rule,
            )
