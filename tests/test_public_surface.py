"""The public surface of each package: the names its ``__all__`` declares.

``tools`` and ``permissions`` are pinned name by name, as httpx pins its own
(``tests/test_exported_members.py``): adding or dropping a public name is a decision this file
records. Every package's names resolve as attributes of the package, and the packages that load
their modules on first use (PEP 562) still import none of them when they are imported.
"""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("config", "permissions", "tools", "agent_cli")

TOOLS_ALL = [
    "FAST",
    "MAIN",
    "OTHER_LABEL",
    "AbortSignal",
    "AgentContext",
    "Callbacks",
    "ContentBlock",
    "ContextModifier",
    "ConversationState",
    "DocumentBlock",
    "FatalError",
    "FileContextProvider",
    "ImageBlock",
    "InputError",
    "Message",
    "PermissionAnswer",
    "PermissionDeniedError",
    "PermissionPrompt",
    "PermissionResponse",
    "ProgressFn",
    "Question",
    "QuestionOption",
    "QuestionPrompt",
    "QuestionResponse",
    "ReadFileState",
    "ReadRecord",
    "RedactedThinkingBlock",
    "ResultBlock",
    "Role",
    "RuntimeState",
    "ServerToolUseBlock",
    "SideModel",
    "SideModelError",
    "SideReply",
    "SideRequest",
    "StreamNeutralizer",
    "TextBlock",
    "ThinkingBlock",
    "Tool",
    "ToolCancelled",
    "ToolError",
    "ToolExecutionError",
    "ToolOptions",
    "ToolResult",
    "ToolResultBlock",
    "ToolServices",
    "ToolTimeoutError",
    "ToolUseBlock",
    "ToolUseContext",
    "ValidationError",
    "WebSearchResultBlock",
    "assemble_tool_pool",
    "build_tool",
    "content_hash",
    "create_subagent_context",
    "get_all_base_tools",
    "has_hidden",
    "hidden_note",
    "json_safe",
    "neutralize",
    "reveal",
    "system_reminder",
    "text_block",
    "tool_result_block",
    "tools_for_api",
]

PERMISSIONS_ALL = [
    "LEGACY_TOOL_ALIASES",
    "PROTECTED_FILES",
    "Decision",
    "PathPattern",
    "PermissionContext",
    "PermissionMode",
    "PermissionRequest",
    "PermissionRule",
    "ReasonKind",
    "RuleBehavior",
    "RuleSource",
    "RuleSyntaxError",
    "RuleValue",
    "SafetyCheck",
    "ToolKind",
    "Verdict",
    "apply_mode",
    "canonical_tool_name",
    "check_path_tricks",
    "check_write_path",
    "compile_path_pattern",
    "decide",
    "domain_rule_matches",
    "first_matching_path_rule",
    "is_inside_working_dirs",
    "is_protected_path",
    "make_rule",
    "next_mode",
    "parse_rule",
    "permission_context_from_settings",
    "rules_from_strings",
    "tool_name_matches",
    "url_host",
]

# The packages whose names load their modules on first use: importing them imports none of
# their modules (``import tools`` stays cheap; ``agent_cli.tui`` does not import Textual).
LAZY = (
    "agent_cli",
    "agent_cli.agents",
    "agent_cli.auto",
    "agent_cli.boot",
    "agent_cli.customize",
    "agent_cli.frontends",
    "agent_cli.frontends.demo",
    "agent_cli.frontends.print",
    "agent_cli.frontends.sdk",
    "agent_cli.frontends.stream_json",
    "agent_cli.loop",
    "agent_cli.session",
    "agent_cli.slash",
    "agent_cli.subcommands",
    "agent_cli.transcripts",
    "agent_cli.tui",
    "agent_cli.tui.screens",
    "agent_cli.tui.widgets",
    "tools",
    "tools.builtin",
    "tools.hooks",
    "tools.mcp",
    "tools.pipeline",
    "tools.process",
)


def _packages() -> list[str]:
    return [
        ".".join(init.parent.relative_to(ROOT).parts)
        for layer in LAYERS
        for init in sorted((ROOT / layer).rglob("__init__.py"))
    ]


def _public_names(package: ModuleType) -> set[str]:
    """What the package binds that looks public: no leading underscore, not a module, not the
    ``TYPE_CHECKING = False`` a lazy package sets instead of importing ``typing``."""
    return {
        name
        for name, value in vars(package).items()
        if not name.startswith("_")
        and not isinstance(value, ModuleType)
        and name != "TYPE_CHECKING"
    }


@pytest.mark.parametrize(
    ("name", "expected"), [("tools", TOOLS_ALL), ("permissions", PERMISSIONS_ALL)]
)
def test_pinned_surface(name: str, expected: list[str]) -> None:
    package = importlib.import_module(name)
    assert sorted(package.__all__) == sorted(expected)
    assert len(set(package.__all__)) == len(package.__all__)
    for member in package.__all__:
        getattr(package, member)  # every name resolves (lazy ones load here)
    assert _public_names(package) <= set(package.__all__), "public but not in __all__"


@pytest.mark.parametrize("name", _packages())
def test_every_declared_name_resolves(name: str) -> None:
    package = importlib.import_module(name)
    assert len(set(package.__all__)) == len(package.__all__), "a name declared twice"
    for member in package.__all__:
        value = getattr(package, member)
        # A declared module is that module; any other name must not share a module's name
        # (importing the module would replace the name on the package).
        is_module = importlib.util.find_spec(f"{name}.{member}") is not None
        assert isinstance(value, ModuleType) == is_module, f"{name}.{member}"
    home = getattr(package, "_HOME", {})  # the names a lazy package loads on first use
    assert set(home) <= set(package.__all__), "reachable but not declared"


def test_lazy_packages_import_none_of_their_modules() -> None:
    code = (
        "import importlib, sys\n"
        f"for name in {LAZY!r}:\n"
        "    importlib.import_module(name)\n"
        f"ours = {LAYERS!r}\n"
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in ours)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    loaded = set(out.stdout.split())
    assert loaded == set(LAZY), sorted(loaded - set(LAZY))
