"""Differential testing of the bash analysis against bash itself.

A Hypothesis grammar composes shell words from bash's own forms (every parameter-expansion
operator, subscripts, offsets, indirection, arithmetic, command and process substitution,
backquotes, every quoting style, here-strings and here-documents) around two canaries:

* ``touch ../CANARY`` written into the command text: a deny rule ``Bash(touch:*)`` must catch
  it wherever it hides;
* data the command may read (the file ``f``, a file name ``*`` matches) holding
  ``a[$(mkdir CANARY2)]``: harmless as text, but bash runs it when the data is evaluated as
  arithmetic or as a name.

:func:`check` asks the permission engine, then runs the command with the real ``bash -c`` in a
throwaway folder (the canaries land beside it, outside the working directory, so even
acceptEdits must ask before making them) and returns what went wrong, if anything:

* a command the engine allowed without a prompt (default or acceptEdits mode) made a canary;
* a command that made the text canary was not denied under ``Bash(touch:*)``.

Used by ``test_differential.py`` (a short budget in the suite) and ``tests/fuzz/
bash_differential.py`` (the long run).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from permissions.engine import decide
from permissions.rules import make_rule
from permissions.types import (
    Decision,
    PermissionContext,
    PermissionMode,
    PermissionRequest,
    RuleSource,
    ToolKind,
)

__all__ = ["Outcome", "check", "commands", "words"]

TEXT_CANARY = "touch ../CANARY"
# no space in it, so word splitting keeps it one word: ${IFS%??} is a space when bash runs it
DATA = "a[$(mkdir${IFS%??}../CANARY2)]"
# the same as a file name (no slash in a name): its canary lands in the working directory
NAME = "a[$(mkdir${IFS%??}CANARY2)]"

_ATOMS = [
    "a",
    "'q'",
    '"d"',
    "$'\\x41'",
    "x\\ y",
    "$HOME",
    "${HOME}",
    "$NOPE",
    "${a[0]}",
    "*",
    "$(cat f)",
    "`cat f`",
    "$(<f)",
    "$_",
    "1",
    "''",
    "$x",
    "~",
    "\\$(x)",
    "$(ls)",
    '"$(cat f)"',
    '$"t"',
    "@(a|b)",
    "{a,b}",
]
_NAMES = ["HOME", "NOPE", "x", "a[1]", "a[@]", "1", "@", "_"]
# every operator of a parameter expansion that takes a word
_OPERATORS = [":-", ":=", ":+", ":?", "-", "=", "+", "?", "#", "##", "%", "%%", "/", "//"]
_OPERATORS += ["/#", "/%", "^", "^^", ",", ",,", ":", ": ", ":0:"]
_TRANSFORMS = ["@Q", "@E", "@P", "@A", "@a", "@U", "@L", "@K"]


def _substitutions(cmd: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    forms = [
        "$({})",
        "`{}`",
        "<({})",
        ">({})",
        "$( ({}) )",
        "$(({}))",
        "$({};)",
        "$(\n{}\n)",
        "$(true; {})",
        "$(echo x | {})",
    ]
    return st.builds(lambda f, c: f.format(c), st.sampled_from(forms), cmd)


def _extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    nested_cmd = st.one_of(st.just(TEXT_CANARY), inner.map(lambda w: f"echo {w}"))
    return st.one_of(
        _substitutions(nested_cmd),
        st.builds(
            lambda n, op, w: "${" + n + op + w + "}",
            st.sampled_from(_NAMES),
            st.sampled_from(_OPERATORS),
            inner,
        ),
        st.builds(
            lambda n, t: "${" + n + t + "}", st.sampled_from(_NAMES), st.sampled_from(_TRANSFORMS)
        ),
        inner.map(lambda w: "${a[" + w + "]}"),
        inner.map(lambda w: "${#a[" + w + "]}"),
        inner.map(lambda w: "${!a[" + w + "]}"),
        inner.map(lambda w: "$((" + w + "))"),
        inner.map(lambda w: "$((a[" + w + "]))"),
        inner.map(lambda w: "$[" + w + "]"),
        inner.map(lambda w: "$[1+a[" + w + "]]"),
        inner.map(lambda w: '"' + w + '"'),
        inner.map(lambda w: "'" + w + "'"),
        inner.map(lambda w: "$'" + w + "'"),
        inner.map(lambda w: "\\" + w),
        inner.map(lambda w: '$"' + w + '"'),
        inner.map(lambda w: '"${NOPE:-"' + w + '"}"'),
        inner.map(lambda w: "{a," + w + "}"),
        inner.map(lambda w: "~" + w),
        inner.map(lambda w: "@(" + w + ")"),
        inner.map(lambda w: "${HOME/[" + w + "]/x}"),
        st.builds(lambda a, b: a + b, inner, inner),
    )


def words() -> st.SearchStrategy[str]:
    """One shell word, nested up to a few levels."""
    base = st.one_of(st.sampled_from(_ATOMS), _substitutions(st.just(TEXT_CANARY)))
    return st.recursive(base, _extend, max_leaves=6)


_TEMPLATES = [
    "echo {w}",
    "ls {w}",
    "cat {w}",
    "printf %s {w}",
    "wc -l {w}",
    "grep -e {w} f",
    ": {w}",
    "true {w}",
    "echo {w} | cat",
    "echo a && echo {w}",
    "[[ {w} ]]",
    "[[ {w} == x ]]",
    "[[ {w} -eq 1 ]]",
    "[[ 1 -lt {w} ]]",
    "[[ -v {w} ]]",
    "[ {w} ]",
    "test {w} -eq 1",
    "(( {w} ))",
    "echo $(({w}))",
    "cat <<< {w}",
    "cat <<EOF\n{w}\nEOF",
    "cat <<'EOF'\n{w}\nEOF",
    'cat <<"EOF"\n{w}\nEOF',
    "case {w} in x) ;; esac",
    "case x in {w}) ;; esac",
    "for x in {w}; do echo $x; done",
    "for x in {w}; do echo $((x)); done",
    "for x in {w}; do echo ${{!x}}; done",
    "for x in {w}; do echo ${{x@P}}; done",
    "for x in {w}; do [[ $x -eq 1 ]]; done",
    "for x in *; do echo {w}; done",
    "echo {w} > /dev/null",
    "ls {w} 2>/dev/null",
    "x={w}",
    "echo ${{HOME#{w}}}",
    'echo "${{HOME%%{w}}}"',
    "echo a > {w}",
    "cat < {w}",
    "cat < <(echo {w})",
    "X={w} echo a",
    "[[ x =~ {w} ]]",
    "declare -p {w}",
    "echo {w} &",
    "if [[ -n {w} ]]; then echo a; fi",
    "while false; do echo {w}; done",
    "f() {{ echo {w}; }}",
    "{{ echo {w}; }}",
    "( echo {w} )",
    "echo {w} # $(touch ../CANARY)",
    "time echo {w}",
    "! echo {w}",
]


def commands() -> st.SearchStrategy[str]:
    """A command around one or two generated words."""
    one = st.builds(lambda t, w: t.format(w=w), st.sampled_from(_TEMPLATES), words())
    two = st.builds(
        lambda t, u, w, v: t.format(w=w) + " && " + u.format(w=v),
        st.sampled_from(_TEMPLATES),
        st.sampled_from(_TEMPLATES),
        words(),
        words(),
    )
    return st.one_of(one, one, one, two)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one command did and what the engine said of it."""

    command: str
    decisions: dict[str, Decision]
    made: tuple[str, ...]  # the canaries it created
    failure: str | None


