"""Rule matching (conventions §2.2) and deny see-through."""

from __future__ import annotations

from pathlib import Path

import pytest

from permissions.bash import assess_bash, bash_rule_matches
from permissions.bash.match import compile_pattern
from permissions.rules import make_rule
from permissions.types import Decision, PermissionContext

PATTERNS = [
    ("npm run build", "npm run build", True),
    ("npm run build", "npm run build --prod", False),
    ("npm run build", "npm run buil", False),
    ("git status:*", "git status", True),
    ("git status:*", "git status --short", True),
    ("git status:*", "git statusx", False),
    ("git status:*", "gitstatus", False),
    ("npm run test:*", "npm run test:e2e", False),
    ("npm run test:*", "npm run test --watch", True),
    ("git st:*", "git stash", False),
    ("npm run test *", "npm run test", True),
    ("npm run test *", "npm run test -- -k x", True),
    ("npm run test *", "npm run tests", False),
    ("ls*", "ls -la", True),
    ("ls*", "lsof", True),
    ("* --version", "node --version", True),
    ("* --version", "node --help", False),
    ("git * main", "git push origin main", True),
    ("git * main", "git push origin main2", False),
    ("git:* push", "git:x push", True),
    ("git:* push", "git status push", False),
    ("make   -n", "make -n", True),
    (None, "anything at all", True),
]


@pytest.mark.parametrize(("content", "text", "expected"), PATTERNS)
def test_pattern(content: str | None, text: str, expected: bool) -> None:
    assert compile_pattern(content).matches(text) is expected


@pytest.mark.parametrize(
    ("content", "argv", "expected"),
    [
        ("rm -rf:*", ["rm", "-r", "-f", "x"], True),
        ("rm -rf:*", ["rm", "-fr", "x"], True),
        ("rm -rf:*", ["rm", "-rfv", "x"], True),
        ("rm -rf:*", ["rm", "--recursive", "--force", "x"], True),
        ("rm -rf:*", ["rm", "-r", "x"], False),
        ("rm -rf:*", ["rm", "--", "-r", "-f"], False),
        ("rm:*", ["rm", "-r"], False),
    ],
)
def test_flag_set_match_for_deny(content: str, argv: list[str], expected: bool) -> None:
    assert compile_pattern(content).matches_flags(argv) is expected


DENY_SEE_THROUGH = [
    "'rm' -f x",
    '"r"m -f x',
    "\\rm -f x",
    "r\\m x",
    "$'\\x72m' -f x",
    "$'\\162m' x",
    "/bin/rm -f x",
    "/usr/bin/rm x",
    "timeout 5 rm x",
    "timeout -s KILL 5 rm x",
    "time rm x",
    "time -p rm x",
    "nice -n 5 rm x",
    "nohup rm x &",
    "stdbuf -o0 rm x",
    "command rm x",
    "builtin rm x",
    "exec rm x",
    "env rm x",
    "env -i rm x",
    "env -u HOME FOO=1 rm x",
    "FOO=bar rm x",
    "sudo rm x",
    "sudo -u root -- rm x",
    "doas rm x",
    "bash -c 'rm -f x'",
    'sh -c "echo; rm x"',
    "bash -lc 'rm x'",
    "zsh -c 'ls && rm x'",
    "eval 'rm x'",
    "eval rm x",
    "echo x | xargs rm",
    "xargs -0 -n1 rm < list",
    "find . -exec rm {} \\;",
    "find . -execdir rm {} +",
    "find . -ok rm {} \\;",
    "trap 'rm -f x' EXIT",
    "trap -- 'rm x' EXIT",
    "su -c 'rm x'",
    "script -qc 'rm x' /dev/null",
    "watch -n 1 rm x",
    "ssh host rm -rf /tmp/x",
    "parallel rm ::: a b",
    "busybox rm x",
    "coproc rm x",
    "{rm,-f,x}",
    "x=rm; $x -f y",
    "a=rm; b=$a; $b y",
    "y=r; ${y}m x",
    "f(){ rm -f x; }; f",
    "function g { rm x; }",
    "echo $(rm x)",
    'echo "$(rm x)"',
    "echo `rm x`",
    "cat <(rm x)",
    "ls > >(rm x)",
    "echo ${x:-$(rm x)}",
    "x=$(rm y)",
    "export x=$(rm y)",
    "[[ -n $(rm x) ]]",
    "echo $((1 + $(rm x)))",
    'cat <<< "$(rm x)"',
    "cat <<EOF\n$(rm x)\nEOF",
    "sh <<EOF\nrm x\nEOF",
    "bash <<'EOF'\nrm x\nEOF",
    "cat <<EOF | sh\nrm x\nEOF",
    "if true; then rm x; fi",
    "for i in 1; do rm x; done",
    "while false; do rm x; done",
    "case a in a) rm x;; esac",
    "(cd . && rm x)",
    "{ ls; rm x; }",
    "! rm x",
    "ls && rm x",
    "ls || rm x",
    "ls; rm x",
    "ls\nrm x",
    "ls | rm x",
    "ls |& rm x",
    "ls & rm x",
    "   rm   -f   x",
    "rm x; echo 'unterminated",
    "ls 1<>f; rm x",
]


