"""tree-sitter-bash -> a flat list of simple commands, wherever they occur.

Every command that bash could run is extracted: list and pipeline members, subshells, brace
groups, if/while/for/case bodies, function bodies, and command or process substitutions found
anywhere (arguments, assignment values, ``${x:-$(...)}``, double quotes, here-strings, unquoted
heredoc bodies, redirect targets, ``[[ ]]``, arithmetic). Redirects are attached to the command
they apply to (tree-sitter hangs ``a && b > f``'s redirect on the list; bash applies it to ``b``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from permissions.bash.audit import (
    audit_tree,
    check_arithmetic,
    check_arithmetic_tests,
    check_expansion,
    is_data,
)
from permissions.bash.loops import MAX_LOOP_WALKS, body_keeps, loop_words
from permissions.bash.script import (
    ParsedScript,
    Redirect,
    SimpleCommand,
    echoed_text,
    flatten_chain,
    get_parser,
    with_fields,
)
from permissions.bash.substitutions import has_trigger
from permissions.bash.validators import test_operands_safe
from permissions.bash.words import SPECIAL_CHARS_RE as _SPECIAL_RE
from permissions.bash.words import Word, backtick_bodies, eval_word, literal_word

__all__ = ["ParsedScript", "Redirect", "SimpleCommand", "get_parser", "parse_simple_commands"]

_new_tuple = tuple.__new__  # a NamedTuple without its Python-level constructor (a hot path)
_REDIRECT_TYPES = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_LEAF_WORDS = frozenset({"word", "raw_string", "number", "ansi_c_string", "comment"})
# Operand nodes of `[ ]`/`[[ ]]` taken whole as words (what is inside is one shell word).
_TEST_OPERANDS = frozenset(
    {"word", "raw_string", "string", "concatenation", "number", "ansi_c_string"}
    | {"simple_expansion", "expansion", "translated_string", "test_operator", "regex"}
    | {"command_substitution", "arithmetic_expansion", "extglob_pattern"}
)
_ARITHMETIC = frozenset({"arithmetic_expansion", "c_style_for_statement"})


class _Walker:
    def __init__(self, src: bytes, source: str | None = None) -> None:
        self.src = src
        # with an ASCII source, byte offsets are string offsets: slicing beats node.text
        self.source = source if source is not None and len(source) == len(src) else None
        self.commands: list[SimpleCommand] = []
        self.functions: set[str] = set()
        self.vars: dict[str, str] = {}
        self.bound: dict[str, tuple[str, bool, bool]] = {}  # loop variables known for allow
        self.loop_walks = 0  # bodies walked for bound loops (nested loops multiply)
        self.func_stack: list[str] = []
        self.error = False
        # what the analysis could not model although the command parsed (ask, never allow)
        self.problems: list[str] = []
        self.visited: set[int] = set()  # start bytes of the substitutions walked
        # loop variables whose values are data (file names, command output): bash evaluates a
        # value like `a[$(cmd)]` when it is used as arithmetic or as a name (`${!v}`)
        self.tainted: set[str] = set()
        self.loop_names: set[str] = set()  # every for loop's variable (`for HOME in ./d`)

    def text(self, node: Any) -> str:
        if self.source is not None:
            return self.source[node.start_byte : node.end_byte]
        return str(node.text.decode("utf-8", "replace"))

    def plain_word(self, node: Any) -> Word:
        """A ``word`` node: its text when nothing in it is special, else the full evaluation."""
        text = self.text(node)
        if _SPECIAL_RE.search(text) is None:
            return literal_word(text)
        return self.word(node)

    def word(self, node: Any) -> Word:
        return eval_word(node, self.src, self.vars, self.static_output, self.bound)

    def static_output(self, node: Any) -> str | None:
        """What ``$(echo rm)`` / a backquoted ``printf`` prints, when its words are static."""
        body = self.text(node)
        if body.startswith("$(") and body.endswith(")"):
            scripts = [body[2:-1]]
        else:
            scripts = backtick_bodies(body)
        if len(scripts) != 1:
            return None
        parsed = parse_simple_commands(scripts[0])
        if parsed.has_error or len(parsed.commands) != 1:
            return None
        out = echoed_text(parsed.commands[0])
        return None if out is None else out.rstrip("\n")

    def escaped_backquotes(self, node: Any) -> None:
        """Inside backquotes a backslash before a backquote, backslash or dollar is dropped
        before the body is parsed: escaped backquotes are a nested substitution."""
        body = self.text(node)
        if body.startswith("`") and "\\" in body:
            for inner in backtick_bodies(body):
                self.nested_script(inner)

    def nested_script(self, body: str) -> None:
        """Add the commands of a script bash would run from inside this one."""
        parsed = parse_simple_commands(body)
        self.error |= parsed.has_error
        for p in parsed.problems:
            self.add_problem(p)
        self.functions.update(parsed.functions)
        for c in parsed.commands:
            self.emit(c)

    def alone_on_line(self, node: Any) -> bool:
        line_start = self.src.rfind(b"\n", 0, node.start_byte) + 1
        line_end = self.src.find(b"\n", node.end_byte)
        before = self.src[line_start : node.start_byte]
        after = self.src[node.end_byte : len(self.src) if line_end < 0 else line_end]
        return not before.strip(b"\t") and not after

    def add_problem(self, message: str) -> None:
        if message not in self.problems:
            self.problems.append(message)

    def expansion(self, node: Any) -> None:
        self.sub_walk(node)
        check_expansion(self, node)

    def walk(self, node: Any) -> None:
        handler = _HANDLERS.get(node.type)
        if handler is None:
            self.sub_walk(node)
        else:
            handler(self, node)

    def leaf(self, node: Any) -> None:
        """A word that holds no command (nothing to walk)."""

    def chain(self, node: Any) -> None:
        """``a && b || c``: each member in order."""
        for child in flatten_chain(node):
            self.walk(child)

    def assignment_statement(self, node: Any) -> None:
        self.bare_assignments([node])

    def assignments_statement(self, node: Any) -> None:
        self.bare_assignments([c for c in node.children if c.type == "variable_assignment"])

    def test_command(self, node: Any) -> None:
        """``[ ]``/``[[ ]]``: a command of kind "test" (its operands judged as words)."""
        self.sub_walk(node)
        check_arithmetic_tests(self, node)
        self.emit(SimpleCommand(self.text(node), "test", self.test_words(node)))

    def command_substitution(self, node: Any) -> None:
        self.visited.add(node.start_byte)
        self.sub_walk(node)
        self.escaped_backquotes(node)

    def process_substitution(self, node: Any) -> None:
        self.visited.add(node.start_byte)
        self.sub_walk(node)

    def compound(self, node: Any) -> None:
        """``(( ... ))`` is arithmetic; any other compound statement is walked as it is."""
        if node.child(0).type == "((":
            self.arithmetic(node)
        else:
            self.sub_walk(node)

    def arithmetic(self, node: Any) -> None:
        self.sub_walk(node)
        check_arithmetic(self, node)
        # `(( 'a[$(cmd)]' ))`: a quoted operand is still evaluated, subscript and all
        words = self.test_words(node)
        if not test_operands_safe([w.value for w in words]):
            self.emit(SimpleCommand(self.text(node), "test", words))

    def bare_redirect(self, node: Any) -> None:
        """A redirect standing alone (``> f``): a command of kind "redirect" owning it."""
        self.emit(SimpleCommand(self.text(node), "redirect", ()))
        idx = len(self.commands) - 1
        self.attach(self.redirect(node, idx), idx)

    def pipeline(self, node: Any) -> None:
        fed: str | None = None
        for child in flatten_chain(node):
            start = len(self.commands)
            self.walk(child)
            if fed is not None and len(self.commands) > start:
                head = self.commands[start]
                if head.stdin_script is None:
                    self.commands[start] = with_fields(head, stdin_script=fed)
            fed = None
            if child.type == "command" and len(self.commands) == start + 1:
                fed = echoed_text(self.commands[start])

    def sub_walk(self, node: Any) -> None:
        for child in node.children:
            if child.is_named and child.type not in _LEAF_WORDS:
                self.walk(child)

    def test_words(self, node: Any) -> tuple[Word, ...]:
        """``[`` and the operands of a ``[ ]``/``[[ ]]`` expression, in source order."""
        words: list[Word] = [literal_word("[")]
        stack = list(reversed(node.children))
        while stack:
            n = stack.pop()
            if n.type in _TEST_OPERANDS:
                words.append(self.word(n))
            elif n.is_named:
                stack.extend(reversed(n.children))
        return tuple(words)

    def emit(self, cmd: SimpleCommand) -> None:
        if self.func_stack:
            cmd = with_fields(cmd, function=self.func_stack[-1])
        self.commands.append(cmd)

    def attach(self, redirects: list[Redirect], index: int | None = None) -> None:
        if not self.commands:
            self.commands.append(SimpleCommand("", "redirect", ()))
        i = len(self.commands) - 1 if index is None else index
        cmd = self.commands[i]
        body = next((r.heredoc_body for r in redirects if r.heredoc_body is not None), None)
        self.commands[i] = with_fields(
            cmd,
            redirects=cmd.redirects + tuple(redirects),
            stdin_script=cmd.stdin_script if body is None else body,
        )

    def command(self, node: Any) -> None:
        words: list[Word] = []
        assigns: list[tuple[str, Word]] = []
        redirect_nodes: list[Any] = []
        source = self.source
        for child in node.children:
            ct = child.type
            if ct == "word" and source is not None:
                # `plain_word` inlined: most words of most commands take this path
                text = source[child.start_byte : child.end_byte]
                if _SPECIAL_RE.search(text) is None:
                    words.append(_new_tuple(Word, (text, text, text, False, False)))
                else:
                    words.append(self.word(child))
            elif ct == "variable_assignment":
                assigns.append(self.assignment(child))
            elif ct == "command_name":
                self.command_name(child, words)
            elif ct in _REDIRECT_TYPES:
                redirect_nodes.append(child)
            elif ct == "word":
                words.append(self.plain_word(child))
            elif child.is_named and ct != "comment":
                words.append(self.word(child))
                if ct not in _LEAF_WORDS:
                    self.walk(child)
        fields = (self.text(node), "command", tuple(words), tuple(assigns), (), None, None)
        self.emit(_new_tuple(SimpleCommand, fields))
        idx = len(self.commands) - 1
        for r in redirect_nodes:
            self.attach(self.redirect(r, idx), idx)

    def command_name(self, node: Any, words: list[Word]) -> None:
        """Add the word of a ``command_name`` node (walking a substitution in it)."""
        kids = node.children
        if not kids:
            return
        first = kids[0]
        if first.type == "word":
            words.append(self.plain_word(first))
        else:
            words.append(self.word(first))
            self.sub_walk(node)

    def assignment(self, node: Any) -> tuple[str, Word]:
        kids = node.children
        name = self.text(kids[0]) if kids else ""
        value_nodes = [c for c in kids[1:] if c.type != "="]
        if not value_nodes:
            return name, literal_word("")
        vnode = value_nodes[0]
        if vnode.type not in _LEAF_WORDS:
            self.walk(vnode)
        if vnode.type == "array":
            return name, Word(self.text(vnode), None, None)
        return name, self.word(vnode)

    def bare_assignments(self, nodes: list[Any]) -> None:
        assigns = [self.assignment(n) for n in nodes]
        for name, w in assigns:
            if w.deny_value is not None and not w.glob:
                self.vars[name] = w.deny_value
            else:
                self.vars.pop(name, None)
        text = " ".join(self.text(n) for n in nodes)
        self.emit(SimpleCommand(text, "assignment", (), tuple(assigns)))

    def declaration(self, node: Any) -> None:
        words: list[Word] = []
        assigns: list[tuple[str, Word]] = []
        for child in node.children:
            if child.type == "variable_assignment":
                name, w = self.assignment(child)
                assigns.append((name, w))
                if w.deny_value is not None:
                    self.vars[name] = w.deny_value
                words.append(Word(self.text(child), None, None))
            elif not child.is_named:
                words.append(literal_word(self.text(child)))
            elif child.type != "comment":
                words.append(self.word(child))
                if child.type not in _LEAF_WORDS:
                    self.walk(child)
        kind = "unset" if node.type == "unset_command" else "declaration"
        self.emit(SimpleCommand(self.text(node), kind, tuple(words), tuple(assigns)))

    def for_loop(self, node: Any) -> None:
        """The body judged once per word, the variable bound to it (``permissions.bash.
        loops``); a loop that cannot be bound is walked as any other statement."""
        var = node.child_by_field_name("variable")
        body = node.child_by_field_name("body")
        name = self.text(var) if var is not None else ""
        self.loop_names.add(name)
        values = node.children_by_field_name("value")
        words = (
            loop_words(values, self.word, ifs_untouched=b"IFS" not in self.src)
            if var is not None and body is not None
            else []
        )
        if (
            not words
            or self.loop_walks + len(words) > MAX_LOOP_WALKS
            or not body_keeps(body, name, words, self.text, self.functions)
        ):
            if not words or any(is_data(b[0], b[1]) for b in words):
                self.tainted.add(name)  # file names or command output: data
            self.sub_walk(node)
            return
        self.loop_walks += len(words)
        before = (self.bound.get(name), self.vars.get(name))
        try:
            for binding in words:
                self.bound[name] = binding
                self.vars[name] = binding[0]
                self.walk(body)
        finally:
            for table, old in ((self.bound, before[0]), (self.vars, before[1])):
                if old is None:
                    table.pop(name, None)
                else:
                    table[name] = old  # type: ignore[assignment]

    def function(self, node: Any) -> None:
        name_node = node.child_by_field_name("name")
        name = self.text(name_node) if name_node is not None else ""
        self.functions.add(name)
        self.func_stack.append(name)
        try:
            for child in node.children:
                if child.is_named and child is not name_node and child.type != "word":
                    self.walk(child)
        finally:
            self.func_stack.pop()

    def redirected(self, node: Any) -> None:
        redirect_nodes = []
        start = len(self.commands)
        for child in node.children:
            if child.type in _REDIRECT_TYPES:
                redirect_nodes.append(child)
            elif child.is_named:
                self.walk(child)
        owner = len(self.commands) - 1 if len(self.commands) > start else None
        if owner is None:
            self.emit(SimpleCommand(self.text(node), "redirect", ()))
            owner = len(self.commands) - 1
        for r in redirect_nodes:
            self.attach(self.redirect(r, owner), owner)

    def redirect(self, node: Any, owner: int | None = None) -> list[Redirect]:
        """Build the Redirect(s) of one redirect node and walk the commands nested in it."""
        owner = len(self.commands) - 1 if owner is None else owner
        parts = _RedirectParts()
        for child in node.children:
            self.redirect_part(node.type, child, owner, parts)
        op = "".join(parts.ops)
        target = parts.target
        if node.type == "heredoc_redirect":
            head = self.heredoc(node, op, parts)
        elif node.type == "herestring_redirect" and target is not None:
            text = target.deny_value if target.deny_value is not None else target.shown
            head = Redirect(op or "<<<", parts.fd, target, text)
        else:
            head = _new_tuple(Redirect, (op, parts.fd, target, None, False))
        parts.out.insert(0, head)
        return parts.out

    def redirect_part(self, t: str, child: Any, owner: int, parts: _RedirectParts) -> None:
        """Take one child of a redirect node of type ``t`` into ``parts``."""
        ct = child.type
        if ct == "file_descriptor":
            parts.fd = self.text(child)
        elif not child.is_named:
            parts.ops.append(self.text(child))
        elif ct == "heredoc_start":
            start = self.text(child)
            parts.quoted = any(q in start for q in "'\"\\")
        elif ct == "heredoc_body":
            parts.body = self.text(child)
            if not parts.quoted:
                self.sub_walk(child)
        elif ct == "heredoc_end":
            # bash ends a heredoc only at a line that is the delimiter alone: on
            # `EOF && cmd` it reads on, and what tree-sitter took for commands is the body
            self.error |= not self.alone_on_line(child)
        elif ct == "file_redirect":
            parts.out.extend(self.redirect(child, owner))
        elif t == "heredoc_redirect":
            parts.nested.append(child)
        else:
            if parts.target is None:
                parts.target = self.word(child)
            # else `echo a > f b`: words after the target are arguments of the command
            if ct not in _LEAF_WORDS:
                self.walk(child)

    def heredoc(self, node: Any, op: str, parts: _RedirectParts) -> Redirect:
        """The heredoc's Redirect, after walking the commands after its start on the line."""
        # bash joins `\<newline>` lines before it looks for the delimiter; tree-sitter
        # may end (or start) the body elsewhere, so such a heredoc is not modelled
        self.error |= "\\\n" in self.text(node)
        before = len(self.commands)
        for n in parts.nested:
            self.walk(n)
        # `cat <<EOF | sh`: the heredoc text reaches the pipeline's commands too
        for i in range(before, len(self.commands)):
            c = self.commands[i]
            self.commands[i] = with_fields(c, stdin_script=parts.body)
        return Redirect(op or "<<", parts.fd, None, parts.body or "", parts.quoted)


@dataclass(slots=True)
class _RedirectParts:
    """What the children of one redirect node say: its descriptor, operator, target (the
    first word), heredoc body, the nodes after a heredoc's start, nested file redirects."""

    fd: str | None = None
    ops: list[str] = field(default_factory=list)
    target: Word | None = None
    body: str | None = None
    quoted: bool = False
    nested: list[Any] = field(default_factory=list)
    out: list[Redirect] = field(default_factory=list)


_HANDLERS: dict[str, Callable[[_Walker, Any], None]] = {
    "command": _Walker.command,
    "redirected_statement": _Walker.redirected,
    "variable_assignment": _Walker.assignment_statement,
    "variable_assignments": _Walker.assignments_statement,
    "declaration_command": _Walker.declaration,
    "unset_command": _Walker.declaration,
    "test_command": _Walker.test_command,
    "command_substitution": _Walker.command_substitution,
    "process_substitution": _Walker.process_substitution,
    "expansion": _Walker.expansion,
    "compound_statement": _Walker.compound,
    "function_definition": _Walker.function,
    "for_statement": _Walker.for_loop,
    "list": _Walker.chain,
    "pipeline": _Walker.pipeline,
    **dict.fromkeys(_ARITHMETIC, _Walker.arithmetic),
    **dict.fromkeys(_REDIRECT_TYPES, _Walker.bare_redirect),
    **dict.fromkeys(_LEAF_WORDS, _Walker.leaf),
}


def _parse(command: str) -> ParsedScript:
    src = command.encode("utf-8", "surrogatepass")
    tree = get_parser().parse(src)
    root = tree.root_node
    walker = _Walker(src, command)
    walker.walk(root)
    if has_trigger(command):
        audit_tree(walker, root)
    return ParsedScript(
        command,
        tuple(walker.commands),
        bool(root.has_error) or walker.error,
        frozenset(walker.functions),
        tuple(walker.vars.items()),
        tuple(walker.problems),
        frozenset(walker.loop_names),
    )


@lru_cache(maxsize=512)
def parse_simple_commands(command: str) -> ParsedScript:
    """Parse ``command`` into its simple commands (cached: the tool asks more than once)."""
    return _parse(command)