def _world() -> tuple[Path, Path]:
    top = Path(tempfile.mkdtemp(prefix="nerve-diff-"))
    work = top / "work"
    work.mkdir()
    (work / "f").write_text(DATA + "\n", encoding="utf-8")
    (work / NAME).write_text("x\n", encoding="utf-8")
    (work / "d").mkdir()
    return top, work


def _decide(command: str, work: Path, mode: PermissionMode, deny: bool = False) -> Decision:
    rules = (make_rule("Bash(touch:*)", "deny", RuleSource.CLI),) if deny else ()
    ctx = PermissionContext(mode=mode, rules=rules, cwd=work, home=work.parent)
    request = PermissionRequest("Bash", {"command": command}, ToolKind.BASH, command=command)
    return decide(request, ctx).decision


def _run(command: str, work: Path) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work), "LC_ALL": "C"}
    proc = subprocess.Popen(
        ["bash", "-c", command],
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    # `>(...)` runs on after bash exits: wait for the whole process group to end
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.01)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def check(command: str) -> Outcome:
    """Judge ``command``, run it in a fresh folder, and say what went wrong (if anything)."""
    top, work = _world()
    try:
        decisions = {
            mode.value: _decide(command, work, mode)
            for mode in (PermissionMode.DEFAULT, PermissionMode.ACCEPT_EDITS)
        }
        decisions["deny-touch"] = _decide(command, work, PermissionMode.DEFAULT, deny=True)
        _run(command, work)
        made = tuple(c for c in ("CANARY", "CANARY2") if (top / c).exists() or (work / c).exists())
    finally:
        shutil.rmtree(top, ignore_errors=True)
    failure = None
    allowed = [m for m in ("default", "acceptEdits") if decisions[m] is Decision.ALLOW]
    if made and allowed:
        failure = f"allowed without a prompt in {allowed[0]} mode, and it made {made[0]}"
    elif "CANARY" in made and decisions["deny-touch"] is not Decision.DENY:
        failure = f"it ran touch, yet Bash(touch:*) gave {decisions['deny-touch'].name}"
    return Outcome(command, decisions, made, failure)
