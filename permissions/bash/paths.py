"""Paths written by bash commands: resolution, protected paths, critical rm targets."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

__all__ = [
    "PROTECTED_DIRS",
    "PROTECTED_FILES",
    "is_critical_rm_target",
    "is_inside",
    "is_protected",
    "resolve_path",
]

PROTECTED_DIRS = frozenset(
    {".git", ".nerve", ".claude", ".vscode", ".idea", ".husky", ".cargo", ".devcontainer"}
    | {".yarn", ".mvn", ".ssh", ".gnupg"}
)
PROTECTED_FILES = frozenset(
    {".bashrc", ".zshrc", ".profile", ".bash_profile", ".bash_login", ".bash_logout"}
    | {".zprofile", ".zshenv", ".zlogin", ".envrc", ".gitconfig", ".gitmodules"}
    | {".gitattributes", ".npmrc", ".yarnrc", ".mcp.json", ".claude.json", ".inputrc"}
    | {".pre-commit-config.yaml", ".nerve.json"}
)
_HOME_VAR = re.compile(r'^"?\$(\{HOME\}|HOME)"?')
_VAR_GLOB = re.compile(r'^"?\$\{?\w+\}?"?/+\*?$')


def resolve_path(text: str, cwd: str | None, home: str) -> str | None:
    """Absolute normalised path for a literal operand, None if it depends on an unknown cwd."""
    if text.startswith("~"):
        if text == "~" or text.startswith("~/"):
            text = home + text[1:]
        else:
            return None  # ~user
    if not text.startswith("/"):
        if cwd is None:
            return None
        text = cwd + "/" + text
    return os.path.normpath(text).replace("//", "/")


def is_protected(path: str) -> bool:
    if "/." not in path and path[:1] != ".":
        return False  # every protected name starts with a dot
    parts = [p for p in path.split("/") if p]  # resolved paths: no `.`/`..` left
    for i, part in enumerate(parts):
        if part in PROTECTED_DIRS:
            if part == ".claude" and i + 1 < len(parts) and parts[i + 1] == "worktrees":
                continue
            return True
        if part == ".config" and i + 1 < len(parts) and parts[i + 1] == "git":
            return True
    return bool(parts) and parts[-1] in PROTECTED_FILES


def is_inside(path: str, dirs: Sequence[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in dirs)


def is_critical_rm_target(
    text: str, value: str | None, glob: bool, recursive: bool, cwd: str | None, home: str
) -> bool:
    """rm targets no allow rule may auto-approve: /, top-level dirs, $HOME, cwd or parents."""
    if _HOME_VAR.match(text):
        rest = _HOME_VAR.sub("", text)
        return rest.strip('"') in ("", "/", "/*", "/.", "/..")
    if value is None:
        return bool(_VAR_GLOB.match(text)) or text.strip('"') in ("/*",)
    target = value
    if glob:
        head, _, _tail = value.rpartition("/")
        if not recursive and head not in ("", "/"):
            return False
        if not recursive and not head and "/" not in value:
            return False
        target = head or ("/" if value.startswith("/") else ".")
    resolved = resolve_path(target, cwd, home)
    if resolved is None:
        return target in (".", "..") or target.startswith("../")
    if resolved == "/" or resolved.count("/") <= 1:
        return True
    if resolved == home or home.startswith(resolved + "/"):
        return True
    if cwd is not None and (resolved == cwd or cwd.startswith(resolved + "/")):
        return True
    return False
