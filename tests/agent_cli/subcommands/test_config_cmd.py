"""``nerve config get|set|list [-g]`` through the console script, HOME in a temp dir.

End to end: a model set with ``nerve config set`` is the model the next ``nerve -p`` asks for.
"""

from __future__ import annotations

import json
from pathlib import Path

from agent_cli.testing import Scenario, Turn, text
from tests.agent_cli.e2e.conftest import Harness, harness  # noqa: F401 (the fixture)


def test_set_model_is_used_by_the_next_session(harness: Harness) -> None:  # noqa: F811
    r = harness.run(["config", "set", "model", "claude-from-config"], None)
    assert r.rc == 0, r.stderr
    path = harness.project / ".claude" / "settings.json"
    assert json.loads(path.read_text()) == {"model": "claude-from-config"}
    assert str(path) in r.stdout

    got = harness.run(["config", "get", "model"], None)
    assert got.rc == 0 and got.stdout == "claude-from-config\n"

    run = harness.run(["-p", "hi"], Scenario.of(Turn([text("hello")])))
    assert run.rc == 0, run.stderr
    assert run.server.requests[0].body["model"] == "claude-from-config"


def test_global_values_types_and_other_keys_kept(harness: Harness) -> None:  # noqa: F811
    user = Path(harness.env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    user.parent.mkdir(parents=True)
    user.write_text(json.dumps({"env": {"A": "1"}, "custom": [1, 2]}))
    for args in (
        ["config", "set", "-g", "cleanupPeriodDays", "30"],
        ["config", "set", "--global", "permissions.defaultMode", "acceptEdits"],
        ["config", "set", "-g", "permissions.allow", '["Bash(ls:*)"]'],
        ["config", "set", "-g", "model", "5"],  # the key wants a string: kept as "5"
    ):
        r = harness.run(args, None)
        assert r.rc == 0, (args, r.stderr)
    assert json.loads(user.read_text()) == {
        "env": {"A": "1"},
        "custom": [1, 2],
        "cleanupPeriodDays": 30,
        "permissions": {"defaultMode": "acceptEdits", "allow": ["Bash(ls:*)"]},
        "model": "5",
    }
    assert not (harness.project / ".claude").exists()  # -g never touched the project

    listed = harness.run(["config", "list", "-g"], None)
    assert listed.rc == 0
    assert json.loads(listed.stdout) == json.loads(user.read_text())
    got = harness.run(["config", "get", "-g", "permissions.allow"], None)
    assert json.loads(got.stdout) == ["Bash(ls:*)"]
    assert harness.run(["config", "list"], None).stdout.strip() == "{}"


def test_bad_values_and_broken_files_change_nothing(harness: Harness) -> None:  # noqa: F811
    path = harness.project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"model": "m"}\n')
    cases = [
        (["config", "set", "permissions.defaultMode", "bogus"], "unknown permission mode 'bogus'"),
        (["config", "set", "permissions.allow", "7"], "permissions.allow: expected a list"),
        (["config", "set", "a..b", "1"], "invalid key 'a..b'"),
        (["config", "set", "model"], "unknown or malformed command"),
        (["config", "get", "-x", "model"], "unknown option '-x'"),
    ]
    for args, message in cases:
        r = harness.run(args, None)
        assert r.rc == 2, (args, r.stdout, r.stderr)
        assert message in r.stderr, (args, r.stderr)
    assert path.read_text() == '{"model": "m"}\n'

    missing = harness.run(["config", "get", "theme"], None)
    assert missing.rc == 1 and f"theme is not set in {path}" in missing.stderr

    path.write_text('{"model": ')
    broken = harness.run(["config", "set", "model", "x"], None)
    assert broken.rc == 1
    assert f"{path}:1:" in broken.stderr and "nothing was changed" in broken.stderr
    assert path.read_text() == '{"model": '
    assert harness.run(["config", "get", "model"], None).rc == 1
