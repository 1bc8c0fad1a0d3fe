"""``updatedPermissions`` parsing: Claude Code's PermissionUpdate shapes, and one bad update
voiding the whole list (nothing half-applied)."""

from __future__ import annotations

from agent_cli.frontends.sdk.permission_updates import PermissionUpdate, parse_updates


def test_every_supported_shape_parses() -> None:
    updates, why = parse_updates(
        [
            {
                "type": "addRules",
                "rules": [{"toolName": "Bash", "ruleContent": "npm test *"}, {"toolName": "Read"}],
                "behavior": "allow",
                "destination": "localSettings",
            },
            {"type": "removeRules", "rules": [{"toolName": "Edit"}], "behavior": "deny"},
            {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
            {"type": "addDirectories", "directories": ["/tmp/x"], "destination": "session"},
        ]
    )
    assert why is None
    assert updates == [
        PermissionUpdate(
            "addRules", "localSettings", rules=("Bash(npm test *)", "Read"), behavior="allow"
        ),
        PermissionUpdate("removeRules", "session", rules=("Edit",), behavior="deny"),
        PermissionUpdate("setMode", "session", mode="acceptEdits"),
        PermissionUpdate("addDirectories", "session", directories=("/tmp/x",)),
    ]


def test_one_bad_update_voids_the_list_with_the_reason() -> None:
    good = {"type": "addRules", "rules": [{"toolName": "Read"}], "behavior": "allow"}
    cases = {
        "unknown destination 'cloud'": {**good, "destination": "cloud"},
        "needs a behavior": {**good, "behavior": "always"},
        "toolName": {**good, "rules": [{"ruleContent": "x"}]},
        "unsupported permission update type 'removeDirectories'": {
            "type": "removeDirectories",
            "directories": ["/x"],
        },
        "setMode needs a mode": {"type": "setMode"},
    }
    for expected, bad in cases.items():
        updates, why = parse_updates([good, bad])
        assert updates == [] and why is not None and expected in why, (expected, why)
    assert parse_updates({"type": "addRules"}) == (
        [],
        "updatedPermissions must be a list, got dict",
    )
    assert parse_updates(None) == ([], None)
