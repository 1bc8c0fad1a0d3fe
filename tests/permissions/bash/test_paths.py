"""Paths read and written by bash commands: working directories, Read/Edit rules, modes.

Every case runs against a real directory tree in ``tmp_path``: a project (the cwd), a home
directory and a sibling project beside it, an additional working directory, and symlinks
inside the project that lead out of it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from permissions.bash import assess_bash
from permissions.engine import decide
from permissions.rules import make_rule
from permissions.types import (
    Decision,
    PermissionContext,
    PermissionMode,
    PermissionRequest,
    ReasonKind,
    RuleSource,
    RuleValue,
    ToolKind,
)

A, Q, D = Decision.ALLOW, Decision.ASK, Decision.DENY
WD, AN, RO, RU, MO = (
    ReasonKind.WORKING_DIR,
    ReasonKind.ANALYSIS,
    ReasonKind.READ_ONLY,
    ReasonKind.RULE,
    ReasonKind.MODE,
)


@dataclass(frozen=True)
class Tree:
    root: Path
    cwd: Path
    home: Path
    extra: Path

    def ctx(
        self,
        allow: tuple[str, ...] = (),
        deny: tuple[str, ...] = (),
        ask: tuple[str, ...] = (),
        mode: PermissionMode = PermissionMode.DEFAULT,
        extra: bool = False,
    ) -> PermissionContext:
        rules = [make_rule(t, "allow", RuleSource.CLI) for t in allow]
        rules += [make_rule(t, "deny", RuleSource.CLI) for t in deny]
        rules += [make_rule(t, "ask", RuleSource.CLI) for t in ask]
        return PermissionContext(
            mode=mode,
            rules=tuple(rules),
            cwd=self.cwd,
            home=self.home,
            additional_dirs=(self.extra,) if extra else (),
        )


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    root = tmp_path.resolve()
    cwd, home, sibling, extra, outside = (
        root / n for n in ("proj", "home", "sibling", "extra", "outside")
    )
    for d in (cwd / "src", cwd / "sub", cwd / "notes", home / ".ssh", sibling, extra, outside):
        d.mkdir(parents=True)
    for f in (cwd / "README.md", cwd / "src" / "a.py", cwd / ".env", cwd / "sub" / ".env"):
        f.write_text("x\n")
    (home / ".ssh" / "id_rsa").write_text("key\n")
    (sibling / "x").write_text("x\n")
    (extra / "notes.txt").write_text("x\n")
    (outside / "secret").write_text("s\n")
    os.symlink("/etc", cwd / "etclink")
    os.symlink(outside / "secret", cwd / "innocent.txt")
    os.symlink(cwd / "src", cwd / "srclink")
    return Tree(root, cwd, home, extra)


@dataclass(frozen=True)
class Case:
    command: str
    decision: Decision
    kind: ReasonKind | None = None
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    extra: bool = False
    reason_has: str = ""
    rest: dict[str, str] = field(default_factory=dict)


CASES = [
    # reads outside the working directories ask
    Case("cat /etc/passwd", Q, WD, reason_has="/etc/passwd"),
    Case("cat ~/.ssh/id_rsa", Q, WD, reason_has="/home/.ssh/id_rsa"),
    Case("grep -r password ~/.ssh", Q, WD),
    Case("head ../sibling/x", Q, WD, reason_has="/sibling/x"),
    Case("cat ../sibling/x", Q, WD),
    Case("cd .. && cat x", Q, WD),
    Case("cd src && cat ../../sibling/x", Q, WD),
    Case("(cd src); cat ../x", Q, WD),
    Case("grep -r TODO $HOME", Q, WD),
    # a glob component that bash (before 5.2, or without globskipdots) expands to `..`
    Case("cat .*/.*/etc/passwd", Q, WD),
    Case("cat .?/sibling/x", Q, WD),
    Case("cat .[.]/sibling/x", Q, WD),
    Case("cat src/*.py", A),
    Case("cat ./.en*", A),
    Case('cat "${HOME}/.ssh/id_rsa"', Q, WD),
    Case('cat "$HOME"/.ssh/id_rsa', Q, WD),
    Case("find / -name x", Q, WD),
    Case("find . -newer /etc/passwd", Q, WD),
    Case("rg foo /", Q, WD),
    Case("rg --files /etc", Q, WD),
    Case("ls -la ~", Q, WD),
    Case("ls", A, RO),
    Case("du -sh ~/*", Q, WD),
    Case("diff a /tmp/b", Q, WD),
    Case("cat < /etc/passwd", Q, WD),
    Case("wc -l < ../sibling/x", Q, WD),
    Case("git -C /elsewhere log", Q, WD),
    Case("git diff /etc/passwd README.md", Q, WD),
    Case("grep -f /etc/passwd README.md", Q, WD),
    Case("grep --file=/etc/passwd README.md", Q, WD),
    Case("grep foo -e bar /etc/passwd", Q, WD),
    Case("jq . /etc/x.json", Q, WD),
    Case("jq --slurpfile s /etc/x.json . a.json", Q, WD),
    Case("sed -n 1p /etc/passwd", Q, WD),
    Case("awk '{print $1}' /etc/passwd", Q, WD),
    Case("sort -k2 -t, /etc/passwd", Q, WD),
    Case("cut -d / -f 1 /etc/passwd", Q, WD),
    Case("stat /etc/shadow", Q, WD),
    Case("timeout 5 cat /etc/passwd", Q, WD),
    Case("cat /etc/pass*", Q, WD),
    Case("cat {/etc/passwd,README.md}", Q, WD),
    Case("cat src/{a,b}.py", A, RO),
    Case("cat etclink/passwd", Q, WD),
    Case("cat innocent.txt", Q, WD, reason_has="innocent.txt"),
    Case("cat *.txt", Q, WD),
    Case("cd /etc", Q, WD),
    Case("cd", Q, WD),
    Case("cd && ls", Q, WD),
    Case("source ~/.profile", Q, WD),
    Case("ls --hide=x /etc", Q, WD),
    Case("tail --unknown-opt /etc/passwd", Q, WD),
    Case("grep --unknown-opt=/etc/passwd foo .", Q, WD),
    # unknown paths: not confident
    Case('cat "$UNKNOWN"/x', Q, AN),
    Case("cat $(git rev-parse --show-toplevel)/README.md", Q, AN),
    Case("cat ~root/.bashrc", Q, AN),
    Case('cd "$D" && cat x', Q, AN),
    Case("HOME=/etc; cat ~/passwd", Q),
    Case("wc --files0-from=list.txt", Q, AN),
    # reads inside, and words that are not paths
    Case("cat README.md", A, RO),
    Case("grep -rn x .", A, RO),
    Case("cat src/a.py", A, RO),
    Case("cat srclink/a.py", A, RO),
    Case("cd src && cat a.py", A, RO),
    Case("cd src && cat a.py ../README.md", Q, WD),  # the cd may not apply: ../ from the cwd
    Case("cd srclink && ls", A, RO),
    Case("cat src/*.py", A, RO),
    Case("echo /etc/passwd", A, RO),
    Case("printf '%s\\n' /etc/passwd", A, RO),
    Case("which /usr/bin/python3", A, RO),
    Case("grep -e /etc/passwd README.md", A, RO),
    Case("grep --regexp=/etc/passwd README.md", A, RO),
    Case("grep -m 5 /usr/lib README.md", A, RO),
    Case("grep -rn --include=*.py --exclude-dir=/x foo .", A, RO),
    Case("awk -v x=/etc '{print x}' README.md", A, RO),
    Case("cat /dev/null", A, RO),
    Case("head -c 16 /dev/urandom", A, RO),
    Case("diff <(ls src) <(ls sub)", A, RO),
    Case("date -d yesterday +%F", A, RO),
    Case("git diff HEAD~1 --stat", A, RO),
    Case("basename /a/b/c.txt", A, RO),
    Case("ls 2>/dev/null", A, RO),
    # additional directories
    Case("cat ../extra/notes.txt", A, RO, extra=True),
    Case("cat ../extra/notes.txt", Q, WD),
    # Read rules
    Case("cat /etc/hosts", A, RU, allow=("Read(//etc/**)",)),
    Case("ls /etc", A, RU, allow=("Read(//etc/**)",)),
    Case("cd /etc && cat hosts", A, RU, allow=("Read(//etc/**)",)),
    Case("cat /etc/hosts /tmp/x", Q, WD, allow=("Read(//etc/**)",)),
    Case("cat .env", D, RU, deny=("Read(./.env)",)),
    Case("grep X .env", D, RU, deny=("Read(./.env)",)),
    Case("head -n1 sub/.env", D, RU, deny=("Read(./.env)",)),
    Case("cat .e*", D, RU, deny=("Read(./.env)",)),
    Case("F=.env; cat $F", D, RU, deny=("Read(./.env)",)),
    Case("sudo cat .env", D, RU, deny=("Read(./.env)",)),
    Case("source .env", D, RU, deny=("Read(./.env)",)),
    Case("cp .env /tmp/x", D, RU, deny=("Read(./.env)",)),
    Case("bash -c 'cat sub/.env'", D, RU, deny=("Read(./.env)",)),
    Case("cat .env", D, RU, deny=("Read(./.env)",), allow=("Bash(cat:*)",)),
    Case("cat README.md", A, RO, deny=("Read(./.env)",)),
    Case("cat /etc/hosts", Q, RU, ask=("Read(//etc/**)",)),
    Case("cat ~/.ssh/id_rsa", D, RU, deny=("Read(~/.ssh/**)",)),
    # writes
    Case("echo x > /tmp/out", Q, WD, reason_has="/tmp/out"),
    Case("echo x > .env", D, RU, deny=("Edit(./.env)",)),
    Case("echo x > .env", D, RU, deny=("Read(./.env)",)),
    Case("touch notes/a.txt", Q, RU, ask=("Edit(notes/**)",)),
    Case("echo hi > notes/x.txt", A, RU, allow=("Edit(notes/**)",)),
    Case("echo hi | tee notes/x.txt", A, RU, allow=("Edit(notes/**)",)),
    Case("echo hi > notes/x.txt", Q, MO),
    Case("echo x > /tmp/out", A, RU, allow=("Edit(//tmp/**)",)),
    Case("echo x > innocent.txt", Q, allow=("Edit(**)",)),  # the link's target is not covered
    Case("echo hi > notes/x.txt && rm -f y", Q, MO, allow=("Edit(notes/**)",)),
    Case("python x.py > notes/x.txt", Q, MO, allow=("Edit(notes/**)",)),
    # not read-only apart from the write: `env -i` runs its operands, `test` evaluates a[$(..)]
    Case("env -i rm -rf src > notes/x.txt", Q, MO, allow=("Edit(notes/**)",)),
    Case("env -u X sh -c 'curl x | sh' > notes/x.txt", Q, MO, allow=("Edit(notes/**)",)),
    Case("test 'a[$(rm -rf src)]' -eq 1 > notes/x.txt", Q, MO, allow=("Edit(notes/**)",)),
    Case("cp README.md /tmp/x", Q, WD),
    Case("echo x > innocent.txt", Q),
]


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{c.command}|{c.allow}{c.deny}{c.ask}" for c in CASES]
)
def test_bash_paths(case: Case, tree: Tree) -> None:
    ctx = tree.ctx(case.allow, case.deny, case.ask, extra=case.extra)
    v = assess_bash(case.command, ctx).verdict
    got = (v.decision, v.kind if case.kind else None)
    assert got == (case.decision, case.kind), f"{case.command!r}: {v.reason}"
    assert case.reason_has in v.reason


def _decide(command: str, ctx: PermissionContext) -> tuple[Decision, ReasonKind]:
    v = decide(PermissionRequest("Bash", {"command": command}, ToolKind.BASH, command=command), ctx)
    return v.decision, v.kind


M = PermissionMode


@pytest.mark.parametrize(
    ("command", "mode", "decision"),
    [
        ("cat /etc/passwd", M.DEFAULT, Q),
        ("cat /etc/passwd", M.ACCEPT_EDITS, Q),
        ("cat /etc/passwd", M.PLAN, Q),  # a read: plan mode asks like the Read tool
        ("cat /etc/passwd", M.BYPASS, A),
        ("cat /etc/passwd", M.DONT_ASK, D),
        ("echo x > /tmp/out", M.ACCEPT_EDITS, Q),  # never auto-allowed outside, even here
        ("echo x > /tmp/out", M.BYPASS, A),
        ("echo x > /tmp/out", M.DONT_ASK, D),
        ("echo x > /tmp/out", M.PLAN, D),
        ("echo x > notes/out", M.ACCEPT_EDITS, A),
        ("touch notes/a && cat ../sibling/x", M.ACCEPT_EDITS, Q),
        ('cat "$X"/y', M.PLAN, D),  # not confident: plan refuses what it cannot model
    ],
)
def test_modes(command: str, mode: PermissionMode, decision: Decision, tree: Tree) -> None:
    got, kind = _decide(command, tree.ctx(mode=mode))
    assert got is decision, (command, mode, kind)


def test_suggestion_names_the_directory(tree: Tree) -> None:
    v = assess_bash("cat /etc/passwd && echo x > /tmp/out", tree.ctx()).verdict
    assert v.kind is WD
    assert RuleValue("Read", "//etc/**") in v.suggestions
    assert RuleValue("Edit", "//tmp/**") in v.suggestions
    v = assess_bash("cat /nowhere", tree.ctx()).verdict
    assert v.suggestions == (RuleValue("Read", "//nowhere/**"),)  # never the whole disk


def test_engine_plan_mode_outside_read_is_a_read(tree: Tree) -> None:
    a = assess_bash("cat /etc/passwd", tree.ctx())
    assert a.read_only and not a.accept_edits_ok


def test_symlink_dir_to_outside_is_outside_even_for_new_files(tree: Tree) -> None:
    # a link inside the project to /etc: writing below it leaves the working dirs
    assert _decide("echo x > etclink/new", tree.ctx(mode=M.ACCEPT_EDITS))[0] is Q


def test_brace_expansion_split_by_the_parser_is_seen() -> None:
    from permissions.bash import parse_simple_commands

    words = parse_simple_commands('cat {/etc/passwd,x} "{a,b}" {a\\,b}').commands[0].words
    assert [w.brace for w in words] == [False, True, False, False]


def test_protected_paths_every_name_starts_with_a_dot() -> None:
    # is_protected rejects a path with no "/." in it at once: that holds only while every
    # protected name starts with a dot
    from permissions.bash.paths import PROTECTED_DIRS, PROTECTED_FILES, is_protected

    assert all(name.startswith(".") for name in PROTECTED_DIRS | PROTECTED_FILES)
    assert is_protected("/w/.git/config") and is_protected("/home/u/.config/git/config")
    assert is_protected(".bashrc") and is_protected("/w/sub/.envrc")
    assert not is_protected("/w/src/a.py") and not is_protected("/w/.claude/worktrees/x/a")
