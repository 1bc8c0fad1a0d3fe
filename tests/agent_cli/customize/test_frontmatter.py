"""YAML frontmatter: real YAML, the one-line forms Claude Code files use, errors with lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.customize.frontmatter import (
    FrontmatterError,
    as_text,
    as_words,
    parse_frontmatter,
)


def test_block_scalars_and_lists() -> None:
    front = parse_frontmatter(
        "---\n"
        "name: reviewer\n"
        "description: |\n  Reviews code.\n  Reads diffs.\n"
        "summary: >\n  one\n  two\n"
        "tools:\n  - Read\n  - Grep\n"
        "---\n\nThe body.\n"
    )
    assert front.has_frontmatter
    assert front.fields["description"] == "Reviews code.\nReads diffs.\n"
    assert front.fields["summary"] == "one two\n"
    assert as_words(front.fields["tools"]) == ("Read", "Grep")
    assert front.body == "The body."


def test_values_claude_code_accepts_that_are_not_yaml() -> None:
    front = parse_frontmatter(
        "---\n"
        "description: Review: the whole PR\n"
        "argument-hint: [file-path] [focus-area]\n"
        "tools: *\n"
        "long: Use this agent when X. Examples:\n  <example>\n  Context: y\n  </example>\n"
        "---\nbody\n"
    )
    assert front.fields["description"] == "Review: the whole PR"
    assert front.fields["argument-hint"] == "[file-path] [focus-area]"
    assert front.fields["tools"] == "*"
    assert (
        front.fields["long"] == "Use this agent when X. Examples: <example> Context: y </example>"
    )


def test_one_bracketed_hint_reads_back_as_written() -> None:
    front = parse_frontmatter("---\nargument-hint: [pr-number]\n---\n")
    assert front.fields["argument-hint"] == ["pr-number"]  # what YAML makes of it
    assert as_text(front.fields["argument-hint"]) == "[pr-number]"


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ('---\ndescription: ok\nargument-hint: "never closed\n---\n', 3, "invalid YAML"),
        ("---\nname: x\nnested:\n\tkey: 1\n---\n", 4, "invalid YAML"),
        ("---\n- a list\n- not a mapping\n---\n", 2, "must be a mapping"),
        ("---\nname: x\n", 1, "never closed"),
    ],
)
def test_broken_frontmatter_names_file_and_line(text: str, line: int, what: str) -> None:
    path = Path("/repo/.claude/commands/x.md")
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter(text, path)
    assert info.value.line == line
    assert str(info.value).startswith(f"{path}:{line}: ") and what in str(info.value)


def test_no_frontmatter_is_all_body_and_bom_is_dropped() -> None:
    plain = parse_frontmatter("\ufeff# Title\n\ntext\n")
    assert not plain.has_frontmatter and plain.fields == {} and plain.body == "# Title\n\ntext"
    empty = parse_frontmatter("---\n---\nbody")
    assert empty.has_frontmatter and empty.fields == {} and empty.body == "body"


def test_keys_are_lower_cased_and_get_takes_spellings() -> None:
    front = parse_frontmatter("---\nPermissionMode: plan\nallowed_tools: Read\n---\n")
    assert front.get("permissionmode") == "plan"
    assert front.get("allowed-tools", "allowed_tools") == "Read"


def test_word_lists() -> None:
    assert as_words("Bash(git add:*), Bash(git status:*), Read") == (
        "Bash(git add:*)",
        "Bash(git status:*)",
        "Read",
    )
    assert as_words("Bash(git diff HEAD) Read Grep") == ("Bash(git diff HEAD)", "Read", "Grep")
    assert as_words("[Read, 'Grep']") == ("Read", "Grep")
    assert as_words(None) == () and as_words({"a": 1}) == ()
    assert as_text(True) == "true" and as_text(3) == "3" and as_text({"x": 1}) is None