@pytest.mark.parametrize("command", DENY_SEE_THROUGH)
def test_deny_sees_through(command: str, tmp_path: Path) -> None:
    ctx = PermissionContext(rules=(make_rule("Bash(rm:*)", "deny"),), cwd=tmp_path)
    assessment = assess_bash(command, ctx)
    assert assessment.verdict.decision is Decision.DENY, (command, assessment.verdict.reason)
    assert assessment.verdict.rule is not None
    assert str(assessment.verdict.rule.value) == "Bash(rm:*)"


@pytest.mark.parametrize(
    "command",
    [
        'grep -rn "rm -f" .',
        "echo 'rm x'",
        "ls # ; rm x",
        "echo rm",
        "cat <<'EOF'\nrm x\nEOF",
        "rmdir x",
        "git rm x",
    ],
)
def test_deny_does_not_fire_on_data(command: str, tmp_path: Path) -> None:
    ctx = PermissionContext(rules=(make_rule("Bash(rm:*)", "deny"),), cwd=tmp_path)
    assert assess_bash(command, ctx).verdict.decision is not Decision.DENY


def test_git_global_options_do_not_hide_denied_subcommand(tmp_path: Path) -> None:
    ctx = PermissionContext(rules=(make_rule("Bash(git push:*)", "deny"),), cwd=tmp_path)
    for cmd in ("git -C . push origin main", "git --no-pager -c a=b push", "git push"):
        assert assess_bash(cmd, ctx).verdict.decision is Decision.DENY, cmd


def test_ask_rule_asks_even_when_allowed(tmp_path: Path) -> None:
    rules = (make_rule("Bash(git:*)", "allow"), make_rule("Bash(git push:*)", "ask"))
    ctx = PermissionContext(rules=rules, cwd=tmp_path)
    v = assess_bash("git status && git push", ctx).verdict
    assert (
        v.decision is Decision.ASK and v.rule is not None and v.rule.value.content == "git push:*"
    )
    assert assess_bash("git fetch", ctx).verdict.decision is Decision.ALLOW


def test_allow_rules_match_only_as_written(tmp_path: Path) -> None:
    rules = (make_rule("Bash(echo:*)", "allow"), make_rule("Bash(cd:*)", "allow"))
    ctx = PermissionContext(rules=rules, cwd=tmp_path)
    assert assess_bash("echo $(touch x)", ctx).verdict.decision is Decision.ASK
    assert assess_bash("cd . && touch x", ctx).verdict.decision is Decision.ASK
    assert assess_bash("sudo echo hi", ctx).verdict.decision is Decision.ASK
    assert assess_bash("timeout 5 echo hi", ctx).verdict.decision is Decision.ALLOW
    assert assess_bash("PAGER=x echo hi", ctx).verdict.decision is Decision.ASK
    assert assess_bash("LANG=C echo hi", ctx).verdict.decision is Decision.ALLOW


def test_bash_rule_matches() -> None:
    assert bash_rule_matches("rm:*", "ls && sudo rm -rf x")
    assert bash_rule_matches("git push *", "git -C x push")
    assert not bash_rule_matches("rm:*", "ls -la")
    assert bash_rule_matches(None, "ls")
    assert bash_rule_matches("rm:*", "echo 'unterminated")  # unparseable: always matches
