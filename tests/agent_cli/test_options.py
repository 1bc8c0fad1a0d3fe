"""Main flag parsing: rule lists, print mode flags, resume forms, bad values."""

from __future__ import annotations

import pytest

from agent_cli.options import (
    OptionsError,
    RunOptions,
    parse_run_options,
    parse_with_argparse,
    split_rule_list,
)


def test_split_rule_list_keeps_commas_and_spaces_inside_parentheses() -> None:
    assert split_rule_list(["Bash(git diff *),Read", "Edit  WebFetch(domain:a.com)"]) == [
        "Bash(git diff *)",
        "Read",
        "Edit",
        "WebFetch(domain:a.com)",
    ]
    assert split_rule_list(["Bash(echo a,b)"]) == ["Bash(echo a,b)"]
    assert split_rule_list(None) == []


def test_print_mode_flags() -> None:
    o = parse_run_options(
        [
            "-p",
            "fix it",
            "--output-format",
            "json",
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "Bash(npm test *),Read",
            "--disallowedTools",
            "Bash(rm *)",
            "--max-turns",
            "3",
            "--model",
            "opus",
            "--add-dir",
            "../docs",
        ]
    )
    assert o.print_mode and o.prompt == "fix it" and o.output_format == "json"
    assert o.permission_mode == "acceptEdits"
    assert o.allowed_tools == ["Bash(npm test *)", "Read"]
    assert o.disallowed_tools == ["Bash(rm *)"]
    assert o.max_turns == 3 and o.model == "opus" and o.add_dirs == ["../docs"]


def test_resume_forms() -> None:
    assert parse_run_options(["-r"]).resume == ""
    assert parse_run_options(["--resume", "abc"]).resume == "abc"
    assert parse_run_options(["-c", "-p", "x"]).continue_session
    assert parse_run_options([]).resume is None


@pytest.mark.parametrize(
    "argv",
    [["--output-format", "xml"], ["--permission-mode", "yolo"], ["--max-turns", "0"], ["--nope"]],
)
def test_bad_flags_raise_clear_errors(argv: list[str]) -> None:
    with pytest.raises(OptionsError):
        parse_run_options(argv)


def test_no_arguments_are_the_parsers_defaults_without_building_it() -> None:
    # plain ``nerve`` skips argparse; what it gets must be exactly what the parser gives
    assert parse_run_options([]) == parse_with_argparse([]) == RunOptions()


def test_plain_nerve_does_not_import_argparse() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from agent_cli.options import parse_run_options; parse_run_options([]);"
        "print('argparse' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
