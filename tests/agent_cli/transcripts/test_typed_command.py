"""A stored custom-command turn reads back as the command the user typed."""

from __future__ import annotations

from agent_cli.transcripts.commands import typed_command
from agent_cli.transcripts.records import prompt_text
from agent_cli.tui.widgets.conversation import entries_from_messages

HEADER = (
    "<command-message>review</command-message>\n<command-name>/review</command-name>\n"
    "<command-args>12 --fast</command-args>"
)


def test_typed_command() -> None:
    assert typed_command(HEADER) == "/review 12 --fast"
    assert typed_command("<command-name>/init</command-name>") == "/init"
    assert typed_command("please <command-name>/x</command-name>") is None
    assert typed_command("plain prompt") is None


def test_pickers_and_resumed_conversations_show_the_command() -> None:
    content = [{"type": "text", "text": HEADER}, {"type": "text", "text": "EXPANDED BODY"}]
    assert prompt_text(content) == "/review 12 --fast"
    entries = entries_from_messages(
        [
            {"role": "user", "content": content},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            },
        ]
    )
    assert [(e.kind, e.text) for e in entries] == [
        ("user", "/review 12 --fast"),
        ("assistant", "a"),
        ("assistant", "b"),
    ]
