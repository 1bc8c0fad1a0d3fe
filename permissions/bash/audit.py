"""What the walk of a tree cannot see by itself: substitutions hidden in tokens, and data bash
evaluates as code.

1. **Hidden substitutions.** tree-sitter-bash keeps some operands as one token (``${x#$(cmd)}``'s
   ``regex``, a single-quoted operand inside a double-quoted ``${...}``, a backquote in a
   heredoc). After the walk, :func:`audit_tree` looks at every token of the tree; what bash
   would run in one (``permissions.bash.substitutions``) is parsed as a script of its own, so
   deny rules and the read-only analysis judge it, and the command asks: the word around it was
   not modelled. A substitution node the walk never reached is walked then, and asks too.
2. **Data evaluated as code.** Bash evaluates arithmetic (``$((x))``, ``$[x]``, ``((x))``,
   subscripts, ``${v:off:len}``, ``[[ x -eq y ]]``) and names (``${!v}``, ``[[ -v x ]]``,
   ``${v@P}``) from their values, and a value ``a[$(cmd)]`` runs ``cmd``. When that value can be
   data — a command's output, a loop variable over file names or output, ``$_``, the command
   line itself — the command asks (``check_*``). The environment's variables are the user's and
   stay trusted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Protocol

from permissions.bash.substitutions import find_substitutions, has_trigger, hidden_expansion

__all__ = [
    "audit_tree",
    "check_arithmetic",
    "check_arithmetic_tests",
    "check_expansion",
    "is_data",
]

_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
# Variables bash fills with text the model wrote or could have written (the last argument, the
# command line itself, a regex match, directory names): never evaluated as arithmetic or names.
_DATA_VARIABLES = frozenset(
    {"_", "BASH_EXECUTION_STRING", "BASH_COMMAND", "BASH_REMATCH", "BASH_ARGV", "BASH_SOURCE"}
    | {"REPLY", "MAPFILE", "OPTARG", "READLINE_LINE", "PWD", "OLDPWD", "DIRSTACK", "FUNCNAME"}
    | {"COMP_LINE", "COMP_WORDS"}
)
# `[[ X -eq Y ]]` evaluates both sides as arithmetic, `[[ -v X ]]` X as a name (subscript
# included); `[ ]` and `test` only compare integers.
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v", "-R"})
# Where bash reads quotes as plain characters, as inside double quotes: `$(( '$(cmd)' ))`,
# `${a['$(cmd)']}` and `$'$(cmd)'` in a heredoc run cmd.
_QUOTE_LIKE = frozenset(
    {"string", "translated_string", "heredoc_body", "arithmetic_expansion", "subscript"}
    | {"c_style_for_statement"}
)
# a literal value bash would expand again where it evaluates it (a subscript, `${v@P}`)
_SUSPECT = re.compile(r"[$`\[]")
_PLAIN_PROCSUB = frozenset({"string", "translated_string", "heredoc_body"})
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAMING = frozenset({"variable_name", "special_variable_name", "word"})
_OFFSET = ":"  # `${x:off:len}`: the operands after a bare `:` are arithmetic


class Walk(Protocol):
    """The parts of ``permissions.bash.parse``'s walker the audit uses."""

    @property
    def visited(self) -> set[int]:
        """Start bytes of the substitution nodes walked."""

    @property
    def tainted(self) -> set[str]:
        """The script's loop variables whose value is data (bash's own data-carrying
        variables are _DATA_VARIABLES)."""

    @property
    def bound(self) -> Mapping[str, tuple[str, bool, bool]]:
        """Loop variables bound to literal words or globs."""

    def text(self, node: Any) -> str: ...
    def walk(self, node: Any) -> None: ...
    def nested_script(self, body: str) -> None: ...
    def add_problem(self, message: str) -> None: ...


def audit_tree(w: Walk, root: Any) -> None:
    """After the walk: every substitution anywhere in the tree is judged (see the module)."""
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        n, dquoted = stack.pop()
        t = n.type
        if t == "comment":
            continue
        if t in _SUBSTITUTIONS and n.start_byte not in w.visited:
            w.add_problem(f"{w.text(n)[:40]!r} is nested where the analysis did not expect it")
            w.walk(n)
        if n.child_count == 0:
            if n.is_named:
                _hidden(w, n, dquoted)
            continue
        if t == "heredoc_redirect" and _quoted_heredoc(w, n):
            continue  # `<<'EOF'`: the body is plain text
        inner = dquoted or t in _QUOTE_LIKE or (t == "compound_statement" and _is_arithmetic(n))
        stack.extend((c, inner) for c in n.children)


def _is_arithmetic(node: Any) -> bool:
    return bool(node.child_count) and node.child(0).type == "(("


def _quoted_heredoc(w: Walk, node: Any) -> bool:
    start = next((c for c in node.children if c.type == "heredoc_start"), None)
    return start is not None and any(q in w.text(start) for q in "'\"\\")


