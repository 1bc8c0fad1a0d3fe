"""A real ``nerve -p`` whose data directory is (or becomes) a full disk: a clear message, told
once, the turn goes on, and what was recorded still resumes."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import Harness
from tests.tinyfs import fill, tiny_tmpfs

BYPASS = ["--permission-mode", "bypassPermissions"]


def _on_tiny_disk(harness: Harness, fs: Path) -> Harness:
    return Harness(harness.root, harness.project, {**harness.env, "NERVE_DATA_DIR": str(fs)})


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_full_data_dir_at_start_is_one_clear_message(
    harness: Harness, tmp_path: Path, fmt: str
) -> None:
    with tiny_tmpfs(tmp_path / "fs") as fs:
        fill(fs)
        h = _on_tiny_disk(harness, fs)
        run = h.run(
            ["-p", "hello", "--output-format", fmt, *BYPASS],
            Scenario.of(
                Turn([tool_use("Bash", {"command": "echo still-working"}, id="t1")]),
                Turn([text("All good.")], match=Match(tool_result_for="t1")),
            ),
        )
    assert run.rc == 0, run.stderr
    assert "Traceback" not in run.stderr
    assert run.stderr.count("Recording this session failed") == 1, run.stderr
    assert "No space left on device" in run.stderr
    assert "still-working" in str(run.server.requests[1].body["messages"][-1])
    assert ("All good." in run.stdout) if fmt == "text" else run.json()["result"] == "All good."


def test_the_disk_filling_mid_turn_is_told_once_and_the_turn_goes_on(
    harness: Harness, tmp_path: Path
) -> None:
    with tiny_tmpfs(tmp_path / "fs") as fs:
        h = _on_tiny_disk(harness, fs)
        filler = fs / "filler"
        fill_it = f"head -c 1000000 /dev/zero > {filler}; echo filled"
        run = h.run(
            ["-p", "fill it", *BYPASS],
            Scenario.of(
                Turn([text("Filling."), tool_use("Bash", {"command": fill_it}, id="t_fill")]),
                Turn(
                    [tool_use("Bash", {"command": "echo after"}, id="t_after")],
                    match=Match(tool_result_for="t_fill"),
                ),
                Turn([text("Finished anyway.")], match=Match(tool_result_for="t_after")),
            ),
        )
        assert run.rc == 0, run.stderr
        assert "Finished anyway." in run.stdout
        assert "Traceback" not in run.stderr
        assert run.stderr.count("Recording this session failed") == 1, run.stderr
        filler.unlink()
        # What was recorded before the disk filled resumes into a valid request.
        again = h.run(
            ["-p", "go on", "--continue", "--output-format", "json", *BYPASS],
            Scenario.of(Turn([text("Resumed.")], match=Match(contains_text="go on"))),
        )
    assert again.rc == 0, again.stderr
    assert again.json()["result"] == "Resumed."
    messages = again.server.requests[0].body["messages"]
    assert messages[0]["content"][0]["text"] == "fill it"
    assert any(b.get("id") == "t_fill" for m in messages for b in m["content"])
