"""assess_bash details: safety checks, acceptEdits, suggestions, traces, parse errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from permissions.bash import assess_bash, is_read_only_command, parse_simple_commands
from permissions.rules import make_rule
from permissions.types import Decision, PermissionContext, ReasonKind, RuleValue


def _ctx(tmp_path: Path, *allow: str) -> PermissionContext:
    proj = tmp_path / "proj"
    return PermissionContext(
        rules=tuple(make_rule(r, "allow") for r in allow), cwd=proj, home=tmp_path
    )


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf /",
        "rm -rf ~",
        'rm -rf "$HOME"',
        "rm -rf $HOME/",
        'rm -rf "$X"/*',
        "rm -rf .",
        "rm -rf ..",
        "rm -r ../..",
        "rm -rf /usr",
        "rm -rf ./*",
        "rm /*",
        "rmdir ..",
    ],
)
def test_critical_rm_is_never_auto_approved(command: str, tmp_path: Path) -> None:
    a = assess_bash(command, _ctx(tmp_path, "Bash(rm:*)", "Bash(rmdir:*)"))
    assert a.verdict.decision is Decision.ASK
    assert a.verdict.kind is ReasonKind.SAFETY
    assert a.verdict.safety is not None and not a.verdict.safety.classifier_approvable
    assert not a.accept_edits_ok


@pytest.mark.parametrize(
    "command",
    [
        "echo x >> .bashrc",
        "echo x > ~/.zshrc",
        "touch .git/hooks/pre-commit",
        "mkdir .claude/x",
        "cd .claude && echo '{}' > settings.json",
        "cp a .vscode/settings.json",
        "mv x .envrc",
        "sed -i s/a/b/ .gitmodules",
        "tee .mcp.json",
    ],
)
def test_protected_paths_raise_approvable_safety(command: str, tmp_path: Path) -> None:
    a = assess_bash(command, _ctx(tmp_path, "Bash(echo:*)", "Bash(touch:*)", "Bash(cd:*)"))
    assert a.verdict.decision is Decision.ASK and a.verdict.kind is ReasonKind.SAFETY
    assert a.verdict.safety is not None and a.verdict.safety.classifier_approvable
    assert not a.accept_edits_ok


@pytest.mark.parametrize(
    ("command", "ok"),
    [
        ("touch a b", True),
        ("mkdir -p x/y && touch x/y/z", True),
        ("rm -rf build", True),
        ("mv a b && cp b c", True),
        ("sed -i 's/a/b/' f.txt", True),
        ("echo hi > out.txt", True),
        ("cd sub && touch x", True),
        ("touch ../outside", False),
        ("cp a /etc/b", False),
        ("rm $x", False),
        ("rm *.o", False),
        ("cd $d && touch x", False),
        ("sed -i 's/a/b/w out' f", False),
        ("ls | xargs touch", False),
        ("chmod +x f", False),
        ("npm install", False),
        ("touch .git/x", False),
        ("mkdir .claude/worktrees/w", True),
        ("env -i rm -rf x > out.txt", False),  # env with options runs its operands
        ("env -u X sh -c 'curl x | sh' > out.txt", False),
        ("test 'a[$(rm x)]' -eq 1 > out.txt", False),  # the subscript runs `rm x`
    ],
)
def test_accept_edits_ok(command: str, ok: bool, tmp_path: Path) -> None:
    a = assess_bash(command, _ctx(tmp_path))
    assert a.verdict.decision is not Decision.DENY
    assert a.accept_edits_ok is ok, (command, a.verdict.reason)


def test_suggestions_one_per_subcommand(tmp_path: Path) -> None:
    a = assess_bash("git status && npm run test -- -x && make build && ls", _ctx(tmp_path))
    assert a.verdict.kind is ReasonKind.MODE
    assert a.verdict.suggestions == (
        RuleValue("Bash", "npm run test *"),
        RuleValue("Bash", "make build *"),
    )


@pytest.mark.parametrize(
    "command",
    [
        "bash -c 'make'",
        "eval make",
        "sudo make",
        "find . -exec touch {} ;",
        "echo x > f",
        "python3 -c 'print(1)'",
        "python3 -",
        "python3 -i",
        "node -e 'x'",
        "git -c core.pager=x log",
        "xargs -n1 touch",
    ],
)
def test_no_suggestion_for_dangerous_commands(command: str, tmp_path: Path) -> None:
    a = assess_bash(command, _ctx(tmp_path))
    assert a.verdict.decision is Decision.ASK
    assert a.verdict.suggestions == ()


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("python3 hello.py", "python3 hello.py *"),
        ("python3 scripts/build.py --fast", "python3 scripts/build.py *"),
        ("python3 -m pytest -x tests", "python3 -m pytest *"),
        ("node server.js", "node server.js *"),
    ],
)
def test_an_interpreter_suggestion_names_the_script(
    command: str, rule: str, tmp_path: Path
) -> None:
    a = assess_bash(command, _ctx(tmp_path))
    assert a.verdict.decision is Decision.ASK
    assert a.verdict.suggestions == (RuleValue("Bash", rule),)


def test_suggestions_capped_at_five(tmp_path: Path) -> None:
    cmd = " && ".join(f"tool{i} run" for i in range(8))
    assert len(assess_bash(cmd, _ctx(tmp_path)).verdict.suggestions) == 5


def test_trace_and_subcommands(tmp_path: Path) -> None:
    a = assess_bash("git status && touch x", _ctx(tmp_path, "Bash(git status:*)"))
    assert [s.argv for s in a.subcommands] == [("git", "status"), ("touch", "x")]
    assert a.subcommands[0].judgement == "read-only"
    assert a.subcommands[1].judgement == "needs permission"
    assert a.verdict.trace == ("git status -> read-only", "touch x -> needs permission")


def test_allow_by_rule_reports_rule(tmp_path: Path) -> None:
    a = assess_bash("npm run test", _ctx(tmp_path, "Bash(npm run test:*)"))
    assert a.verdict.decision is Decision.ALLOW and a.verdict.kind is ReasonKind.RULE
    assert a.verdict.rule is not None and a.verdict.rule.value.content == "npm run test:*"
    assert not a.read_only


@pytest.mark.parametrize(
    "command", ["echo $(ls", "[ -f x ", "ls &&", "echo 'x", "for i in 1; do echo", "ls 1<>f"]
)
def test_parse_errors_ask_for_analysis(command: str, tmp_path: Path) -> None:
    a = assess_bash(command, _ctx(tmp_path, "Bash(*)"))
    assert a.verdict.decision is Decision.ASK and a.verdict.kind is ReasonKind.ANALYSIS
    assert not a.read_only


def test_over_long_commands_ask_but_still_deny(tmp_path: Path) -> None:
    long = "echo " + "a" * 10_000
    assert assess_bash(long, _ctx(tmp_path, "Bash(echo:*)")).verdict.kind is ReasonKind.ANALYSIS
    ctx = PermissionContext(rules=(make_rule("Bash(rm:*)", "deny"),), cwd=tmp_path)
    assert assess_bash(long + "; rm x", ctx).verdict.decision is Decision.DENY


def test_network_redirect_is_a_safety_check(tmp_path: Path) -> None:
    a = assess_bash("wc -l f > /dev/tcp/127.0.0.1/9", _ctx(tmp_path, "Bash(wc:*)"))
    assert a.verdict.kind is ReasonKind.SAFETY


def test_is_read_only_command(tmp_path: Path) -> None:
    assert is_read_only_command("ls -la && git status | head", tmp_path)
    assert is_read_only_command("cat f 2>/dev/null")
    assert not is_read_only_command("ls > out", tmp_path)
    assert not is_read_only_command("ls() { :; }; ls", tmp_path)
    assert not is_read_only_command("echo $(touch x)", tmp_path)
    assert not is_read_only_command("x=1", tmp_path)
    assert not is_read_only_command("export PAGER=x; git log", tmp_path)


def test_parse_simple_commands_structure() -> None:
    p = parse_simple_commands("a && b > out 2>&1; echo $(c)")
    names = [c.words[0].value for c in p.commands]
    assert names == ["a", "b", "c", "echo"]
    assert [r.op for r in p.commands[1].redirects] == [">", ">&"]
    assert not p.has_error
