"""tree-sitter-bash -> a flat list of simple commands, wherever they occur.

Every command that bash could run is extracted: list and pipeline members, subshells, brace
groups, if/while/for/case bodies, function bodies, and command or process substitutions found
anywhere (arguments, assignment values, ``${x:-$(...)}``, double quotes, here-strings, unquoted
heredoc bodies, redirect targets, ``[[ ]]``, arithmetic). Redirects are attached to the command
they apply to (tree-sitter hangs ``a && b > f``'s redirect on the list; bash applies it to ``b``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

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
from permissions.bash.substitutions import find_substitutions, has_trigger
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
# Where bash reads quotes as plain characters, as inside double quotes: `$(( '$(cmd)' ))`
# and `${a['$(cmd)']}` run cmd.
_QUOTE_LIKE = frozenset(
    {"string", "translated_string", "heredoc_body", "arithmetic_expansion", "subscript"}
    | {"c_style_for_statement"}
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAMING = frozenset({"variable_name", "special_variable_name", "word"})
# `${x:off:len}`: the operands after a bare `:` are arithmetic
_OFFSET = ":"


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
        self.tainted: set[str] = set(_DATA_VARIABLES)

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

    def audit(self, root: Any) -> None:
        """After the walk: every substitution in the tree is judged. One tree-sitter kept as a
        token (``${x#$(cmd)}``'s operand, a backquote in a heredoc) is parsed from its text;
        a ``$(...)``, ``<(...)`` or ``$[...]`` found that way, or a substitution node the
        walk never reached, is also a problem (the word around it was not modelled)."""
        stack: list[tuple[Any, bool]] = [(root, False)]
        while stack:
            n, dquoted = stack.pop()
            t = n.type
            if t == "comment":
                continue
            if t in _SUBSTITUTIONS and n.start_byte not in self.visited:
                self.problems.append(f"{self.text(n)[:40]!r} is nested where it was not expected")
                self.walk(n)
            if n.child_count == 0:
                if n.is_named:
                    self.hidden(n, dquoted)
                continue
            if t == "heredoc_redirect" and _quoted_heredoc(n, self.text):
                continue  # `<<'EOF'`: the body is plain text
            inner = (
                dquoted
                or t in _QUOTE_LIKE
                or (t == "compound_statement" and n.child(0).type == "((")
            )
            stack.extend((c, inner) for c in n.children)

    def hidden(self, leaf: Any, dquoted: bool) -> None:
        """The substitutions in the text of one token (see ``permissions.bash.substitutions``)."""
        if leaf.type in ("raw_string", "ansi_c_string") and not dquoted:
            return  # single quotes bash honours: nothing in them runs
        text = self.text(leaf)
        if not has_trigger(text):
            return
        pending = find_substitutions(text, dquoted=dquoted)
        while pending:
            found = pending.pop()
            if found.kind != "`":
                self.add_problem(f"{text[:40]!r} holds a substitution the analysis does not model")
            if found.kind == "$[":
                pending.extend(find_substitutions(found.body))
            else:
                self.nested_script(found.body)

    def add_problem(self, message: str) -> None:
        if message not in self.problems:
            self.problems.append(message)

    def taint(self, node: Any) -> str | None:
        """Why bash could find data (not the command's own text) in ``node`` where it
        evaluates it as arithmetic or as a name: ``a[$(cmd)]`` in the data runs ``cmd``."""
        stack = [node]
        while stack:
            n = stack.pop()
            t = n.type
            if t in _SUBSTITUTIONS:
                return "the output of a command"
            if n.child_count == 0 and n.is_named:
                text = self.text(n)
                if has_trigger(text):
                    return "a command substitution"
                # `$x`, `${x}` and a bare `x` in arithmetic all read the variable x
                for name in _IDENTIFIER.findall(text) if t in _NAMING else ():
                    if name in self.tainted:
                        return f"${name}"
                    bound = self.bound.get(name)
                    if bound is not None and (bound[1] or not test_operands_safe([bound[0]])):
                        return f"${name}"
            stack.extend(n.children)
        return None

    def evaluated(self, node: Any, what: str) -> None:
        why = self.taint(node)
        if why is not None:
            self.add_problem(f"{why} is evaluated as {what} (a[$(cmd)] in it would run cmd)")

    def arithmetic(self, node: Any) -> None:
        """``$((...))``, ``$[...]``, ``((...))`` and a C-style ``for``'s header."""
        for child in node.children:
            if child.is_named and child != node.child_by_field_name("body"):
                self.evaluated(child, "arithmetic")

    def arithmetic_tests(self, node: Any) -> None:
        stack = list(node.children)
        while stack:
            n = stack.pop()
            if n.type in ("binary_expression", "unary_expression") and any(
                c.type == "test_operator" and self.text(c) in _ARITHMETIC_TESTS for c in n.children
            ):
                self.evaluated(n, "arithmetic")
            elif n.is_named:
                stack.extend(n.children)

    def expansion(self, node: Any) -> None:
        """``${...}``: a subscript and an offset are arithmetic, ``${!v}`` takes ``$v`` as a
        name (subscript and all), ``${v@P}`` expands ``$v`` as a prompt (``$(...)`` runs)."""
        self.sub_walk(node)
        kids = node.children
        ops = [self.text(c) for c in kids if not c.is_named]
        for i, c in enumerate(kids):
            if c.type == "subscript":
                for part in c.children:
                    if part.is_named and part != c.children[0]:
                        self.evaluated(part, "arithmetic")
            elif c.is_named and i > 0 and kids[i - 1].type == _OFFSET:
                self.evaluated(c, "arithmetic")
        if "!" in ops[:2] or ("@" in ops and any(self.text(c) == "P" for c in kids)):
            name = next((c for c in kids if c.type == "variable_name"), None)
            if name is not None:
                self.evaluated(name, "a name")

    def walk(self, node: Any) -> None:
        t = node.type
        if t == "command":
            self.command(node)
        elif t == "redirected_statement":
            self.redirected(node)
        elif t == "variable_assignment":
            self.bare_assignments([node])
        elif t == "variable_assignments":
            self.bare_assignments([c for c in node.children if c.type == "variable_assignment"])
        elif t == "declaration_command" or t == "unset_command":
            self.declaration(node)
        elif t == "test_command":
            self.sub_walk(node)
            self.arithmetic_tests(node)
            self.emit(SimpleCommand(self.text(node), "test", self.test_words(node)))
        elif t == "command_substitution":
            self.visited.add(node.start_byte)
            self.sub_walk(node)
            self.escaped_backquotes(node)
        elif t == "process_substitution":
            self.visited.add(node.start_byte)
            self.sub_walk(node)
        elif t == "expansion":
            self.expansion(node)
        elif t in _ARITHMETIC or (t == "compound_statement" and node.child(0).type == "(("):
            self.sub_walk(node)
            self.arithmetic(node)
            # `(( 'a[$(cmd)]' ))`: a quoted operand is still evaluated, subscript and all
            words = self.test_words(node)
            if not test_operands_safe([w.value for w in words]):
                self.emit(SimpleCommand(self.text(node), "test", words))
        elif t == "function_definition":
            self.function(node)
        elif t == "for_statement":
            self.for_loop(node)
        elif t in _REDIRECT_TYPES:
            self.emit(SimpleCommand(self.text(node), "redirect", ()))
            idx = len(self.commands) - 1
            self.attach(self.redirect(node, idx), idx)
        elif t in _LEAF_WORDS:
            return
        elif t == "list":
            for child in flatten_chain(node):
                self.walk(child)
        elif t == "pipeline":
            self.pipeline(node)
        else:
            self.sub_walk(node)

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
                kids = child.children
                if kids:
                    first = kids[0]
                    if first.type == "word":
                        words.append(self.plain_word(first))
                    else:
                        words.append(self.word(first))
                        self.sub_walk(child)
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
            if not words or any(b[1] or not test_operands_safe([b[0]]) for b in words):
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
        t = node.type
        fd = None
        ops: list[str] = []
        target: Word | None = None
        nested: list[Any] = []
        out: list[Redirect] = []
        body: str | None = None
        quoted = False
        for child in node.children:
            ct = child.type
            if ct == "file_descriptor":
                fd = self.text(child)
            elif not child.is_named:
                ops.append(self.text(child))
            elif ct == "heredoc_start":
                start = self.text(child)
                quoted = any(q in start for q in "'\"\\")
            elif ct == "heredoc_body":
                body = self.text(child)
                if not quoted:
                    self.sub_walk(child)
            elif ct == "heredoc_end":
                continue
            elif ct == "file_redirect":
                out.extend(self.redirect(child, owner))
            elif t == "heredoc_redirect":
                nested.append(child)
            elif target is None:
                target = self.word(child)
                if ct not in _LEAF_WORDS:
                    self.walk(child)
            else:
                # `echo a > f b`: words after the target are arguments of the command
                if ct not in _LEAF_WORDS:
                    self.walk(child)
        op = "".join(ops)
        if t == "heredoc_redirect":
            # bash joins `\<newline>` lines before it looks for the delimiter; tree-sitter
            # may end (or start) the body elsewhere, so such a heredoc is not modelled
            self.error |= "\\\n" in self.text(node)
            before = len(self.commands)
            for n in nested:
                self.walk(n)
            # `cat <<EOF | sh`: the heredoc text reaches the pipeline's commands too
            for i in range(before, len(self.commands)):
                c = self.commands[i]
                self.commands[i] = with_fields(c, stdin_script=body)
            out.insert(0, Redirect(op or "<<", fd, None, body or "", quoted))
        elif t == "herestring_redirect" and target is not None:
            text = target.deny_value if target.deny_value is not None else target.shown
            out.insert(0, Redirect(op or "<<<", fd, target, text))
        else:
            out.insert(0, _new_tuple(Redirect, (op, fd, target, None, False)))
        return out


def _parse(command: str) -> ParsedScript:
    src = command.encode("utf-8", "surrogatepass")
    tree = get_parser().parse(src)
    root = tree.root_node
    walker = _Walker(src, command)
    walker.walk(root)
    if has_trigger(command):
        walker.audit(root)
    return ParsedScript(
        command,
        tuple(walker.commands),
        bool(root.has_error) or walker.error,
        frozenset(walker.functions),
        tuple(walker.vars.items()),
        tuple(walker.problems),
    )


def _quoted_heredoc(node: Any, text: Any) -> bool:
    start = next((c for c in node.children if c.type == "heredoc_start"), None)
    return start is not None and any(q in text(start) for q in "'\"\\")


@lru_cache(maxsize=512)
def parse_simple_commands(command: str) -> ParsedScript:
    """Parse ``command`` into its simple commands (cached: the tool asks more than once)."""
    return _parse(command)
