"""Turning ripgrep's JSON stream into the familiar ``path:line:text`` lines, in path order."""

from __future__ import annotations

import base64
import json
from typing import Any

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


def _text(field: dict[str, Any]) -> str:
    if "text" in field:
        return str(field["text"])
    return base64.b64decode(field.get("bytes", "")).decode("utf-8", "replace")


def _clean(path: str) -> str:
    return path[2:] if path.startswith("./") else path


def format_content(
    stdout: bytes, *, line_numbers: bool, only_matching: bool, with_context: bool
) -> list[str]:
    """Output lines for content mode; files sorted by path, ``--`` between separate groups."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for raw in stdout.splitlines():
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        kind = rec.get("type")
        if kind in ("match", "context"):
            data = rec["data"]
            groups.setdefault(_clean(_text(data["path"])), []).append(rec)
    out: list[str] = []
    for path in sorted(groups):
        if with_context and out:
            out.append("--")
        previous: int | None = None
        for rec in groups[path]:
            data = rec["data"]
            is_match = rec["type"] == "match"
            number = int(data.get("line_number") or 0)
            if only_matching:
                if is_match:
                    for sub in data.get("submatches", []):
                        text = _text(sub["match"])
                        out.append(f"{path}:{number}:{text}" if line_numbers else f"{path}:{text}")
                continue
            lines = _text(data["lines"]).split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            if with_context and previous is not None and number > previous + 1:
                out.append("--")
            sep = ":" if is_match else "-"
            for k, line in enumerate(lines):
                line = line.removesuffix("\r")
                if len(line) > MAX_COLUMNS:
                    count = len(data.get("submatches", [])) if is_match else 0
                    line = (
                        f"[Omitted long line with {count} matches]"
                        if is_match
                        else "[Omitted long context line]"
                    )
                out.append(
                    f"{path}{sep}{number + k}{sep}{line}" if line_numbers else f"{path}{sep}{line}"
                )
            previous = number + max(len(lines), 1) - 1
    return out
