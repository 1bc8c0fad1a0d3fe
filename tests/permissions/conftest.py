"""A real project tree in tmp_path and helpers to build contexts and requests."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

from permissions.rules import make_rule
from permissions.types import (
    PermissionContext,
    PermissionMode,
    PermissionRequest,
    PermissionRule,
    RuleSource,
    ToolKind,
)


@dataclass
class World:
    root: Path
    cwd: Path
    home: Path

    def ctx(
        self,
        mode: str = "default",
        allow: Iterable[str] = (),
        deny: Iterable[str] = (),
        ask: Iterable[str] = (),
        rules: Iterable[PermissionRule] = (),
        extra_dirs: Iterable[Path] = (),
    ) -> PermissionContext:
        made = [
            *(make_rule(t, "deny", RuleSource.CLI, self.cwd) for t in deny),
            *(make_rule(t, "ask", RuleSource.CLI, self.cwd) for t in ask),
            *(make_rule(t, "allow", RuleSource.CLI, self.cwd) for t in allow),
            *rules,
        ]
        return PermissionContext(
            mode=PermissionMode(mode),
            rules=tuple(made),
            cwd=self.cwd,
            additional_dirs=tuple(extra_dirs),
            home=self.home,
        )

    def read(self, *paths: str | Path, tool: str = "Read") -> PermissionRequest:
        full = tuple(self.cwd / p for p in paths)
        return PermissionRequest(
            tool, {"file_path": str(paths[0])}, ToolKind.READ, paths=full, is_read_only=True
        )

    def edit(self, *paths: str | Path, tool: str = "Edit") -> PermissionRequest:
        full = tuple(self.cwd / p for p in paths)
        return PermissionRequest(tool, {"file_path": str(paths[0])}, ToolKind.EDIT, paths=full)

    def fetch(self, url: str) -> PermissionRequest:
        return PermissionRequest(
            "WebFetch", {"url": url}, ToolKind.FETCH, url=url, is_read_only=True
        )


@pytest.fixture
def world(tmp_path: Path) -> World:
    root = tmp_path.resolve()
    cwd = root / "proj"
    home = root / "home"
    for d in (cwd / "src" / "pkg", cwd / "docs", home, root / "outside"):
        d.mkdir(parents=True)
    (cwd / "src" / "pkg" / "mod.py").write_text("x = 1\n")
    (root / "outside" / "secret.txt").write_text("s\n")
    return World(root, cwd, home)