def _hidden(w: Walk, leaf: Any, dquoted: bool) -> None:
    """The substitutions in the text of one token."""
    if leaf.type in ("raw_string", "ansi_c_string") and not dquoted:
        return  # single quotes bash honours: nothing in them runs
    text = w.text(leaf)
    if "$" not in text and not has_trigger(text):
        return
    if hidden_expansion(text):
        # `${HOME%%${a[x]}}`: a subscript (arithmetic) tree-sitter did not see
        w.add_problem(f"{text[:40]!r} holds an expansion the analysis does not model")
    # `<(` is plain text in a double-quoted string or a heredoc, yet runs in an operand of a
    # `${...}` even inside double quotes (`"${HOME%%\@(<(cmd))}"`)
    parent = leaf.parent
    plain_procsub = parent is not None and parent.type in _PLAIN_PROCSUB
    pending = find_substitutions(text, dquoted=plain_procsub)
    # backquotes in a heredoc's text are tree-sitter's habit: parsed here, and modelled
    habit = leaf.type in ("heredoc_content", "heredoc_body")
    while pending:
        found = pending.pop()
        if found.kind != "`" or not habit:
            w.add_problem(f"{text[:40]!r} holds a substitution the analysis does not model")
        if found.kind == "$[":
            pending.extend(find_substitutions(found.body))
        else:
            w.nested_script(found.body)


def is_data(value: str, glob: bool) -> bool:
    """Is a loop word's value data where bash evaluates it: file names (a glob), or a literal
    bash would expand again in a subscript or a prompt (``$``, a backquote, ``[``)."""
    return glob or _SUSPECT.search(value) is not None


def _data_in_scope(w: Walk) -> str | None:
    """A variable of the script that holds data (a loop over file names or output), if any."""
    if w.tainted:
        return min(w.tainted)  # any of them: sorted, so the message is stable
    return next((n for n, (v, glob, _) in w.bound.items() if is_data(v, glob)), None)


def _computed(node: Any) -> bool:
    """A ``${...}`` whose value is computed (a substring, a replacement, a transform, an
    indirection, a default): any text, so any name. ``${x}``, ``${a[i]}`` and the lengths
    ``${#x}``/``${#a[@]}`` are not."""
    kinds = [c.type for c in node.children]
    core = kinds[1:-1]
    if core[:1] == ["#"]:
        core = core[1:]
    return core not in (["variable_name"], ["special_variable_name"], ["subscript"])


def _taint(w: Walk, node: Any) -> str | None:
    """Why bash could find data (not the command's own text) in ``node``. Bash evaluates a
    variable's value as arithmetic again, so once a variable of the script holds data, any
    variable read here could lead to it (``EDITOR=vim``: ``$((EDITOR))`` reads ``$vim``)."""
    data = _data_in_scope(w)
    stack = [node]
    while stack:
        n = stack.pop()
        t = n.type
        if t in _SUBSTITUTIONS:
            return "the output of a command"
        if t == "expansion" and _computed(n):
            return f"the computed value {w.text(n)[:30]!r}"
        if n.child_count == 0 and n.is_named:
            text = w.text(n)
            if has_trigger(text):
                return "a command substitution"
            # `$x`, `${x}` and a bare `x` in arithmetic all read the variable x
            for name in _IDENTIFIER.findall(text) if t in _NAMING else ():
                if name in w.tainted or name in _DATA_VARIABLES:
                    return f"${name}"
                if data is not None:
                    return f"${name}, which may lead to ${data}"
        stack.extend(n.children)
    return None


def _evaluated(w: Walk, node: Any, what: str) -> None:
    why = _taint(w, node)
    if why is not None:
        w.add_problem(f"{why} is evaluated as {what} (a[$(cmd)] in it would run cmd)")


def check_arithmetic(w: Walk, node: Any) -> None:
    """``$((...))``, ``$[...]``, ``((...))`` and a C-style ``for``'s header."""
    body = node.child_by_field_name("body")
    for child in node.children:
        if child.is_named and child != body:
            _evaluated(w, child, "arithmetic")


def check_arithmetic_tests(w: Walk, node: Any) -> None:
    """The operands of ``[[ ]]``'s arithmetic comparisons and ``-v``/``-R``."""
    stack = list(node.children)
    while stack:
        n = stack.pop()
        if n.type in ("binary_expression", "unary_expression") and any(
            c.type == "test_operator" and w.text(c) in _ARITHMETIC_TESTS for c in n.children
        ):
            _evaluated(w, n, "arithmetic")
        elif n.is_named:
            stack.extend(n.children)


def check_expansion(w: Walk, node: Any) -> None:
    """``${...}``: a subscript and an offset are arithmetic, ``${!v}`` takes ``$v`` as a name
    (subscript and all), ``${v@P}`` expands ``$v`` as a prompt (where ``$(...)`` runs)."""
    kids = node.children
    for i, c in enumerate(kids):
        if c.type == "subscript":
            for part in c.children[1:]:
                if part.is_named:
                    _evaluated(w, part, "arithmetic")
        elif c.is_named and i > 0 and kids[i - 1].type == _OFFSET:
            _evaluated(w, c, "arithmetic")
    ops = [w.text(c) for c in kids if not c.is_named]
    if "!" in ops[:2] or ("@" in ops and any(w.text(c) == "P" for c in kids)):
        name = next((c for c in kids if c.type == "variable_name"), None)
        if name is not None:
            _evaluated(w, name, "a name")
