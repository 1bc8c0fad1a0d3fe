"""YAML frontmatter of commands, skills, rules and agents, parsed with a real YAML library.

    ---
    description: Review a pull request
    argument-hint: [pr-number] [priority]
    allowed-tools: Bash(gh pr view:*), Read
    ---
    Body...

Only ``yaml.safe_load`` is used (no tags, no objects). Files written for Claude Code often hold
one-line values that are not valid YAML although every reader means them as text:
``argument-hint: [a] [b]`` (two flow sequences), ``description: Review: the PR`` (a colon),
``tools: *``. Claude Code accepts them, so when the block does not parse, each top-level
``key: value`` whose value does not parse on its own is read as a quoted string and the block
is parsed again. What still fails is broken (a bad indent, an unclosed quote, a tab) and is
reported with the file's own line number.
"""

from __future__ import annotations

import json
import re
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.records import datarecord

if TYPE_CHECKING:
    import yaml

__all__ = ["Frontmatter", "FrontmatterError", "as_text", "as_words", "parse_frontmatter"]

_KEY_LINE = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.-]*)[ \t]*:(?:[ \t]+(.*?))?[ \t]*$")


class FrontmatterError(ValueError):
    """Frontmatter that cannot be parsed; ``line`` is 1-based in the file."""

    def __init__(self, path: Path | None, line: int, message: str) -> None:
        self.path = path
        self.line = line
        self.message = message
        where = f"{path}:{line}" if path is not None else f"line {line}"
        super().__init__(f"{where}: {message}")


@datarecord(frozen=True, slots=True)
class Frontmatter:
    """The parsed fields (keys lower-cased) and the body after the closing ``---``."""

    fields: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    has_frontmatter: bool = False

    def get(self, *names: str) -> Any:
        """The first of ``names`` that is set (``allowed-tools`` / ``allowed_tools``)."""
        for name in names:
            if name in self.fields and self.fields[name] is not None:
                return self.fields[name]
        return None


def _yaml() -> Any:
    import yaml  # ~20 ms: only once some file has frontmatter

    return yaml


def _load(text: str) -> Any:
    return _yaml().safe_load(text)


def _parses(text: str) -> bool:
    try:
        _load(text)
    except _yaml().YAMLError:
        return False
    return True


def _lenient(lines: list[str]) -> list[str]:
    """Quote top-level one-line values that are not YAML on their own (module docstring).

    Continuation lines of such a value are folded into it and replaced by blank lines, so line
    numbers of a later error still match the file.
    """
    out = list(lines)
    i = 0
    while i < len(lines):
        m = _KEY_LINE.match(lines[i])
        if m is None or not m.group(2):
            i += 1
            continue
        value = m.group(2)
        end = i + 1
        while end < len(lines) and (not lines[end].strip() or lines[end][:1] in (" ", "\t")):
            end += 1
        while end > i + 1 and not lines[end - 1].strip():
            end -= 1
        if value[:1] in ("|", ">", '"', "'") or _parses("\n".join(lines[i:end])):
            i = end
            continue
        text = " ".join([value, *(line.strip() for line in lines[i + 1 : end])]).strip()
        out[i] = f"{m.group(1)}: {json.dumps(text, ensure_ascii=False)}"
        for j in range(i + 1, end):
            out[j] = ""
        i = end
    return out


def _error_line(exc: yaml.YAMLError, first_line: int) -> int:
    mark = getattr(exc, "problem_mark", None)
    context = str(getattr(exc, "context", None) or "")
    if mark is None or "quoted scalar" in context:
        # An unclosed quote is found at the end of the block; the quote's own line helps.
        mark = getattr(exc, "context_mark", None) or mark
    return first_line + (mark.line if mark is not None else 0)


def parse_frontmatter(text: str, path: Path | None = None) -> Frontmatter:
    """Split ``text`` into frontmatter fields and body.

    No opening ``---`` line: no frontmatter, the whole text is the body. An opening line without
    a closing one, YAML that does not parse, or a block that is not a mapping raise
    ``FrontmatterError`` naming the line.
    """
    lines = text.lstrip("\ufeff").split("\n")
    if not lines or lines[0].strip() != "---":
        return Frontmatter(body=text.lstrip("\ufeff").strip())
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), None)
    if end is None:
        raise FrontmatterError(path, 1, "frontmatter opened with --- is never closed")
    block = [line.rstrip("\r") for line in lines[1:end]]
    body = "\n".join(lines[end + 1 :]).strip()
    error = _yaml().YAMLError
    try:
        data = _load("\n".join(block))
    except error:
        try:
            data = _load("\n".join(_lenient(block)))
        except error as exc:
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise FrontmatterError(
                path, _error_line(exc, 2), f"invalid YAML frontmatter: {problem}"
            ) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FrontmatterError(
            path, 2, f"frontmatter must be a mapping of keys, not a {type(data).__name__}"
        )
    fields = {str(k).strip().lower(): v for k, v in data.items()}
    return Frontmatter(fields=fields, body=body, has_frontmatter=True)


def as_text(value: Any) -> str | None:
    """A field meant as text: strings stripped; ``[pr-number]`` (read by YAML as a list) back
    to ``[pr-number]``; numbers and booleans as written; anything else None."""
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return None


def as_words(value: Any) -> tuple[str, ...]:
    """A list field (``tools``, ``allowed-tools``, ``paths``) from a YAML list or a comma- (or
    space-) separated string; commas inside parentheses (``Bash(git add:*, x)``) do not split."""
    if value is None:
        return ()
    if isinstance(value, (list, tuple)):
        items = [str(v).strip() for v in value if isinstance(v, (str, int, float))]
        return tuple(i for i in items if i)
    if not isinstance(value, str):
        return ()
    text = value.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    by_space = "," not in text  # the Agent Skills spec writes `Bash(git:*) Read`
    parts: list[str] = []
    depth = 0
    current = ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        if depth == 0 and (ch == "," or (by_space and ch.isspace())):
            parts.append(current)
            current = ""
            continue
        current += ch
    parts.append(current)
    return tuple(p.strip().strip("'\"") for p in parts if p.strip().strip("'\""))
