"""Rules files: ``.claude/rules/**/*.md`` (and ``.nerve/rules``), user and project.

A rule without ``paths`` frontmatter is standing instructions, loaded with the memory files
(``agent_cli.customize.memory``). A rule with ``paths`` applies only to matching files:

    ---
    paths:
      - "src/api/**/*.ts"
      - "**/*.{test,spec}.ts"
    ---
    API handlers validate input with zod.

It is not in the system prompt; ``PathRules`` attaches it (once per agent) as a system reminder
when the model reads a matching file (the Read tool asks ``tools.file_context``). Globs are
relative to the directory holding the ``.claude`` folder (the project root for user rules):
``*`` stays in one segment, ``**`` spans directories, ``{a,b}`` lists alternatives, and a
pattern without ``/`` matches a file name at any depth.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Collection
from functools import lru_cache
from pathlib import Path

from agent_cli.customize.files import iter_markdown, read_user_file
from agent_cli.customize.frontmatter import FrontmatterError, as_words, parse_frontmatter
from agent_cli.customize.locations import customization_folders
from config import find_project_root
from tools.records import datarecord

__all__ = ["PathRules", "RuleFile", "glob_to_regex", "load_rules"]


@datarecord(frozen=True, slots=True)
class RuleFile:
    """One rules file: its body, and the globs (empty: always applies) relative to ``base``."""

    path: Path
    content: str
    level: str  # "user" | "project"
    paths: tuple[str, ...] = ()
    base: Path = Path(".")

    def matches(self, file: Path) -> bool:
        """Whether ``file`` (absolute) falls under one of the rule's globs."""
        try:
            rel = file.relative_to(self.base).as_posix()
        except ValueError:
            return False
        return any(glob_to_regex(p).fullmatch(rel) for p in self.paths)


def _expand_braces(pattern: str) -> list[str]:
    m = re.search(r"\{([^{}]*)\}", pattern)
    if m is None:
        return [pattern]
    head, tail = pattern[: m.start()], pattern[m.end() :]
    return [x for alt in m.group(1).split(",") for x in _expand_braces(head + alt + tail)]


def _one_glob(pattern: str) -> str:
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


@lru_cache(maxsize=256)
def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """A ``paths`` glob as a regex over a ``/``-separated relative path (module docstring)."""
    parts = []
    for alt in _expand_braces(pattern.strip()):
        alt = alt.removeprefix("./")
        anchored = "/" in alt.rstrip("/")
        alt = alt.lstrip("/")
        if alt.endswith("/"):
            alt += "**"
        body = _one_glob(alt)
        parts.append(body if anchored else f"(?:.*/)?{body}")
    return re.compile("|".join(f"(?:{p})" for p in parts) or "(?!)")


def load_rules(
    cwd: Path, home: Path | None = None, *, sources: Collection[str] | None = None
) -> tuple[list[RuleFile], list[str]]:
    """Every rules file for ``cwd``: user ones first, then the project's from its root down
    (only the levels in ``sources`` when given: ``--setting-sources``).

    A file that cannot be read or whose frontmatter is broken is skipped with a warning.
    """
    rules: list[RuleFile] = []
    warnings: list[str] = []
    seen: set[Path] = set()
    root = find_project_root(cwd)
    for folder in customization_folders("rules", cwd, home, sources=sources):
        base = root if folder.level == "user" else folder.base
        for path in iter_markdown(folder.path):
            try:
                real = path.resolve()
                if real in seen:
                    continue
                seen.add(real)
                text, truncated = read_user_file(path)
                front = parse_frontmatter(text, path)
            except FrontmatterError as exc:
                warnings.append(f"skipped rules file {exc}")
                continue
            except OSError as exc:
                warnings.append(f"skipped rules file {path}: {exc.strerror or exc}")
                continue
            body = front.body + ("\n[... rules file truncated ...]" if truncated else "")
            globs = as_words(front.get("paths", "globs"))
            rules.append(RuleFile(path, body, folder.level, globs, base))
    return rules, warnings


class PathRules:
    """The ``tools.file_context`` provider for path-scoped rules: the rules a read file
    matches, each given once to each agent (the main conversation, every sub-agent)."""

    def __init__(self, rules: list[RuleFile]) -> None:
        self.rules = [r for r in rules if r.paths]
        self._given: set[tuple[str | None, Path]] = set()
        self._lock = threading.Lock()

    def on_read(self, path: Path, agent_id: str | None) -> list[str]:
        out = []
        for rule in self.rules:
            if not rule.matches(path):
                continue
            with self._lock:
                key = (agent_id, rule.path)
                if key in self._given:
                    continue
                self._given.add(key)
            out.append(
                f"Rules from {rule.path} apply to {path} (it matches "
                f"{', '.join(rule.paths)}); follow them:\n\n{rule.content.strip()}"
            )
        return out

    def forget(self) -> None:
        """A new conversation (``/clear``) gets the rules again."""
        with self._lock:
            self._given.clear()
