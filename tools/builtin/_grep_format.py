"""Turning ripgrep's output into the familiar ``path:line:text`` lines, in path order."""

from __future__ import annotations

__all__ = ["MAX_COLUMNS", "format_content", "split_globs"]

MAX_COLUMNS = 500


def split_globs(spec: str) -> list[str]:
    """Globs from the model's ``glob``: split on whitespace, then commas outside ``{...}``."""
    globs: list[str] = []
    for raw in spec.split():
        if "{" in raw and "}" in raw:
            globs.append(raw)
        else:
            globs.extend(g for g in raw.split(",") if g)
    return globs


def _clean(path: str) -> str:
    return path[2:] if path.startswith("./") else path


def format_content(stdout: bytes, *, line_numbers: bool, with_context: bool) -> list[str]:
    """Output lines for content mode, from ``rg -n -H --null`` output.

    ``--null`` ends each path with NUL, so a path with ``:`` in it cannot be misread. rg writes
    each file's lines together (even when it searches in parallel); the files are put in path
    order here, with ``--`` between them when context lines are shown.
    """
    groups: dict[str, list[str]] = {}
    current: list[str] | None = None
    for raw in stdout.decode("utf-8", "replace").split("\n"):
        path, nul, rest = raw.partition("\0")
        if not nul:
            if raw == "--" and current is not None:
                current.append("--")
            continue
        path = _clean(path)
        current = groups.setdefault(path, [])
        digits = len(rest) - len(rest.lstrip("0123456789"))
        sep, text = rest[digits : digits + 1], rest[digits + 1 :].removesuffix("\r")
        if line_numbers:
            current.append(f"{path}{sep}{rest[:digits]}{sep}{text}")
        else:
            current.append(f"{path}{sep}{text}")
    out: list[str] = []
    for path in sorted(groups):
        lines = groups[path]
        while lines and lines[-1] == "--":
            lines.pop()
        if with_context and out and lines:
            out.append("--")
        out.extend(lines)
    return out
