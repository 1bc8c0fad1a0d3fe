"""``@path`` mentions of a typed prompt: parsing, and a real session sending what they attach."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

from agent_cli.customize.mention_refs import Mention, find_mentions, find_pasted_images
from agent_cli.loop.events import Notice
from agent_cli.options import RunOptions
from agent_cli.session.agent_session import AgentSession
from agent_cli.testing import Scenario, ScriptedServer, Turn, text
from tests.agent_cli.loop.test_agent_loop import _collect, env  # noqa: F401  (fixture)


def _png(width: int = 4, height: int = 3) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (width, height), (200, 10, 10)).save(buf, format="PNG")
    return buf.getvalue()


def test_mentions_are_found_outside_code_and_e_mail_addresses() -> None:
    prompt = (
        'explain @src/app.py and @"my notes.txt", lines @a.py#L10-20 and @b.py#L7.\n'
        "mail me at me@example.com, not `@inline.py`\n```\n@fenced.py\n```\n@src/ @a.py"
    )
    assert find_mentions(prompt) == [
        Mention("src/app.py"),
        Mention("my notes.txt", quoted=True),
        Mention("a.py", 10, 20),
        Mention("b.py", 7),
        Mention("src/"),
        Mention("a.py"),  # the whole file, besides its range
    ]
    assert Mention("a.py", 10, 20).read_input(Path("/x/a.py")) == {
        "file_path": "/x/a.py",
        "offset": 10,
        "limit": 11,
    }
    assert Mention("my notes.txt", quoted=True).label == '@"my notes.txt"'


def test_pasted_image_paths_are_found_bare_quoted_or_escaped() -> None:
    prompt = "look /tmp/a.png and '/tmp/b c.JPG' and /tmp/d\\ e.webp but not /tmp/f.txt"
    assert find_pasted_images(prompt) == ["/tmp/a.png", "/tmp/b c.JPG", "/tmp/d e.webp"]


def _session(server: ScriptedServer, cwd: Path, **opts: Any) -> AgentSession:
    os.environ["ANTHROPIC_BASE_URL"] = server.base_url
    return AgentSession.create(RunOptions(**opts), cwd=cwd)


def _sent(server: ScriptedServer) -> list[dict[str, Any]]:
    content = server.requests[0].body["messages"][0]["content"]
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


def _texts(blocks: list[dict[str, Any]]) -> str:
    return "\n".join(b.get("text", "") for b in blocks if b["type"] == "text")


def _notices(events: list[Any]) -> list[str]:
    return [e.text for e in events if isinstance(e, Notice)]


async def _turn(project: Path, prompt: str) -> tuple[list[dict[str, Any]], list[str]]:
    with ScriptedServer(Scenario.of(Turn([text("ok")]))) as server:
        session = _session(server, project)
        events = await _collect(session, prompt)
        server.assert_done()
        await session.close()
        return _sent(server), _notices(events)


async def test_a_mentioned_file_is_sent_as_a_read_result(env: Path) -> None:  # noqa: F811
    (env / "a.py").write_text("".join(f"line {i}\n" for i in range(1, 31)))
    blocks, notices = await _turn(env, "explain @a.py")
    assert blocks[0] == {"type": "text", "text": "explain @a.py"}
    sent = _texts(blocks)
    assert (
        f'Called the Read tool with the following input: {{"file_path": "{env / "a.py"}"}}' in sent
    )
    assert "     1\tline 1\n" in sent and "    30\tline 30" in sent
    assert "Read a.py (30 lines)" in notices

    blocks, notices = await _turn(env, "look at @a.py#L10-12")
    sent = _texts(blocks)
    assert "    10\tline 10\n    11\tline 11\n    12\tline 12" in sent
    assert "line 9\n" not in sent and "line 13" not in sent
    assert "Read a.py (lines 10-12 of 30)" in notices


async def test_a_directory_is_listed_and_a_plain_prompt_is_sent_as_typed(
    env: Path,  # noqa: F811
) -> None:
    (env / "src").mkdir()
    (env / "src" / "app.py").write_text("x = 1\n")
    blocks, notices = await _turn(env, "what is in @src/")
    assert "app.py" in _texts(blocks[1:])
    assert "Listed src" in notices

    with ScriptedServer(Scenario.of(Turn([text("ok")]))) as server:
        session = _session(server, env)
        await _collect(session, "hello, write to me@example.com about @dataclass")
        assert _sent(server) == [
            {"type": "text", "text": "hello, write to me@example.com about @dataclass"}
        ]
        await session.close()


async def test_binary_missing_and_denied_files_are_notes_not_content(
    env: Path,  # noqa: F811
) -> None:
    (env / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    (env / "latin.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    (env / "secrets").mkdir()
    (env / "secrets" / "key.txt").write_text("TOP-SECRET-VALUE\n")
    (env / ".claude").mkdir()
    settings = {"permissions": {"deny": ["Read(./secrets/**)"]}}
    (env / ".claude" / "settings.json").write_text(json.dumps(settings))
    blocks, notices = await _turn(env, "check @blob.bin @gone.py @secrets/key.txt @latin.txt")
    sent = _texts(blocks)
    assert "TOP-SECRET-VALUE" not in json.dumps(blocks)
    assert "binary" not in sent.split("(@blob.bin")[0]
    assert "(@blob.bin was not attached: Cannot read" in sent and "binary file" in sent
    assert "(@gone.py was not attached: not found)" in sent
    assert "(@secrets/key.txt was not attached:" in sent
    assert "     1\tcafé" in sent  # not UTF-8: decoded as Read decodes it
    warned = "\n".join(notices)
    assert "@gone.py was not attached: no such file or directory" in warned
    assert "@secrets/key.txt was not attached" in warned and "@blob.bin was not attached" in warned


async def test_a_pasted_image_path_is_sent_as_an_image_block(
    env: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    shot = env / "shot 1.png"
    shot.write_bytes(_png(5, 4))
    blocks, notices = await _turn(env, f"what is this? '{shot}'")
    [image] = [b for b in blocks if b["type"] == "image"]
    assert image["source"]["media_type"] == "image/png"
    assert image["source"]["data"]
    assert "Image" in _texts(blocks) and "(5x4)" in _texts(blocks)
    assert "Read shot 1.png (image)" in notices


async def test_the_transcript_keeps_the_attachment_and_a_resume_shows_one_line(
    env: Path,  # noqa: F811
) -> None:
    from agent_cli.tui.widgets.conversation import entries_from_messages

    (env / "a.py").write_text("SECRET_SAUCE = 1\n")
    (env / "pic.png").write_bytes(_png())
    with ScriptedServer(Scenario.of(Turn([text("ok")]))) as server:
        session = _session(server, env)
        await _collect(session, f"explain @a.py and @gone.txt and {env / 'pic.png'}")
        await session.close()
    again = AgentSession.create(RunOptions(continue_session=True), cwd=env, interactive=True)
    first = again.loop.messages[0]
    assert "     1\tSECRET_SAUCE = 1" in _texts(first["content"])
    assert any(b["type"] == "image" for b in first["content"])
    entries = entries_from_messages([first])
    assert [(e.kind, e.text) for e in entries] == [
        ("user", f"explain @a.py and @gone.txt and {env / 'pic.png'}"),
        ("notice", f"Read {env / 'a.py'}"),
        ("notice", "@gone.txt was not attached: not found"),
        ("notice", f"Read {env / 'pic.png'}"),
    ]
    await again.close()
