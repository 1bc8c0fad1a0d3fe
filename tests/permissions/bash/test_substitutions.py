"""What bash would run from text tree-sitter kept as one token, and what is evaluated as data."""

from __future__ import annotations

from pathlib import Path

import pytest

from permissions.bash import assess_bash
from permissions.bash.parse import parse_simple_commands
from permissions.bash.substitutions import every_body, find_substitutions
from permissions.rules import make_rule
from permissions.types import Decision, PermissionContext, RuleSource


def _programs(command: str) -> list[str]:
    return [c.words[0].shown for c in parse_simple_commands(command).commands if c.words]


def test_the_lexer_finds_every_kind_and_honours_escapes() -> None:
    found = find_substitutions("a$(b c)`d`<(e)>(f)$[1+$(g)]\\$(h)")
    assert [(f.kind, f.body) for f in found] == [
        ("$(", "b c"),
        ("`", "d"),
        ("<(", "e"),
        (">(", "f"),
        ("$[", "1+$(g)"),
    ]
    assert find_substitutions("<(e)", dquoted=True) == []
    # a `)` inside quotes does not end the body
    assert find_substitutions('$(echo ")"; rm x)')[0].body == 'echo ")"; rm x'
    assert every_body("'$(a $(b))'") == ["a $(b)", "b"]


@pytest.mark.parametrize(
    "command",
    [
        'echo "${HOME#$(rm -f v)}"',
        "echo ${HOME##$(rm -f v)}",
        "echo ${HOME%$(rm -f v)}",
        "echo ${HOME%%$(rm -f v)}",
        "echo ${HOME^^$(rm -f v)}",
        "echo ${HOME,,$(rm -f v)}",
        "echo ${HOME^$(rm -f v)}",
        "echo ${HOME,$(rm -f v)}",
        "echo \"${NOPE:-'$(rm -f v)'}\"",
        'cat <<< "${HOME#$(rm -f v)}"',
        "echo $(( '$(rm -f v)' ))",
        "echo ${a['$(rm -f v)']}",
    ],
)
def test_a_substitution_kept_as_a_token_is_judged_and_asks(command: str, tmp_path: Path) -> None:
    assert "rm" in _programs(command)
    assert parse_simple_commands(command).problems
    ctx = PermissionContext(cwd=tmp_path)
    assert assess_bash(command, ctx).verdict.decision is Decision.ASK
    deny = PermissionContext(cwd=tmp_path, rules=(make_rule("Bash(rm:*)", "deny", RuleSource.CLI),))
    assert assess_bash(command, deny).verdict.decision is Decision.DENY


@pytest.mark.parametrize(
    "command",
    ["echo '$(rm -f v)'", "echo ${HOME#/}", 'echo "\\$(rm)"', "cat <<'EOF'\n$(rm x)\nEOF"],
)
def test_text_bash_never_runs_stays_plain(command: str, tmp_path: Path) -> None:
    assert "rm" not in _programs(command)
    assert not parse_simple_commands(command).problems
    assert assess_bash(command, PermissionContext(cwd=tmp_path)).verdict.decision is Decision.ALLOW


@pytest.mark.parametrize(
    "command",
    [
        "[[ $(cat f) -eq 1 ]]",
        "[[ -v $(cat f) ]]",
        "echo $(( $(cat f) ))",
        "(( `cat f` ))",
        "echo ${a[$(cat f)]}",
        "echo ${HOME:$(cat f)}",
        "for x in *; do echo $((x)); done",
        "for x in *; do echo ${a[x]}; done",
        "for x in *; do echo ${!x}; done",
        "for x in *; do echo ${x@P}; done",
        "for x in $(cat f); do [[ $x -eq 1 ]]; done",
        "echo 'a[$(id)]' && echo $((_))",
        "for x in *; do echo ${a[${HOME@a}]}; done",
        "for vim in *; do echo $((EDITOR)); done",
        "echo $(( ${HOME:5:1} ))",
    ],
)
def test_data_evaluated_as_arithmetic_or_a_name_asks(command: str, tmp_path: Path) -> None:
    """A file's text or a file name like ``a[$(cmd)]`` runs cmd when bash evaluates it."""
    problems = parse_simple_commands(command).problems
    assert any("evaluated as" in p for p in problems), problems
    assert assess_bash(command, PermissionContext(cwd=tmp_path)).verdict.decision is Decision.ASK


@pytest.mark.parametrize(
    "command",
    [
        "echo $((HOME_N + 1))",
        "for x in a b; do echo $((x)); done",
        "[[ $N -eq 1 ]]",
        "echo ${a[0]}",
        "echo $(( ${#a[@]} - 1 ))",
        "echo ${x#$y}",
    ],
)
def test_arithmetic_of_the_environment_and_literals_stays_allowed(
    command: str, tmp_path: Path
) -> None:
    assert assess_bash(command, PermissionContext(cwd=tmp_path)).verdict.decision is Decision.ALLOW
