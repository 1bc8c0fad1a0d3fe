"""Checkpoints and /rewind through a real session: real tools, real Bash, real files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agent_cli.loop.checkpoints import BLOB_DIR
from agent_cli.loop.events import Notice, ToolFinished
from agent_cli.testing import Scenario, ScriptedServer, Turn, text, tool_use
from agent_cli.transcripts.transcript import TranscriptReader
from tests.agent_cli.loop.conftest import collect, open_session, transcript_records

BYPASS = {"permission_mode": "bypassPermissions"}


def _edit(path: Path, old: str, new: str) -> dict[str, Any]:
    return tool_use("Edit", {"file_path": str(path), "old_string": old, "new_string": new})


def _files(project: Path) -> dict[str, str]:
    return {
        str(p.relative_to(project)): p.read_text()
        for p in sorted(project.rglob("*"))
        if p.is_file() and ".nerve" not in p.parts
    }


def _two_turns(project: Path) -> Scenario:
    a, new = project / "a.txt", project / "new.txt"
    return Scenario.of(
        Turn(
            [
                tool_use("Read", {"file_path": str(a)}),
                tool_use("Write", {"file_path": str(new), "content": "brand new\n"}),
            ]
        ),
        Turn([_edit(a, "one", "ONE"), _edit(a, "two", "TWO")]),
        Turn(
            [
                tool_use(
                    "Bash",
                    {"command": "rm gone.txt && echo made > made.txt && sed -i s/x/y/ s.txt"},
                )
            ]
        ),
        Turn([text("turn one done")]),
        Turn([_edit(a, "ONE", "uno")]),
        Turn([text("turn two done")]),
    )


def _setup(project: Path) -> dict[str, str]:
    (project / "a.txt").write_text("one\ntwo\n")
    (project / "gone.txt").write_text("keep me\n")
    (project / "s.txt").write_text("x marks\n")
    (project / "node_modules").mkdir()
    (project / "node_modules" / "dep.js").write_text("skipped tree\n")
    return _files(project)


async def test_rewind_restores_edits_writes_and_bash_changes_to_before_a_prompt(
    project: Path,
) -> None:
    original = _setup(project)
    with ScriptedServer(_two_turns(project)) as server:
        session = open_session(server, project, **BYPASS)
        events = await collect(session.run_turn("change things"))
        assert not [e for e in events if isinstance(e, ToolFinished) and e.is_error]
        after_one = _files(project)
        await collect(session.run_turn("change more"))
        assert _files(project)["a.txt"] == "uno\nTWO\n"
        first, second = session.rewind_points()
        assert (first.text, second.text) == ("change things", "change more")

        # Back to before the second prompt: only its one edit is undone.
        preview = session.rewind_preview(second.message_id)
        assert [(c.action, Path(c.path).name) for c in preview.files] == [("restore", "a.txt")]
        session.rewind(second.message_id, conversation=False, files=True)
        assert _files(project) == after_one

        # Back to before the first: every change of both turns, Bash's included.
        preview = session.rewind_preview(first.message_id)
        assert sorted((Path(c.path).name, c.action) for c in preview.files) == [
            ("a.txt", "restore"),
            ("gone.txt", "recreate"),
            ("made.txt", "delete"),
            ("new.txt", "delete"),
            ("s.txt", "restore"),
        ]
        assert preview.messages_removed == len(session.loop.messages)
        result = session.rewind(first.message_id, conversation=False, files=True)
        assert result.errors == () and _files(project) == original
        assert len(session.rewind_points()) == 2  # the conversation was not touched
        await session.close()
        server.assert_done()
    blobs = list((session.transcript.session_dir / BLOB_DIR).iterdir())  # type: ignore[union-attr]
    assert len(blobs) == 4  # a.txt twice, gone.txt, s.txt: content-addressed, no duplicate


async def test_conversation_rewind_is_recorded_and_survives_resume(project: Path) -> None:
    original = _setup(project)
    with ScriptedServer(_two_turns(project)) as server:
        session = open_session(server, project, **BYPASS)
        await collect(session.run_turn("change things"))
        await collect(session.run_turn("change more"))
        _, second = session.rewind_points()
        result = session.rewind(second.message_id, conversation=True, files=False)
        assert result.prompt == "change more" and result.messages_removed > 0
        assert [p.text for p in session.rewind_points()] == ["change things"]
        rewinds = [r for r in transcript_records(session) if r.get("subtype") == "rewind"]
        assert rewinds and rewinds[0]["rewindTo"] == second.message_id
        sid = session.session_id
        await session.close()
        server.assert_done()
    reader = TranscriptReader.load(next((project.parent / "data").rglob(f"{sid}.jsonl")))
    assert "change more" not in str(reader.messages)
    with ScriptedServer(Scenario.of()) as server:
        resumed = open_session(server, project, resume=sid, **BYPASS)
        points = resumed.rewind_points()
        assert [p.text for p in points] == ["change things"]
        # The files of both turns (the dropped one included) still rewind after resume.
        resumed.rewind(points[0].message_id, conversation=True, files=True)
        assert _files(project) == original
        assert resumed.rewind_points() == []
        await resumed.close()


async def test_a_full_disk_warns_and_the_edit_still_happens(project: Path) -> None:
    a = project / "a.txt"
    a.write_text("one\n")
    scenario = Scenario.of(
        Turn([tool_use("Read", {"file_path": str(a)})]),
        Turn([_edit(a, "one", "ONE")]),
        Turn([text("edited")]),
    )
    with ScriptedServer(scenario) as server:
        session = open_session(server, project, **BYPASS)
        store = session.loop.checkpoints
        store.blob_dir.mkdir(parents=True)
        import hashlib

        digest = hashlib.sha256(b"one\n").hexdigest()
        # The blob's temporary file is /dev/full: writing it fails with ENOSPC, as on a full disk.
        os.symlink("/dev/full", store.blob_dir / f".{digest}.{os.getpid()}.tmp")
        events = await collect(session.run_turn("edit it"))
        assert a.read_text() == "ONE\n"
        warnings = [e.text for e in events if isinstance(e, Notice)]
        assert any("Checkpoint not saved (No space left on device)" in w for w in warnings)
        (point,) = session.rewind_points()
        (change,) = session.rewind_preview(point.message_id).files
        assert change.action == "unrestorable"
        await session.close()
        server.assert_done()


async def test_a_read_only_bash_command_scans_nothing(project: Path) -> None:
    (project / "a.txt").write_text("x\n")
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "cat a.txt"})]),
        Turn([text("read")]),
    )
    with ScriptedServer(scenario) as server:
        session = open_session(server, project, **BYPASS)
        store = session.loop.checkpoints
        await collect(session.run_turn("look"))
        (point,) = session.rewind_points()
        assert store.tracked(point.message_id) == {}
        assert store._cache.get(str((project / "a.txt").resolve()), (0, 0)) is None
        assert not store._cache._entries  # no pre-scan filled the cache
        await session.close()
        server.assert_done()


async def test_a_notebook_edit_is_checkpointed_too(project: Path) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("print(1)", id="cell-1")]
    path = project / "n.ipynb"
    nbformat.write(nb, str(path))
    original = path.read_bytes()
    edit = {"notebook_path": str(path), "cell_id": "cell-1", "new_source": "print(2)"}
    scenario = Scenario.of(
        Turn([tool_use("Read", {"file_path": str(path)})]),
        Turn([tool_use("NotebookEdit", edit)]),
        Turn([text("edited")]),
    )
    with ScriptedServer(scenario) as server:
        session = open_session(server, project, **BYPASS)
        events = await collect(session.run_turn("edit the notebook"))
        assert not [e for e in events if isinstance(e, ToolFinished) and e.is_error]
        assert "print(2)" in path.read_text()
        (point,) = session.rewind_points()
        session.rewind(point.message_id, conversation=False, files=True)
        assert path.read_bytes() == original
        await session.close()
        server.assert_done()
