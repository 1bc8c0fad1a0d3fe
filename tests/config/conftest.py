"""A temporary home, git project and policy dirs, and a hermetic ``load``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from config import ConfigRoots, LoadedSettings, load_settings


@dataclass
class Tree:
    home: Path
    project: Path
    policy: Path
    claude_policy: Path

    def write(self, path: Path, data: Any) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
        return path

    def user(self, data: Any, kind: str = ".nerve") -> Path:
        return self.write(self.home / kind / "settings.json", data)

    def proj(self, data: Any, kind: str = ".nerve") -> Path:
        return self.write(self.project / kind / "settings.json", data)

    def local(self, data: Any, kind: str = ".nerve") -> Path:
        return self.write(self.project / kind / "settings.local.json", data)

    def managed(self, data: Any, name: str = "managed-settings.json") -> Path:
        return self.write(self.policy / name, data)

    def load(
        self, cwd: Path | None = None, environ: Mapping[str, str] | None = None, **kw: Any
    ) -> LoadedSettings:
        roots = ConfigRoots(
            self.home, self.policy, self.claude_policy, environ={} if environ is None else environ
        )
        return load_settings(cwd or self.project, roots=roots, **kw)


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    home = tmp_path / "home"
    project = tmp_path / "work" / "proj"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    return Tree(home, project, tmp_path / "etc-nerve", tmp_path / "etc-claude-code")
