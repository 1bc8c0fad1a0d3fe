"""The paths bash commands read and write, judged against the working directories and the
Read/Edit path rules of the context.

A read-only command is auto-allowed only when every path it reads lies inside the working
directories (as written and after resolving symlinks) or is covered by a ``Read`` allow rule.
A ``Read`` deny rule on a path read (or written) denies the command, an ask rule asks; an
``Edit`` deny rule on a path written denies it. A path that cannot be known (``$X/f``,
``~user``, a relative path after ``cd "$D"``) makes the analysis not confident.

A command that reads the contents of whole folders (``grep -r x .``, ``rg x``, ``tar c``, the
list is ``operand_specs.RECURSIVE_READERS``) or a glob (``cat */*.txt``) reads paths it never
names: when a ``Read`` deny (or ask) rule could cover one of them, the command asks, naming the
rule (:mod:`permissions.bash.reach`).

The walk follows ``cd`` as a *set* of possible directories: after ``cd src; ...`` (or inside
``( cd src )``) a later relative path is resolved against both, because the ``cd`` may have
failed or may not apply; the path must be fine under every candidate.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import stat

from permissions.bash.analysis import CommandFacts, deny_forms_of_command
from permissions.bash.operand_specs import NAMES_ONLY, RECURSIVE_READERS
from permissions.bash.operands import Operand, looks_like_path, scan_operands
from permissions.bash.pathrules import (
    GLOB_MAGIC,
    HOME_NAMED,
    HOME_WORD,
    SAFE_READS,
    core_argv,
    dir_suggestion,
    norm,
    path_rules,
    real_root,
    root_prefixes,
    unquote_rest,
    word_from,
)
from permissions.bash.reach import Reach
from permissions.bash.script import SimpleCommand
from permissions.bash.words import Word, brace_expand
from permissions.bash.wrappers import basename
from permissions.paths import is_under, path_rule_matches_resolved, working_roots
from permissions.types import (
    Decision,
    PermissionContext,
    PermissionRule,
    ReasonKind,
    RuleValue,
    Verdict,
)

__all__ = ["PathWalk"]

_MAX_CWDS = 8
_MAX_GLOB = 1000
_MAX_DOTDOT = 6


class PathWalk:
    """Judges the paths of each command of one script, in order (``visit``), following ``cd``
    (the directory a ``cd`` enters applies from the next command on)."""

    def __init__(self, ctx: PermissionContext, command: str) -> None:
        self.ctx = ctx
        self.rules = path_rules(ctx)
        self.roots = working_roots(ctx)
        self._prefixes = root_prefixes(self.roots)
        self.home = norm(str(ctx.home))
        self.home_known = "HOME" not in command or not HOME_NAMED.search(command)
        self.cwds: list[str] | None = [norm(str(ctx.cwd))]
        self.deny: Verdict | None = None
        self.ask: Verdict | None = None
        self.doubts: list[str] = []
        self.read_rules: list[PermissionRule] = []  # Read allow rules that let a read outside
        self.outside: list[tuple[str, bool, bool | None]] = []  # (path, written, a dir?)
        self._cd_paths: list[str] | None = None
        # Any Read deny/ask rule: reads of whole folders and globs are matched against them
        # (none, the common case: no work at all).
        self.guarded = bool(self.rules.read_deny or self.rules.read_ask)
        self.reach = Reach(self, self.rules, ctx, command)

    # ---------------------------------------------------------------- resolution

    def _texts(self, word: Word) -> list[str] | None:
        """The path strings a word stands for (maybe relative); None: not knowable."""
        text, value = word.text, word.value
        if text.startswith(("<(", ">(")):
            return []  # process substitution: its commands are judged on their own
        if value is None:
            m = HOME_WORD.match(text)
            if m is None or not self.home_known:
                return None
            rest = unquote_rest(('"' if m.group(1) else "") + m.group(2))
            return None if rest is None else [self.home + rest]
        if value.startswith("~"):
            if not text.startswith("~"):
                value = "./" + value  # a quoted tilde is a plain name
            elif value == "~" or value.startswith("~/"):
                if not self.home_known:
                    return None
                value = self.home + value[1:]
            else:
                return None  # ~user, ~+, ~-
        return brace_expand(value) if word.brace else [value]

    def _absolute(self, texts: list[str], base: list[str] | None) -> list[str] | None:
        out: list[str] = []
        for t in texts:
            if t.startswith("/"):
                out.append(norm(t))
            elif base is None:
                return None
            else:
                out.extend(norm(os.path.join(c, t)) for c in base)
        return out

    def resolve(self, word: Word, base: list[str] | None) -> list[str] | None:
        """Absolute paths ``word`` may name, relative ones against every directory of ``base``
        (None: unknown); a glob adds what it matches now. None: not knowable."""
        value = word[1]
        if word[2] is value and value and value[0] not in "~<>" and not (word[3] or word[4]):
            # a plain literal word (the common case)
            if value[0] == "/":
                return [norm(value)]
            if base is not None and len(base) == 1:
                return [norm(f"{base[0]}/{value}")]
        texts = self._texts(word)
        if texts is None:
            return None
        paths = self._absolute(texts, base)
        if paths is None or not word.glob:
            return paths
        # bash before 5.2 (or without globskipdots) expands `.*` to `..` too: judge that path.
        dotdot: list[str] = []
        for t in texts:
            variants = _dotdot_variants(t)
            if variants is None:
                return None
            dotdot.extend(variants)
        if dotdot:
            extra = self._absolute(dotdot, base)
            if extra is None:
                return None
            paths = [*paths, *extra]
        found = list(paths)
        for p in paths:
            matches = glob.glob(p)
            if len(matches) > _MAX_GLOB:
                return None
            found.extend(norm(m) for m in matches)
        return found

    # ---------------------------------------------------------------- judging

    def real(self, lex: str) -> str:
        """``os.path.realpath(lex)``, cheaply when no component below a working dir is a link."""
        for root in self.roots:
            if is_under(lex, root):
                cur = root.rstrip("/")
                for part in lex[len(cur) + 1 :].split("/") if lex != root else ():
                    cur = f"{cur}/{part}"
                    try:
                        mode = os.lstat(cur).st_mode
                    except OSError:
                        break  # missing: nothing further down can be a link
                    if stat.S_ISLNK(mode):
                        return os.path.realpath(lex)
                real = real_root(root)
                return lex if real == root else real + lex[len(root.rstrip("/")) :]
        return os.path.realpath(lex)

    def _under_root(self, path: str) -> bool:
        return path.startswith(self._prefixes) or path in self.roots

    def _inside(self, lex: str, real: str) -> bool:
        return self._under_root(lex) and (real == lex or self._under_root(real))

    def judge(self, lex: str, written: bool, is_dir: bool | None = None) -> PermissionRule | None:
        """Record what ``lex`` calls for; the allow rule covering it, if any. ``is_dir``: known
        to be a directory (a cd target) or not (a file written); None: look."""
        if not written and lex in SAFE_READS:
            return None
        rules = self.rules
        deny = rules.write_deny if written else rules.read_deny
        ask = rules.write_ask if written else rules.read_ask
        allow = rules.write_allow if written else rules.read_allow
        lexically_inside = lex.startswith(self._prefixes) or lex in self.roots
        if not (deny or ask or allow or lexically_inside):
            self.outside.append((lex, written, is_dir))
            return None
        real = self.real(lex)
        ctx = self.ctx
        verb = "writes" if written else "reads"
        for r in deny:
            if path_rule_matches_resolved(r, lex, real, ctx):
                self.deny = self.deny or Verdict(
                    Decision.DENY, f"denied by rule {r.value} ({verb} {lex})", ReasonKind.RULE, r
                )
                return None
        for r in ask:
            if path_rule_matches_resolved(r, lex, real, ctx):
                self.ask = self.ask or Verdict(
                    Decision.ASK,
                    f"ask rule {r.value} requires confirmation ({verb} {lex})",
                    ReasonKind.RULE,
                    r,
                )
                return None
        inside = self._inside(lex, real)
        hit = next((r for r in allow if path_rule_matches_resolved(r, lex, real, ctx)), None)
        if hit is None and allow and os.path.isdir(real):
            # `Read(//etc/**)` covers what is inside /etc, so listing or entering it too
            dir_lex, dir_real = lex.rstrip("/") + "/", real.rstrip("/") + "/"
            hit = next(
                (r for r in allow if path_rule_matches_resolved(r, dir_lex, dir_real, ctx)), None
            )
        if hit is not None:
            if not inside and not written:
                self.read_rules.append(hit)
            return hit
        if not inside:
            self.outside.append((lex, written, is_dir))
        return None

    def _literal(self, value: str) -> list[str] | None:
        """Absolute paths of a literal path string (``~`` is the home directory)."""
        if value == "~" or value.startswith("~/"):
            if not self.home_known:
                return None
            value = self.home + value[1:]
        elif value.startswith("~"):
            return None
        return self._absolute([value], self.cwds)

    def _deny_only(self, value: str, written: bool) -> None:
        """Deny/ask rules on a path seen only through obfuscation (never allows anything)."""
        for p in self._literal(value) or ():
            saved = len(self.outside)
            self.judge(p, written)
            del self.outside[saved:]

    # ---------------------------------------------------------------- commands

    def visit(self, f: CommandFacts, targets: list[str | None]) -> PermissionRule | None:
        """Judge the paths ``f`` reads and writes (``targets``: :func:`write_words`); the Edit
        allow rule covering every path it writes (None if it writes nothing, or something no
        rule covers)."""
        cmd = f.cmd
        self._cd_paths = None
        if cmd.redirects:
            for r in cmd.redirects:
                if r.op == "<" and r.target is not None:
                    self.read(r.target, "<", self.cwds)
        core = core_argv(f)
        if core is not None:
            self._visit_argv(cmd, *core)
        if self.guarded and cmd.kind == "command":
            self._visit_deny_forms(cmd)
        if not targets:
            return None
        return self._covering_write_rule(targets)

    def _visit_argv(self, cmd: SimpleCommand, argv: list[str], words: tuple[Word, ...]) -> None:
        """The paths the argv as written reads (its operands, a folder read recursively), and
        where a ``cd``/``pushd`` moves."""
        prog = argv[0] if "/" not in argv[0] else basename(argv[0])
        cd = prog == "cd" or prog == "pushd"
        if len(argv) > 1:
            ops = scan_operands(prog, argv[1:])
            if ops:
                self.read_operands(prog, ops, words, cd)
        if cd and argv[0] == prog:
            self._track_cd(argv, words)
        if self.guarded and prog in RECURSIVE_READERS:
            self.reach.recursive(prog, argv, words, True, self.reach.stdin_fed(cmd))

    def _visit_deny_forms(self, cmd: SimpleCommand) -> None:
        """Deny/ask rules on what ``cmd`` reads as seen through wrappers and obfuscation (every
        deny form but the argv as written), and on what an ``xargs`` in it may read."""
        for k, form in enumerate(deny_forms_of_command(cmd)):
            name = basename(form[0])
            if name == "xargs":
                self.reach.xargs(form)
            if not k:
                continue  # the argv as written: judged by _visit_argv
            for op in scan_operands(name, form[1:]) or ():
                if not op.chdir and op.pos + 1 < len(form):
                    self._deny_only(form[op.pos + 1][op.offset :], False)
            if name in RECURSIVE_READERS:
                self.reach.recursive(name, form, _form_words(form), False)

    def _covering_write_rule(self, targets: list[str | None]) -> PermissionRule | None:
        """Judge the paths written; the first allow rule covering them, if one covers each."""
        covering: PermissionRule | None = None
        complete = True
        for t in targets:
            paths = None if t is None else self._literal(t)
            if paths is None:
                complete = False  # unknown: the command needs permission anyway
                continue
            for p in paths:
                rule = self.judge(p, True, False)
                covering = covering or rule
                complete = complete and rule is not None
        return covering if complete else None

    def read_operands(
        self, prog: str, ops: list[Operand], words: tuple[Word, ...], cd: bool = False
    ) -> None:
        base: list[str] | None = self.cwds
        for op in ops:
            if op.pos + 1 >= len(words):
                continue
            word = word_from(words[op.pos + 1], op.offset)
            if op.maybe and not looks_like_path(word.shown):
                continue
            if op.indirect:
                self.doubts.append(f"{prog} reads the names of more files from {word.shown!r}")
            paths = self.read(word, prog, base, True if cd or op.chdir else None)
            if op.chdir:
                base = paths
            if cd:
                self._cd_paths = paths

    def read(
        self, word: Word, prog: str, base: list[str] | None, is_dir: bool | None = None
    ) -> list[str] | None:
        paths = self.resolve(word, base)
        if paths is None:
            self.doubts.append(f"the path {word.text!r} read by {prog} cannot be resolved")
            if word.deny_value is not None and word.value is None:
                self._deny_only(word.deny_value, False)
            return None
        for p in paths:
            self.judge(p, False, is_dir)
        if word.glob and self.guarded and prog not in NAMES_ONLY:
            self.reach.glob(prog, word, paths)
        return paths

    def deny_only_paths(self, paths: list[str]) -> None:
        """Deny/ask rules on ``paths`` (nothing about the working directories)."""
        outside, read_rules = len(self.outside), len(self.read_rules)
        for p in paths:
            self.judge(p, False)
        del self.outside[outside:]
        del self.read_rules[read_rules:]

    def _track_cd(self, argv: list[str], words: tuple[Word, ...]) -> None:
        """Add the directory a ``cd``/``pushd`` moves to (the old ones stay possible)."""
        if self.cwds is None:
            return
        first = 0  # the index of the first operand
        for k in range(1, len(argv)):
            if argv[k][:1] not in "-+":
                first = k
                break
        new: list[str] | None
        if "-" in argv:
            new = None  # `cd -`: the previous directory, unknown here
        elif first:
            new = self._cd_paths or self.resolve(words[first], self.cwds)
        elif argv[0] == "cd":
            new = [self.home] if self.home_known else None
            if new:
                self.judge(self.home, False, True)  # a bare `cd` enters the home directory
        else:
            return  # pushd alone or `pushd +1`: back to a directory already possible
        if new is None:
            self.cwds = None
            return
        merged = self.cwds + [p for p in new if p not in self.cwds]
        self.cwds = merged if len(merged) <= _MAX_CWDS else None

    # ---------------------------------------------------------------- verdict

    def outside_verdict(self, extra: tuple[RuleValue, ...] = ()) -> Verdict | None:
        """ASK (WORKING_DIR) naming the first path outside the working dirs, or None."""
        if not self.outside:
            return None
        path, written, _ = self.outside[0]
        suggestions: list[RuleValue] = []
        for p, w, is_dir in self.outside[:5]:
            sug = dir_suggestion(p, w, os.path.isdir(p) if is_dir is None else is_dir)
            if sug not in suggestions:
                suggestions.append(sug)
        verb = "writing" if written else "reading"
        return Verdict(
            Decision.ASK,
            f"{verb} {path} outside the working directories needs permission",
            ReasonKind.WORKING_DIR,
            suggestions=tuple([*suggestions, *extra][:5]),
        )


def _dotdot_variants(text: str) -> list[str] | None:
    """``text`` with each glob component that could name ``..`` replaced by ``..``, in every
    combination (``.*/x`` -> ``../x``).

    Python's glob never yields ``..``, but bash does for a component such as ``.*``, ``.?`` or
    ``.[.]`` unless ``globskipdots`` is on (the default only since bash 5.2). A component must
    start with a literal dot to match a dot name, so ``*`` alone never does.
    """
    parts = text.split("/")
    at = [
        i
        for i, part in enumerate(parts)
        if part.startswith(".")
        and part != ".."
        and GLOB_MAGIC.search(part) is not None
        and fnmatch.fnmatchcase("..", part)
    ]
    if len(at) > _MAX_DOTDOT:
        return None  # too many combinations to judge: not knowable
    out: list[str] = []
    for mask in range(1, 1 << len(at)):
        variant = list(parts)
        for bit, i in enumerate(at):
            if mask >> bit & 1:
                variant[i] = ".."
        out.append("/".join(variant))
    return out


def _form_words(form: list[str]) -> tuple[Word, ...]:
    """Words for an argv seen through a wrapper (``sudo grep -r x .``): literal strings, any
    wildcard in them taken as one."""
    return tuple(Word(a, a, a, GLOB_MAGIC.search(a) is not None) for a in form)
