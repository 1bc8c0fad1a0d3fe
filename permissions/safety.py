"""Safety checks on paths: protected locations and path-traversal tricks.

Two strengths, carried by ``SafetyCheck.classifier_approvable``:

* protected paths (``.git/``, our config dirs, shell rc files, ...): writing there is unusual but
  sometimes legitimate, so it always asks (even in acceptEdits, even with an allow rule), a
  classifier may approve it and bypass mode allows it;
* path tricks (``..`` escapes hidden inside a path, Windows drive letters / UNC / 8.3 names /
  alternate data streams / trailing dots, symlinks leading a write out of the working dirs):
  almost always adversarial, so only a human may approve them, in every mode.
"""

from __future__ import annotations

import re
from pathlib import Path

from permissions.paths import expand_path, is_inside_working_dirs, is_under, real_path
from permissions.types import PermissionContext, SafetyCheck

__all__ = [
    "PROTECTED_DIRS",
    "PROTECTED_FILES",
    "check_path_tricks",
    "check_write_path",
    "is_inside_working_dirs",
    "is_protected_path",
]

# Directory names (compared case-insensitively: macOS and Windows file systems fold case).
PROTECTED_DIRS: frozenset[str] = frozenset(
    {
        ".git",
        ".nerve",
        ".claude",
        ".vscode",
        ".idea",
        ".husky",
        ".cargo",
        ".devcontainer",
        ".yarn",
        ".mvn",
    }
)
# Multi-segment protected directories.
PROTECTED_DIR_PAIRS: tuple[tuple[str, str], ...] = ((".config", "git"), (".config", "nerve"))
# Exempt subtrees: the agent's own worktrees are ordinary working copies.
EXEMPT_PAIRS: tuple[tuple[str, str], ...] = ((".claude", "worktrees"), (".nerve", "worktrees"))

PROTECTED_FILES: frozenset[str] = frozenset(
    {
        ".gitconfig",
        ".gitmodules",
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        ".zshrc",
        ".zprofile",
        ".zshenv",
        ".zlogin",
        ".profile",
        ".envrc",
        ".npmrc",
        ".mcp.json",
        ".claude.json",
        ".nerve.json",
        ".pre-commit-config.yaml",
        "managed-settings.json",
    }
)
# System-wide settings locations of ours and of the tool whose files we read.
PROTECTED_ROOTS: tuple[str, ...] = ("/etc/nerve", "/etc/claude-code")


def _protected_reason(path: Path) -> str | None:
    parts = [p.casefold() for p in path.parts]
    i = 0
    while i < len(parts):
        part = parts[i]
        nxt = parts[i + 1] if i + 1 < len(parts) else None
        if (part, nxt) in EXEMPT_PAIRS:
            i += 2  # a worktree is a plain checkout; what lies inside it is judged afresh
            continue
        if part in PROTECTED_DIRS:
            return f"{part}/"
        if (part, nxt) in PROTECTED_DIR_PAIRS:
            return f"{part}/{nxt}/"
        i += 1
    if parts and parts[-1] in PROTECTED_FILES:
        return parts[-1]
    for root in PROTECTED_ROOTS:
        if is_under(path, root):
            return f"{root}/"
    return None


def is_protected_path(path: Path | str, ctx: PermissionContext) -> str | None:
    """The protected location ``path`` (as written or its real target) falls in, or None."""
    lexical = expand_path(path, ctx)
    # the symlink target is resolved only when the path as written is not protected
    return _protected_reason(lexical) or _protected_target(lexical, real_path(lexical))


def _protected_target(lexical: Path, real: Path) -> str | None:
    return _protected_reason(real) if real != lexical else None


def check_write_path(path: Path, ctx: PermissionContext) -> SafetyCheck | None:
    """Safety check for writing ``path`` (absolute or relative to ctx.cwd).

    A symlink whose target leaves the working dirs is a trick (not approvable); a protected
    location is approvable.
    """
    lexical = expand_path(path, ctx)
    real = real_path(lexical)
    if real != lexical and _inside_lexically(lexical, ctx):
        if not is_inside_working_dirs(lexical, ctx):
            return SafetyCheck(
                f"{lexical} is a symlink leading out of the working directories (to {real})",
                classifier_approvable=False,
            )
    where = _protected_reason(lexical) or _protected_target(lexical, real)
    if where is not None:
        return SafetyCheck(f"{lexical} is a protected path ({where})", classifier_approvable=True)
    return None


def _inside_lexically(path: Path, ctx: PermissionContext) -> bool:
    """The path as written (normalised, symlinks not followed) lies in a working dir."""
    return any(is_under(path, d) for d in ctx.working_dirs)


_DRIVE = re.compile(r"^[A-Za-z]:")
_SHORT_NAME = re.compile(r"(?:^|[\\/])[^\\/~]{1,8}~\d+(?:[.\\/]|$)")
_UNC_PREFIXES = ("\\\\", "//?/", "//./", "\\\\?\\", "\\\\.\\")


def _trick(message: str) -> SafetyCheck:
    return SafetyCheck(message, classifier_approvable=False)


def check_path_tricks(raw: str, ctx: PermissionContext) -> SafetyCheck | None:
    """Path-spelling tricks in a raw path string (as the model wrote it), or None.

    All of these ask a human, whatever the mode: no legitimate POSIX workflow needs them, and
    each is a known way to slip a path past pattern rules.
    """
    if not raw:
        return None
    if raw.startswith(_UNC_PREFIXES) or (raw.startswith("//") and raw[2:3] not in ("", "/")):
        return _trick(f"{raw!r} looks like a UNC / device path")
    if _DRIVE.match(raw):
        return _trick(f"{raw!r} starts with a Windows drive letter")
    if _SHORT_NAME.search(raw):
        return _trick(f"{raw!r} contains a Windows 8.3 short name")
    if ":" in raw:
        return _trick(f"{raw!r} contains ':' (an NTFS alternate data stream on Windows)")
    segments = re.split(r"[\\/]", raw)
    for seg in segments:
        if seg not in ("", ".", "..") and seg[-1] in ". ":
            return _trick(f"{raw!r} has a segment ending in a dot or space ({seg!r})")
    if "\\" in raw and any(s == ".." for s in segments):
        return _trick(f"{raw!r} walks up with backslash separators")
    if ".." in raw.split("/"):
        first = raw.split("/", 1)[0]
        looked_inside = (not raw.startswith(("/", "~")) and first != "..") or any(
            _under_prefix(raw, d) for d in ctx.working_dirs
        )
        if looked_inside and not _inside_lexically(expand_path(raw, ctx), ctx):
            return _trick(f"{raw!r} uses '..' to leave the working directories")
    return None


def _under_prefix(raw: str, directory: Path) -> bool:
    """Does the raw (unnormalised) string start inside ``directory``?"""
    d = str(directory).rstrip("/")
    return raw == d or raw.startswith(d + "/")
