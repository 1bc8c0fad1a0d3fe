"""Capture the real Claude Code CLI's stream-json frames and write their field set as the fixture.

Run: ``.venv/bin/python bench/capture_claude_frames.py [CLAUDE_BINARY]`` (default: the binary
claude-agent-sdk bundles). Each run of ``tests/agent_cli/frontends/stream_json/frames.RUNS`` is
played by the real CLI against the scripted server on 127.0.0.1 (nonessential traffic off, no
retries, a throw-away HOME); the field set of every kind of frame it printed (keys in order,
placeholder values of their types, keys every frame of the kind carries) replaces the kinds in
``tests/agent_cli/frontends/fixtures/stream_json_frames.json``. The fixture's ``_not_sent``
section (the fields Nerve leaves out, and why) is kept. ``--keep DIR`` also writes the raw
captures there (they hold Claude Code's long command and capability lists, so the fixture keeps
only their shape).

The scripted server's request checks are relaxed for the capture: Claude Code sends a ``system``
role message inside ``messages``, which the checks (written for Nerve's requests) refuse.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import agent_cli.testing.scripted_server as scripted  # noqa: E402
from tests.agent_cli.frontends.stream_json.frames import (  # noqa: E402
    RUNS,
    StreamRun,
    common,
    drive,
    frame_kind,
    skeleton,
)

FIXTURE = ROOT / "tests/agent_cli/frontends/fixtures/stream_json_frames.json"


def _bundled() -> str:
    import claude_agent_sdk

    return str(Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude")


def capture(binary: str, run: StreamRun) -> list[dict[str, Any]]:
    tmp = Path(tempfile.mkdtemp(prefix="claude-capture-"))
    home, project = tmp / "home", tmp / "project"
    home.mkdir()
    project.mkdir()
    (project / "notes.txt").write_text("alpha\n")
    if run.setup is not None:
        _play(binary, run.setup[0], run.setup[1](project), home, project, run.name)
    frames = _play(binary, run.args, run.scenario(project), home, project, run.name, run.interrupt)
    print(f"{run.name}: {len(frames)} frames")
    return frames


def _play(
    binary: str,
    args: list[str],
    scenario: Any,
    home: Path,
    project: Path,
    name: str,
    interrupt: str | None = None,
) -> list[dict[str, Any]]:
    server = scripted.ScriptedServer(scenario).start()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "ANTHROPIC_BASE_URL": server.base_url,
        "ANTHROPIC_API_KEY": "test-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0" if name == "api_error" else "10",
    }
    try:
        if interrupt is not None:
            live = subprocess.Popen(
                [binary, *args],
                cwd=project,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            frames = drive(live, interrupt)
            print(f"{name}: rc {live.returncode}, {len(server.requests)} requests")
            return frames
        proc = subprocess.run(
            [binary, *args],
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=180,
        )
    finally:
        server.stop()
    print(f"{name} {args[:2]}: rc {proc.returncode}, {len(server.requests)} requests")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("binary", nargs="?", default=None)
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args()
    binary = args.binary or _bundled()
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
    scripted.check_request = lambda body: []  # type: ignore[assignment]
    scripted.check_thinking = lambda body, thoughts: []  # type: ignore[assignment]
    shapes: dict[str, list[Any]] = {}
    runs: dict[str, list[str]] = {}
    for run in RUNS:
        frames = capture(binary, run)
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            text = "".join(json.dumps(f) + "\n" for f in frames)
            (args.keep / f"{run.name}.jsonl").write_text(text)
        for frame in frames:
            kind = frame_kind(frame)
            shapes.setdefault(kind, []).append(skeleton(frame))
            if run.name not in runs.setdefault(kind, []):
                runs[kind].append(run.name)
    old = json.loads(FIXTURE.read_text()) if FIXTURE.exists() else {}
    fixture: dict[str, Any] = {
        "_source": old.get("_source", ""),
        "_captured_with": version,
        "_not_sent": old.get("_not_sent", {}),
        "_runs": runs,
    }
    fixture.update({kind: common(s) for kind, s in sorted(shapes.items())})
    FIXTURE.write_text(json.dumps(fixture, indent=1) + "\n")
    print(f"wrote {FIXTURE.relative_to(ROOT)}: {len(shapes)} kinds of frame from {version}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
