"""Config loading: files, scopes, ``${VAR}`` expansion, project-server approval."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from config import ConfigRoots, load_settings
from tools.mcp import expand_vars, load_mcp_config, load_session_mcp_config, normalize_name


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def servers(**entries: Any) -> dict[str, Any]:
    return {"mcpServers": entries}


class Dirs:
    def __init__(self, tmp_path: Path) -> None:
        self.project = tmp_path / "project"
        self.project.mkdir()
        self.nerve = tmp_path / "home" / ".nerve"
        self.claude_json = tmp_path / "home" / ".claude.json"

    def load(
        self, *, layers: Any = (), environ: dict[str, str] | None = None, cwd: Path | None = None
    ):
        return load_mcp_config(
            cwd or self.project,
            project_root=self.project,
            nerve_user_dir=self.nerve,
            claude_json=self.claude_json,
            settings_layers=layers,
            environ=environ or {},
        )


class Layer:
    def __init__(self, source: str, data: dict[str, Any]) -> None:
        self.source = source
        self.data = data


def test_expand_vars_plain_default_and_missing() -> None:
    missing: list[str] = []
    env = {"HOST": "h.example", "EMPTY": ""}
    assert expand_vars("https://${HOST}/x", env, missing) == "https://h.example/x"
    assert expand_vars("${PORT:-8080}", env, missing) == "8080"
    assert expand_vars("${EMPTY:-fallback}", env, missing) == "fallback"
    assert expand_vars("Bearer ${TOKEN}", env, missing) == "Bearer ${TOKEN}"
    assert expand_vars("$HOST and ${HOST", env, missing) == "$HOST and ${HOST"
    assert missing == ["TOKEN"]


def test_expansion_in_every_field_and_a_warning_for_unset(tmp_path: Path) -> None:
    d = Dirs(tmp_path)
    write(
        d.nerve / "mcp.json",
        servers(
            local={
                "command": "${BIN:-python3}",
                "args": ["--root", "${ROOT}", "${NOPE}"],
                "env": {"KEY": "${SECRET}", "N": 3},
                "cwd": "${ROOT}",
            },
            remote={
                "type": "http",
                "url": "${API:-https://api.example.com}/mcp",
                "headers": {"Authorization": "Bearer ${SECRET}"},
            },
        ),
    )
    cfg = d.load(environ={"ROOT": "/srv", "SECRET": "s3"})
    by_name = {s.name: s for s in cfg.servers}
    local = by_name["local"]
    assert local.type == "stdio" and local.command == "python3"
    assert local.args == ("--root", "/srv", "${NOPE}")
    assert local.env == {"KEY": "s3", "N": "3"} and local.cwd == "/srv"
    remote = by_name["remote"]
    assert remote.type == "http" and remote.url == "https://api.example.com/mcp"
    assert remote.headers == {"Authorization": "Bearer s3"}
    assert any("NOPE is not set" in w and "'local'" in w for w in cfg.warnings)


def test_scopes_local_beats_project_beats_user_whole_entry(tmp_path: Path) -> None:
    d = Dirs(tmp_path)
    write(
        d.claude_json,
        {
            "mcpServers": {
                "shared": {"command": "user-cmd", "env": {"ONLY_USER": "1"}},
                "claude_user": {"command": "c"},
                "mine": {"command": "claude-version"},
            },
            "projects": {
                str(d.project): servers(local_only={"command": "l"}, both={"command": "local-cmd"})
            },
        },
    )
    write(d.nerve / "mcp.json", servers(mine={"command": "nerve-version"}))
    write(
        d.project / ".mcp.json",
        servers(shared={"command": "project-cmd"}, both={"command": "project-cmd"}),
    )
    cfg = d.load(layers=[Layer("userSettings", {"enableAllProjectMcpServers": True})])
    by_name = {s.name: s for s in cfg.servers}
    assert by_name["shared"].command == "project-cmd" and by_name["shared"].scope == "project"
    assert by_name["shared"].env == {}  # the whole entry wins, no field merge
    assert by_name["both"].command == "local-cmd" and by_name["both"].scope == "local"
    assert by_name["mine"].command == "nerve-version"  # ~/.nerve/mcp.json beats ~/.claude.json
    assert by_name["claude_user"].scope == "user" and by_name["local_only"].scope == "local"


def test_project_servers_need_approval_from_a_trusted_layer(tmp_path: Path) -> None:
    d = Dirs(tmp_path)
    write(
        d.project / ".mcp.json", servers(a={"command": "a"}, b={"command": "b"}, c={"command": "c"})
    )
    cfg = d.load()
    assert cfg.servers == () and cfg.unapproved == ("a", "b", "c")
    assert any("not approved" in w and "enableAllProjectMcpServers" in w for w in cfg.warnings)
    # The repository's own committed settings cannot approve its servers.
    cfg = d.load(layers=[Layer("projectSettings", {"enableAllProjectMcpServers": True})])
    assert cfg.servers == ()
    cfg = d.load(
        layers=[
            Layer("localSettings", {"enabledMcpjsonServers": ["a"]}),
            Layer(
                "userSettings", {"enabledMcpjsonServers": ["b"], "disabledMcpjsonServers": ["a"]}
            ),
        ]
    )
    assert [s.name for s in cfg.servers] == ["b"] and cfg.unapproved == ("c",)
    cfg = d.load(
        layers=[
            Layer("localSettings", {"enableAllProjectMcpServers": True}),
            Layer("userSettings", {"disabledMcpjsonServers": ["c"]}),
        ]
    )
    assert [s.name for s in cfg.servers] == ["a", "b"] and cfg.unapproved == ()


def test_nearer_mcp_json_wins_and_parents_up_to_the_root_count(tmp_path: Path) -> None:
    d = Dirs(tmp_path)
    sub = d.project / "pkg" / "sub"
    sub.mkdir(parents=True)
    write(d.project / ".mcp.json", servers(s={"command": "root"}, r={"command": "r"}))
    write(sub / ".mcp.json", servers(s={"command": "near"}))
    write(tmp_path / ".mcp.json", servers(outside={"command": "x"}))  # above the project root
    cfg = d.load(cwd=sub, layers=[Layer("localSettings", {"enableAllProjectMcpServers": True})])
    by_name = {s.name: s.command for s in cfg.servers}
    assert by_name == {"s": "near", "r": "r"}


def test_bad_files_and_entries_become_warnings(tmp_path: Path) -> None:
    d = Dirs(tmp_path)
    write(d.claude_json, "{not json")
    write(
        d.nerve / "mcp.json",
        servers(
            legacy={"type": "sse", "url": "https://example.com/sse"},
            socket={"type": "ws", "url": "wss://example.com"},
            nocmd={"type": "stdio"},
            nourl={"type": "http"},
            weird={"type": "carrier-pigeon"},
            notobj=["x"],
            badargs={"command": "x", "args": "not-a-list"},
            ok={"command": "fine"},
        ),
    )
    cfg = d.load()
    assert [s.name for s in cfg.servers] == ["legacy", "ok"]
    legacy = cfg.servers[0]
    assert legacy.type == "sse" and legacy.url == "https://example.com/sse"
    text = "\n".join(cfg.warnings)
    assert "invalid JSON" in text
    assert "'ws' is not supported" in text and "'sse'" not in text
    for name in ("nocmd", "nourl", "weird", "notobj", "badargs"):
        assert f"'{name}'" in text


def test_normalize_name() -> None:
    assert normalize_name("my.server v2") == "my_server_v2"
    assert normalize_name("ok-name_1") == "ok-name_1"


def test_session_config_reads_real_settings_and_env_dirs(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = tmp_path / "project"
    project.mkdir()
    environ = {
        "HOME": str(home),
        "NERVE_CONFIG_DIR": str(home / "nerve-conf"),
        "CLAUDE_CONFIG_DIR": str(home / "claude-conf"),
        "NERVE_POLICY_DIR": str(tmp_path / "policy"),
        "NERVE_CLAUDE_POLICY_DIR": str(tmp_path / "cpolicy"),
    }
    write(home / "nerve-conf" / "mcp.json", servers(ours={"command": "a"}))
    write(home / "claude-conf" / ".claude.json", servers(theirs={"command": "b"}))
    write(project / ".mcp.json", servers(proj={"command": "c"}, off={"command": "d"}))
    write(project / ".claude" / "settings.json", {"enableAllProjectMcpServers": True})  # ignored
    write(project / ".claude" / "settings.local.json", {"enabledMcpjsonServers": ["proj"]})
    settings = load_settings(project, roots=ConfigRoots(home, environ=environ))
    cfg = load_session_mcp_config(project, settings, environ)
    assert sorted(s.name for s in cfg.servers) == ["ours", "proj", "theirs"]
    assert cfg.unapproved == ("off",)
