"""A ``Read`` deny rule is not walked around through Bash (issue 32, item 4).

A command that names a denied path is denied (as before). A command that reads the contents
of a whole folder (``grep -r``, ``rg``, ``git grep``, ``find -exec``, ``tar c``, ...) or a glob
whose expansion could reach a denied path asks, naming the rule: the folder may be searched
on purpose, the user decides. Programs that only list names (``ls -R``, ``find``, ``tree``)
are not affected. Without any Read deny/ask rule nothing changes.

Every case runs against a real tree in ``tmp_path``; nothing here walks it for the decision.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from permissions.bash import assess_bash
from permissions.bash.pathrules import path_shape, rule_reaches, shapes_meet
from permissions.bash.recursive import recursive_reads
from permissions.engine import decide
from permissions.paths import path_rule_matches
from permissions.rules import make_rule
from permissions.types import (
    Decision,
    PermissionContext,
    PermissionMode,
    PermissionRequest,
    ReasonKind,
    RuleBehavior,
    RuleSource,
    ToolKind,
    Verdict,
)

A, Q, D = Decision.ALLOW, Decision.ASK, Decision.DENY
SECRETS = "Read(./secrets/**)"


@dataclass(frozen=True)
class Tree:
    cwd: Path
    home: Path

    def ctx(
        self,
        deny: tuple[str, ...] = (SECRETS,),
        ask: tuple[str, ...] = (),
        allow: tuple[str, ...] = (),
        mode: PermissionMode = PermissionMode.DEFAULT,
    ) -> PermissionContext:
        rules = [make_rule(t, "deny", RuleSource.CLI) for t in deny]
        rules += [make_rule(t, "ask", RuleSource.CLI) for t in ask]
        rules += [make_rule(t, "allow", RuleSource.CLI) for t in allow]
        return PermissionContext(mode=mode, rules=tuple(rules), cwd=self.cwd, home=self.home)

    def judge(self, command: str, **kw: object) -> Verdict:
        return assess_bash(command, self.ctx(**kw)).verdict  # type: ignore[arg-type]


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    root = tmp_path.resolve()
    cwd, home = root / "proj", root / "home"
    for d in (cwd / "secrets", cwd / "src" / "secrets", cwd / "docs", home / ".ssh"):
        d.mkdir(parents=True)
    (cwd / "secrets" / "a.txt").write_text("PASSWORD=hunter2\n")
    (cwd / "src" / "main.py").write_text("PASSWORD = os.environ['PASSWORD']\n")
    (cwd / "src" / "secrets" / "k").write_text("PASSWORD=nested\n")
    (cwd / "docs" / "notes.md").write_text("x\n")
    (cwd / ".env").write_text("TOKEN=1\n")
    (home / ".ssh" / "id_rsa").write_text("key\n")
    os.symlink(cwd / "secrets", cwd / "vault")
    return Tree(cwd, home)


def _asks_naming(v: Verdict, rule: str, *words: str) -> None:
    assert v.decision is Q, v
    assert v.kind is ReasonKind.RULE and v.rule is not None and str(v.rule.value) == rule, v
    assert v.safety is None and not v.suggestions  # no "don't ask again" to get around it
    for w in words:
        assert w in v.reason, v.reason


# ---------------------------------------------------------------- naming a denied path: deny


@pytest.mark.parametrize(
    "command",
    ["cat secrets/a.txt", "head secrets/x", "grep P secrets/a", "cat ./vault/a.txt"],
)
def test_a_named_denied_path_is_denied(tree: Tree, command: str) -> None:
    v = tree.judge(command)
    assert v.decision is D and v.kind is ReasonKind.RULE and str(v.rule.value) == SECRETS  # type: ignore[union-attr]


def test_a_glob_inside_the_denied_folder_is_denied_not_only_asked(tree: Tree) -> None:
    # every name `secrets/*` can expand to is a denied path: deny is the stricter answer
    assert tree.judge("cat secrets/*").decision is D
    assert tree.judge("cat */*.txt").decision is D  # it expands to secrets/a.txt today


# ---------------------------------------------------------------- recursive reads: ask


@pytest.mark.parametrize(
    "command",
    [
        "grep -r PASSWORD .",
        "grep -r PASSWORD",  # GNU grep -r without a file searches "."
        "grep -rn PASSWORD . --include=*.py",
        "grep -R PASSWORD ./",
        "grep --recursive PASSWORD .",
        "grep --recur PASSWORD .",  # a unique prefix of --recursive
        "grep -d recurse PASSWORD .",
        "grep -e PASSWORD -r .",
        "egrep -r 'PASS|WORD' .",
        "rg PASSWORD",
        "rg -l PASSWORD .",  # names of matching files still tell about their contents
        "git grep PASSWORD",
        "git -C . grep PASSWORD",
        "find . -type f -exec cat {} +",
        "find . -name '*.txt' -exec grep PASSWORD {} \\;",
        "fd -e txt -x cat",
        "tar czf /tmp/out.tgz .",
        "tar -cf - .",
        "tar -C . -cf - secrets",
        "zip -r /tmp/out.zip .",
        "cp -r . /tmp/copy",
        "rsync -a . /tmp/copy",
        "scp -r . host:",
        "diff -r secrets docs",
        "grep -r PASSWORD secrets",  # the folder itself: every file in it is denied
        "grep -r PASSWORD vault",  # a link to it
        "sudo grep -r PASSWORD .",
        "timeout 5 rg PASSWORD",
        "cd docs && grep -r PASSWORD ..",
        "grep -r PASSWORD $PWD/..",  # resolved? no: unknown, and not allowed anyway
        "find . -type f | xargs cat",
        "git ls-files -z | xargs -0 grep PASSWORD",
    ],
)
def test_a_recursive_read_of_a_folder_holding_a_denied_path_asks(tree: Tree, command: str) -> None:
    v = tree.judge(command)
    if "$PWD" in command:
        assert v.decision is Q  # the folder is unknown: the analysis asks as before
        return
    _asks_naming(v, SECRETS)


def test_the_reason_names_the_reader_the_folder_and_the_rule(tree: Tree) -> None:
    v = tree.judge("grep -r PASSWORD .")
    _asks_naming(v, SECRETS, "grep -r reads . recursively", "secrets/**", SECRETS)
    # an anchored rule names the folder below the one searched
    v = tree.judge("grep -r PASSWORD .", deny=("Read(/secrets/**)",))
    _asks_naming(v, "Read(/secrets/**)", "which may hold secrets/, denied by")


def test_a_sibling_folder_of_an_anchored_denied_folder_is_searched_freely(tree: Tree) -> None:
    anchored = ("Read(/secrets/**)",)  # `/` anchors at the rule's settings base (cwd for CLI)
    assert tree.judge("grep -r PASSWORD src", deny=anchored).decision is A
    assert tree.judge("rg PASSWORD src docs", deny=anchored).decision is A
    assert tree.judge("grep -r PASSWORD .", deny=anchored).decision is Q
    assert tree.judge("cat src/secrets/k", deny=anchored).decision is A


def test_a_single_folder_deny_rule_covers_that_folder_at_any_depth_so_src_asks(
    tree: Tree,
) -> None:
    # `Read(./secrets/**)` as a deny rule matches a `secrets` folder at any depth (the
    # permission rules' documented asymmetry), so src/secrets/k is denied by it and a
    # recursive read of src could print it: it asks rather than being allowed.
    assert tree.judge("cat src/secrets/k").decision is D
    _asks_naming(tree.judge("grep -r PASSWORD src"), SECRETS, "at any depth")
    # a multi-segment pattern is anchored: its sibling is free
    assert tree.judge("grep -r x src", deny=("Read(./docs/private/**)",)).decision is A
    _asks_naming(
        tree.judge("grep -r x docs", deny=("Read(./docs/private/**)",)),
        "Read(./docs/private/**)",
        "which may hold private/",
    )


def test_an_unanchored_rule_reaches_into_every_folder(tree: Tree) -> None:
    for rule in ("Read(**/.env)", "Read(.env)", "Read(*.env)"):
        _asks_naming(tree.judge("grep -r x src", deny=(rule,)), rule, "at any depth")
        _asks_naming(tree.judge("rg x", deny=(rule,)), rule)
        # a file holds nothing below it
        assert tree.judge("grep -r x src/main.py", deny=(rule,)).decision is A


def test_absolute_and_home_rules(tree: Tree) -> None:
    shadow = ("Read(//etc/shadow)",)
    _asks_naming(tree.judge("grep -r root /etc", deny=shadow), shadow[0], "which may hold shadow")
    _asks_naming(tree.judge("grep -r root /", deny=shadow), shadow[0], "etc/shadow")
    assert tree.judge("grep -r root .", deny=shadow).decision is A
    assert tree.judge("cat /etc/shadow", deny=shadow).decision is D
    ssh = ("Read(~/.ssh/**)",)
    _asks_naming(tree.judge("grep -r key ~", deny=ssh), ssh[0], ".ssh/")
    assert tree.judge("grep -r key .", deny=ssh).decision is A


def test_rg_reading_a_pipe_or_a_file_reads_no_folder(tree: Tree) -> None:
    # with no path, ripgrep searches its stdin when that is a pipe or a file (the Bash tool's
    # own stdin is /dev/null: `rg x` alone searches ".")
    for command in ("git log | rg foo", "ps aux |& rg foo", "rg foo < x.txt", "rg foo <<< hi"):
        assert tree.judge(command, deny=("Read(/secrets/**)",)).decision is A, command
    for command in ("x || rg foo", "echo 'a | rg foo'; rg foo", "cat f | grep -r foo"):
        _asks_naming(tree.judge(command, deny=("Read(/secrets/**)",)), "Read(/secrets/**)")
    _asks_naming(tree.judge("git log | rg foo ."), SECRETS)


def test_a_working_directory_whose_name_looks_like_a_glob(tmp_path: Path) -> None:
    cwd = tmp_path.resolve() / "proj[1]"
    (cwd / "secrets").mkdir(parents=True)
    rules = (make_rule("Read(/secrets/**)", "deny", RuleSource.CLI),)
    ctx = PermissionContext(rules=rules, cwd=cwd, home=tmp_path / "home")
    _asks_naming(assess_bash("grep -r x .", ctx).verdict, "Read(/secrets/**)")
    _asks_naming(assess_bash("cat */*.md", ctx).verdict, "Read(/secrets/**)")


def test_an_ask_rule_is_honoured_the_same_way(tree: Tree) -> None:
    v = tree.judge("grep -r x .", deny=(), ask=("Read(/docs/**)",))
    _asks_naming(v, "Read(/docs/**)", "covered by ask rule")
    assert v.rule is not None and v.rule.behavior is RuleBehavior.ASK


# ---------------------------------------------------------------- globs


def test_a_glob_that_may_reach_a_denied_path_asks(tree: Tree) -> None:
    # nothing matches `*/*.md` inside secrets/ today, but a file created there would be read
    _asks_naming(tree.judge("cat */*.md"), SECRETS, "cat reads */*.md, a pattern that may match")
    _asks_naming(tree.judge("head -n1 */*.log"), SECRETS)
    assert tree.judge("head -n1 */*").decision is D  # it expands to secrets/a.txt today
    _asks_naming(tree.judge("grep -r x *"), SECRETS)  # recursive from each match
    _asks_naming(tree.judge("wc -l < */*.md"), SECRETS, "a redirect reads")


def test_a_glob_that_cannot_reach_a_denied_path_is_allowed(tree: Tree) -> None:
    # `*` names secrets/ itself, which cat and grep (without -r) refuse to read: no file
    # below it can be read, so a bare `cat *` is allowed (its only expansions are judged)
    assert tree.judge("cat *").decision is A
    assert tree.judge("grep x *").decision is A
    assert tree.judge("cat docs/*").decision is A
    assert tree.judge("cat *.md", deny=("Read(*.env)",)).decision is A
    # ... unless the rule names something `*` may match: a dot file, with dotglob
    _asks_naming(tree.judge("cat *", deny=("Read(.env)",)), "Read(.env)")


# ---------------------------------------------------------------- names only: allowed


@pytest.mark.parametrize(
    "command",
    [
        "ls",
        "ls -R",
        "ls secrets",
        "ls -la secrets/",
        "find . -name x",
        "find . -type f -print0",
        "tree",
        "du -a",
        "rg --files",
        "fd txt",
        "stat secrets",
    ],
)
def test_listing_names_is_not_reading_contents(tree: Tree, command: str) -> None:
    v = tree.judge(command)
    assert v.decision is A and v.rule is None, v


def test_find_exec_of_a_names_only_program_is_not_a_read(tree: Tree) -> None:
    v = tree.judge("find . -exec ls -l {} +")
    assert v.kind is ReasonKind.MODE and v.rule is None  # it needs permission, as before


# ---------------------------------------------------------------- nothing changes without rules


@pytest.mark.parametrize(
    ("command", "decision", "kind"),
    [
        ("grep -r PASSWORD .", A, ReasonKind.READ_ONLY),
        ("rg PASSWORD", A, ReasonKind.READ_ONLY),
        ("git grep PASSWORD", A, ReasonKind.READ_ONLY),
        ("cat */*.md", A, ReasonKind.READ_ONLY),
        ("find . -exec cat {} +", Q, ReasonKind.MODE),
        ("tar czf /tmp/out.tgz .", Q, ReasonKind.MODE),
        ("find . | xargs cat", Q, ReasonKind.MODE),
    ],
)
def test_without_a_read_deny_rule_nothing_changes(
    tree: Tree, command: str, decision: Decision, kind: ReasonKind
) -> None:
    for rules in ({"deny": ()}, {"deny": ("Edit(./secrets/**)",)}, {"deny": ("Bash(rm *)",)}):
        v = tree.judge(command, **rules)
        assert (v.decision, v.kind) == (decision, kind), (rules, v)


def test_an_allow_rule_does_not_lift_the_question(tree: Tree) -> None:
    v = tree.judge("grep -r PASSWORD .", allow=("Bash(grep:*)",))
    _asks_naming(v, SECRETS)


# ---------------------------------------------------------------- modes


@pytest.mark.parametrize(
    ("mode", "decision"),
    [
        (PermissionMode.DEFAULT, Q),
        (PermissionMode.ACCEPT_EDITS, Q),
        (PermissionMode.BYPASS, Q),  # like an ask rule: it holds in bypass
        (PermissionMode.DONT_ASK, D),
        (PermissionMode.PLAN, Q),  # read-only: plan mode asks, it does not refuse
        (PermissionMode.AUTO, Q),  # the pipeline's classifier may answer (not an ask rule)
    ],
)
def test_modes(tree: Tree, mode: PermissionMode, decision: Decision) -> None:
    ctx = tree.ctx(mode=mode)
    req = PermissionRequest("Bash", {"command": "grep -r PASSWORD ."}, ToolKind.BASH)
    v = decide(req, ctx)
    assert v.decision is decision, v
    assert v.rule is not None and str(v.rule.value) == SECRETS
    # the same command without the rule runs in every mode but plan-free ones alike
    assert decide(req, tree.ctx(deny=(), mode=mode)).decision is A


# ---------------------------------------------------------------- the pieces


@pytest.mark.parametrize(
    ("command", "how", "roots", "cwd"),
    [
        ("grep -r x a b", "grep -r", ["a", "b"], False),
        ("grep -rx x", "grep -r", [], True),
        ("grep x a", None, None, None),
        ("rg --files a", None, None, None),
        ("rg -e x a", "rg", ["a"], False),
        ("tar cf out.tar a b", "tar c", ["a", "b"], False),
        ("tar cfC out.tar dir a", "tar c", ["dir", "a"], False),
        ("tar -C dir -czf out.tgz a", "tar c", ["dir", "a"], False),
        ("tar --create --file=out.tar --directory=d a", "tar c", ["d", "a"], False),
        ("tar xf a.tar", None, None, None),
        ("cp -r a b dest", "cp -r", ["a", "b"], False),
        ("cp -rt dest a b", "cp -r", ["a", "b"], False),
        ("cp a b", None, None, None),
        ("rsync -avz a host:b", "rsync -r", ["a"], False),
        ("rsync -a host:a b", "rsync -r", [], False),
        ("zip -r out.zip a b", "zip -r", ["a", "b"], False),
        ("find a b -exec cat {} +", "find -exec", ["a", "b"], False),
        ("find -L a -newer f -exec cat {} +", "find -exec", ["a"], False),
        ("find -H -L a b -exec cat {} +", "find -exec", ["a", "b"], False),
        ("find -newer f -exec cat {} +", "find -exec", [], True),
        ("find a -exec echo {} +", None, None, None),
        ("fd x a -x cat", "fd -x", ["a"], False),
        ("fd x", None, None, None),
        ("git -C d grep x", "git grep", ["d"], True),
        ("git grep x -- ../other", "git grep", ["../other"], True),
        ("git log", None, None, None),
    ],
)
def test_recursive_reads(
    command: str, how: str | None, roots: list[str] | None, cwd: bool | None
) -> None:
    argv = command.split()
    rec = recursive_reads(argv[0], argv[1:])
    if how is None:
        assert rec is None
        return
    assert rec is not None and rec.how == how
    assert [argv[op.pos + 1][op.offset :] for op in rec.ops] == roots
    assert rec.cwd is cwd


RULES = [
    "Read(./secrets/**)",
    "Read(/secrets/**)",
    "Read(.env)",
    "Read(**/.env)",
    "Read(*.env)",
    "Read(./docs/private/**)",
    "Read(//etc/shadow)",
    "Read(~/.ssh/**)",
    "Read(src/*.py)",
    "Read(./k[0-9]/**)",
    "Read(./a**b/c)",
    "Read(.)",
]
PATHS = [
    "secrets/a.txt",
    "src/secrets/k",
    "secrets",
    ".env",
    "src/.env",
    "x.env",
    "docs/private/x",
    "docs/x",
    "/etc/shadow",
    "/etc/passwd",
    "~/.ssh/id_rsa",
    "~/x",
    "src/main.py",
    "src/a/main.py",
    "k1/x",
    "kx/x",
    "a/q/b/c",
    "ab/c",
]


@pytest.mark.parametrize("rule", RULES)
def test_rule_shapes_agree_with_the_rule_matcher(tree: Tree, rule: str) -> None:
    """A literal path meets a rule's shape exactly when the rule matches it (so the shapes
    stay what permissions.paths decides)."""
    ctx = tree.ctx(deny=(rule,))
    (reach,) = rule_reaches(ctx.rules, ctx)
    for p in PATHS:
        full = str(tree.home) + p[1:] if p.startswith("~") else p
        full = full if full.startswith("/") else f"{tree.cwd}/{full}"
        met = any(shapes_meet(path_shape(full, False), s) for s in reach.shapes)
        assert met is path_rule_matches(ctx.rules[0], full, ctx), (rule, p)
