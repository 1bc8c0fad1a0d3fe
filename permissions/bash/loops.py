"""``for NAME in WORDS; do BODY; done`` over literal words or globs: the values ``NAME`` takes.

Bash gives the variable each word in turn (each file a glob matches, or the glob itself when
none does), so ``for f in src/*.py; do wc -l "$f"; done`` runs exactly the commands
``wc -l <one file of src/*.py>``. The walker judges the body once per word with the variable
bound to it (``permissions.bash.words.Bound``); a glob stays a glob, so ``"$f"`` reads as "a
path ``src/*.py`` matches", as ``wc -l src/*.py`` does.

Binding is refused (the variable stays unknown and the command asks, as before) whenever the
body could give the variable another value than the loop does, or the words are not plain:

* a word with an expansion, a command substitution or a brace, a ``~`` word, an empty word,
  no words at all (``for f; do`` iterates over the arguments), more than ``MAX_WORDS`` words,
  or more than ``MAX_LOOP_WALKS`` bodies to judge in one script (nested loops multiply);
* the name used in any way but ``$NAME`` / ``${NAME}``: assigned (also ``${NAME:=x}``, in
  arithmetic, as a nested loop's variable) or named as a word (``read NAME``, ``unset NAME``,
  ``printf -v NAME``, ``declare -n ref=NAME``...);
* anything in the body that can set variables by other means: assignments and declarations,
  function definitions, a call of a function the script defined, a command whose name is
  neither a literal word nor the loop variable, or a builtin that assigns or runs code
  (``read``, ``mapfile``, ``eval``, ``source``, ``printf -v``, ...).

Used unquoted, ``$NAME`` is split and globbed again by bash: it is known only when its value
is one non-empty word without pattern characters (``permissions.bash.words``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from permissions.bash.words import Word

__all__ = ["MAX_LOOP_WALKS", "MAX_WORDS", "body_keeps", "loop_words"]

MAX_WORDS = 32
MAX_LOOP_WALKS = 256  # bodies judged per script, nested loops included (they multiply)
# Builtins that can assign a variable (by name, nameref or code) or run code in this shell.
_REBINDERS = frozenset(
    {
        "read",
        "readarray",
        "mapfile",
        "declare",
        "typeset",
        "local",
        "export",
        "readonly",
        "getopts",
        "let",
        "eval",
        "source",
        ".",
        "unset",
        "builtin",
        "command",
        "enable",
        "trap",
        "alias",
        "exec",
        "coproc",
        "wait",
    }
)
_ASSIGNING_NODES = frozenset(
    {
        "variable_assignment",
        "variable_assignments",
        "declaration_command",
        "unset_command",
        "function_definition",
    }
)
_TEXT_LEAVES = frozenset({"word", "string_content", "raw_string", "ansi_c_string"})
_SPLIT_OR_GLOB = frozenset(" \t\n*?[")


def loop_words(
    values: list[Any], evaluate: Callable[[Any], Word], *, ifs_untouched: bool
) -> list[tuple[str, bool, bool]]:
    """The (value, is_glob, same_unquoted) of each of a loop's words, or [] when they are not
    all plain. ``same_unquoted``: an unquoted ``$NAME`` is this one word too (bash splits it
    at ``IFS`` and globs it again: so only a value without blanks and pattern characters,
    and only in a script that leaves ``IFS`` alone)."""
    if not values or len(values) > MAX_WORDS:
        return []
    out: list[tuple[str, bool, bool]] = []
    for node in values:
        w = evaluate(node)
        # `~/x` is the home directory's x to bash; an empty word could be assigned over
        # (`${f:=...}`) and vanishes unquoted: neither is bound.
        if w.value is None or w.brace or not w.value or w.text.startswith("~"):
            return []
        same = ifs_untouched and not w.glob and not _SPLIT_OR_GLOB & set(w.value)
        if (w.value, w.glob, same) not in out:
            out.append((w.value, w.glob, same))
    return out


def body_keeps(
    body: Any,
    name: str,
    words: list[tuple[str, bool, bool]],
    text: Callable[[Any], str],
    functions: Iterable[str],
) -> bool:
    """True when nothing in ``body`` can give ``name`` a value the loop did not."""
    mention = re.compile(rf"(?<![\w$]){re.escape(name)}(?!\w)")
    defined = set(functions)
    # `for c in ls wc; do $c x; done`: the command names are the words themselves
    as_names = None if any(glob for _, glob, _ in words) else {value for value, _, _ in words}
    stack = [body]
    while stack:
        node = stack.pop()
        t = node.type
        if t in _ASSIGNING_NODES:
            return False
        if t == "variable_name" and text(node) == name and not _plain_expansion(node.parent):
            return False
        if t in _TEXT_LEAVES and mention.search(text(node)):
            return False
        if t == "command" and not _harmless_command(node, text, defined, name, as_names):
            return False
        if t in _TEXT_LEAVES:
            continue  # a leaf of text: nothing nested to look at
        stack.extend(node.children)
    return True


def _plain_expansion(parent: Any) -> bool:
    """``$NAME`` or ``${NAME}``: a read of the variable, nothing else."""
    if parent is None:
        return False
    kinds = [c.type for c in parent.children]
    if parent.type == "simple_expansion":
        return kinds == ["$", "variable_name"]
    return parent.type == "expansion" and kinds == ["${", "variable_name", "}"]


def _harmless_command(
    node: Any,
    text: Callable[[Any], str],
    defined: set[str],
    var: str,
    var_values: set[str] | None,
) -> bool:
    name_node = node.child_by_field_name("name")
    if name_node is None or name_node.child_count != 1:
        return False
    first = name_node.children[0]
    if first.type == "word":
        names = {text(name_node)}
    elif var_values is not None and text(first) in (f"${var}", f"${{{var}}}"):
        names = var_values
    else:
        return False  # `$cmd ...`: could be `read`
    if names & _REBINDERS or names & defined:
        return False
    if "printf" not in names:
        return True
    # `printf -v NAME`, also as `printf "$opt" ...`
    args = node.children_by_field_name("argument")
    head = text(args[0]) if args else ""
    return not ("$" in head or "`" in head or head.lstrip("'\"").startswith("-"))
