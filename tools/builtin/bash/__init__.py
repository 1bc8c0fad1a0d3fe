"""The Bash tool: process-group runner, bounded output, sed preview, image output."""

from __future__ import annotations

from tools.base import Tool
from tools.builtin.bash.tool import BASH_TOOL, BashInput

__all__ = ["BASH_TOOL", "TOOLS", "BashInput"]

TOOLS: tuple[Tool, ...] = (BASH_TOOL,)
