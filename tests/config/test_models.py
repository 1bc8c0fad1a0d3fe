"""The models: strict on known keys, tolerant of unknown ones."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from config import PERMISSION_MODES, Settings, normalize_mode


@pytest.mark.parametrize("mode", PERMISSION_MODES)
def test_every_mode_is_accepted(mode: str) -> None:
    assert (
        Settings.model_validate({"permissions": {"defaultMode": mode}}).permissions.defaultMode
        == mode
    )


def test_manual_alias_and_unknown_mode() -> None:
    assert normalize_mode("manual") == "default"
    with pytest.raises(ValueError, match="unknown permission mode 'bubble'"):
        normalize_mode("bubble")  # internal to sub-agents, not a settings value


@pytest.mark.parametrize(
    "data",
    [
        {"cleanupPeriodDays": "30"},
        {"cleanupPeriodDays": True},
        {"cleanupPeriodDays": -1},
        {"disableAllHooks": "false"},
        {"env": {"N": 1}},
        {"model": ["opus"]},
        {"permissions": {"disableBypassPermissionsMode": "enable"}},
        {"permissions": {"additionalDirectories": "../docs"}},
        {"hooks": {"Stop": {"hooks": []}}},
        {"hooks": {"Stop": [{"hooks": [{"type": "shell", "command": "x"}]}]}},
        {"hooks": {"Stop": [{"hooks": [{"type": "http"}]}]}},
        {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": 0}]}]}},
        {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "async": "yes"}]}]}},
    ],
)
def test_known_keys_are_strict(data: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Settings.model_validate(data)


def test_valid_full_file_and_extras() -> None:
    s = Settings.model_validate(
        {
            "$schema": "https://json.schemastore.org/claude-code-settings.json",
            "model": "opus",
            "env": {"FOO": "1"},
            "permissions": {
                "allow": ["Bash(npm run test *)"],
                "deny": ["Read(./.env)"],
                "ask": [],
                "defaultMode": "acceptEdits",
                "additionalDirectories": ["../docs/"],
                "disableBypassPermissionsMode": "disable",
                "disableAutoMode": "disable",
            },
            "hooks": {
                "PreToolUse": [
                    {
                        "matcher": "Edit|Write",
                        "hooks": [{"type": "command", "command": "check.sh", "timeout": 30}],
                    },
                    {"hooks": [{"type": "prompt", "prompt": "ok?", "timeout": 2.5}]},
                ]
            },
            "disableAllHooks": False,
            "cleanupPeriodDays": 30,
            "apiKeyHelper": "/bin/get-key.sh",
            "enabledMcpjsonServers": ["github"],
        }
    )
    assert s.extras() == {
        "$schema": "https://json.schemastore.org/claude-code-settings.json",
        "enabledMcpjsonServers": ["github"],
    }
    assert s.hooks["PreToolUse"][0].hooks[0].timeout == 30
    assert s.hooks["PreToolUse"][1].hooks[0].model_extra == {"prompt": "ok?"}
    assert s.permissions.model_extra == {"disableAutoMode": "disable"}
