"""``@path`` references in text: finding them and resolving them to files.

Shared by a custom command's ``@path`` includes (``expand``) and a typed prompt's mentions
(``agent_cli.session.mentions``). A reference is ``@path``, ``@"path with spaces"``, either
optionally followed by a line range ``#L10`` / ``#L10-20``. Not a reference: an ``@`` after a
word character (an e-mail address), and anything inside backtick code (inline spans or fenced
blocks). A trailing ``.`` or ``,`` ends the sentence, not the path.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tools.records import datarecord

__all__ = ["IMAGE_SUFFIXES", "Mention", "find_mentions", "find_pasted_images", "resolve_ref"]

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")

_MENTION = re.compile(
    r"(?<![\w@`/\\$])@"
    r"(?:\"(?P<quoted>[^\"\n]+)\"|(?P<plain>(?:~/|/|\./|\.\./)?[\w.\-/~+]*[\w/]))"
    r"(?:#L(?P<start>\d+)(?:-(?P<end>\d+))?)?"
)
_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE_CODE = re.compile(r"`[^`\n]*`")
# A pasted image path: a terminal's drag-and-drop gives it bare, quoted or with escaped spaces.
_PASTED = re.compile(
    r"(?<![\w@/])(?:'(?P<single>/[^'\n]+)'|\"(?P<double>/[^\"\n]+)\"|(?P<bare>(?:~/|/)(?:\\ |[^\s'\"])+))"
)


@datarecord(frozen=True, slots=True)
class Mention:
    """One reference: ``ref`` as typed after the ``@`` (without the range), the line range."""

    ref: str
    start: int | None = None
    end: int | None = None
    quoted: bool = False

    @property
    def label(self) -> str:
        """How the user typed it, for notes."""
        ref = f'"{self.ref}"' if self.quoted else self.ref
        if self.start is None:
            return f"@{ref}"
        return f"@{ref}#L{self.start}" + (f"-{self.end}" if self.end is not None else "")

    def read_input(self, path: Path) -> dict[str, Any]:
        """The Read tool's input for this reference to ``path``."""
        inp: dict[str, Any] = {"file_path": str(path)}
        if self.start is not None:
            inp["offset"] = max(self.start, 1)
            end = self.end if self.end is not None else self.start
            inp["limit"] = max(end - inp["offset"] + 1, 1)
        return inp


def _code_free_lines(text: str) -> list[str]:
    lines: list[str] = []
    in_fence = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if not in_fence:
            lines.append(_INLINE_CODE.sub(" ", line))
    return lines


def find_mentions(text: str) -> list[Mention]:
    """The references in ``text`` outside backtick code, in order, each once."""
    found: list[Mention] = []
    for line in _code_free_lines(text):
        for m in _MENTION.finditer(line):
            quoted = m.group("quoted") is not None
            ref = m.group("quoted") if quoted else m.group("plain").rstrip(".")
            if not ref:
                continue
            start = int(m.group("start")) if m.group("start") else None
            end = int(m.group("end")) if m.group("end") else None
            mention = Mention(ref, start, end, quoted)
            if mention not in found:
                found.append(mention)
    return found


def find_pasted_images(text: str) -> list[str]:
    """Absolute (or ``~/``) paths of image files pasted into ``text`` without an ``@``."""
    found: list[str] = []
    for line in _code_free_lines(text):
        for m in _PASTED.finditer(line):
            raw = m.group("single") or m.group("double") or m.group("bare").replace("\\ ", " ")
            if raw.lower().endswith(IMAGE_SUFFIXES) and raw not in found:
                found.append(raw)
    return found


def resolve_ref(ref: str, dirs: Sequence[Path], home: Path) -> Path | None:
    """The existing file or directory ``ref`` names: ``~/`` from ``home``, an absolute path as
    is, a relative one in the first of ``dirs`` that has it. None when none exists."""
    if ref == "~" or ref.startswith("~/"):
        candidates = [home / ref[2:]]
    elif Path(ref).is_absolute():
        candidates = [Path(ref)]
    else:
        candidates = [d / ref for d in dirs]
    return next((p for p in candidates if p.exists()), None)
