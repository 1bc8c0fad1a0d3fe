"""The bash analysis against bash itself: no command allowed without a prompt runs a canary,
and a deny rule holds wherever the command hides the denied program (short budget here; the
long run is ``tests/fuzz/bash_differential.py``)."""

from __future__ import annotations

import shutil

import pytest
from hypothesis import HealthCheck, given, settings

from tests.permissions.bash.differential import check, commands

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")

# Found by the red team and by the long run: each one made a canary with no prompt before.
KNOWN = [
    'echo "${HOME#$(touch ../CANARY)}"',
    "echo ${HOME##$(touch ../CANARY)}",
    "echo ${HOME%$(touch ../CANARY)}",
    "echo ${HOME%%$(touch ../CANARY)}",
    "echo ${HOME^^$(touch ../CANARY)}",
    "echo ${HOME,,$(touch ../CANARY)}",
    "echo ${HOME^$(touch ../CANARY)}",
    "echo ${HOME,$(touch ../CANARY)}",
    "echo \"${NOPE:-'$(touch ../CANARY)'}\"",
    'cat <<< "${HOME#$(touch ../CANARY)}"',
    "[[ $(cat f) -eq 1 ]]",
    "[[ -v $(cat f) ]]",
    "echo $(( $(cat f) ))",
    "echo $[ $(cat f) ]",
    "echo $(( `cat f` ))",
    "(( $(cat f) ))",
    "echo ${a[$(cat f)]}",
    "echo ${HOME:$(cat f)}",
    "echo ${HOME: $(cat f)}",
    "for x in *; do echo $((x)); done",
    "for x in *; do [[ $x -eq 1 ]]; done",
    "for x in *; do echo ${!x}; done",
    "for x in *; do echo ${a[x]}; done",
    "for x in $(cat f); do echo $((x)); done",
    "echo 'a[$(touch ../CANARY)]' && echo $((_))",
    # found by the long run: a computed name, and an expansion hidden in an operand
    "for x in *; do echo ${a[${HOME@a}]}; done",
    'echo "${HOME%%${a[{a,${!a[`cat f`]}}]}}"',
    "(( $['${!a[$(touch ../CANARY)]}'] ))",
    "cat <<EOF\n$(($'$(\ntouch ../CANARY\n)'))\nEOF",
    "[[ x =~ >(touch ../CANARY) ]]",
    'echo "${HOME%%\\@(<(touch ../CANARY))}"',
    # `EOF && ...` does not end a heredoc in bash: the rest is its (expanded) body
    "cat <<EOF\nx\nEOF && echo $'${a[@]:?`touch ../CANARY`}'",
    'cat <<EOF\nx\nEOF && echo \'$["${NOPE:-"$(cat f)"}"]\'',
    "for x in $'@($(\ntouch ../CANARY\n))'; do echo ${x@P}; done",
]


@pytest.mark.parametrize("command", KNOWN)
def test_known_escapes_are_caught(command: str) -> None:
    outcome = check(command)
    assert outcome.made, f"the reproduction no longer makes its canary: {command!r}"
    assert outcome.failure is None, outcome


@settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(commands())
def test_no_allowed_command_runs_a_canary(command: str) -> None:
    outcome = check(command)
    assert outcome.failure is None, outcome
