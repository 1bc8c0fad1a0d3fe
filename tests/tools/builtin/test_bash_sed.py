"""The sed preview: parsing, simulation with the real sed, applying exactly what was shown."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.tools.builtin.test_bash_support import make_ctx, no_survivors
from tools.builtin.bash import BASH_TOOL, BashInput
from tools.builtin.bash.sed import parse_sed_edit

__all__ = ["no_survivors"]

TEXT = "alpha beta\nBeta gamma\nfoo/bar\nünïcode beta\n"


def real_sed(tmp_path: Path, args: list[str], content: str = TEXT) -> str:
    """What ``sed -i`` really does to a copy of the file."""
    copy = tmp_path / "reference.txt"
    copy.write_text(content, encoding="utf-8")
    subprocess.run(["sed", *args, str(copy)], check=True)
    return copy.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("command", "file", "scripts", "extended"),
    [
        ("sed -i 's/beta/BETA/g' f.txt", "f.txt", ("s/beta/BETA/g",), False),
        ("sed -i -E 's/(b)eta/\\1X/' f.txt", "f.txt", ("s/(b)eta/\\1X/",), True),
        ("sed -Ei -e 's/a/b/' -e 's|x|y|2' f.txt", "f.txt", ("s/a/b/", "s|x|y|2"), True),
        ('sed -ri "s/a/b/gI" "my file.txt"', "my file.txt", ("s/a/b/gI",), True),
        (
            "sed --in-place --expression='s/a/b/;s/c/d/' -- f.txt",
            "f.txt",
            ("s/a/b/;s/c/d/",),
            False,
        ),
        ("sed -i s/a/b/ f.txt", "f.txt", ("s/a/b/",), False),
    ],
)
def test_parses_simple_in_place_substitutions(
    command: str, file: str, scripts: tuple[str, ...], extended: bool
) -> None:
    edit = parse_sed_edit(command)
    assert edit is not None
    assert (edit.file, edit.scripts, edit.extended) == (file, scripts, extended)


@pytest.mark.parametrize(
    "command",
    [
        "sed 's/a/b/' f.txt",  # not in place
        "sed -i.bak 's/a/b/' f.txt",  # backup suffix: not simulated
        "sed -iE 's/a/b/' f.txt",  # -i with suffix "E"
        "sed -i 's/a/b/' f.txt g.txt",  # two files
        "sed -i 's/a/b/w /tmp/x' f.txt",  # w flag
        "sed -i 's/a/b/e' f.txt",  # e flag
        "sed -i '1d' f.txt",  # not a substitution
        "sed -i 's/a/b/; w /tmp/x' f.txt",
        "sed -i 's/a/b/' f.txt; rm f.txt",
        "sed -i 's/a/b/' f.txt > out",
        'sed -i "s/$HOME/b/" f.txt',
        "sed -i 's/a/b/' $FILE",
        "sed -i 's/a/b/' *.txt",
        "sed -i 's/a/b/' ~/f.txt",
        "sed -n -i 's/a/b/p' f.txt",
        "sed -i 's/a/b' f.txt",  # unterminated
        "sed -i 's/a/b/' 'f.txt",
        "gsed -i 's/a/b/' f.txt",
        "sed -i 's/[/]/x/' f.txt",  # sed's own bracket rules differ from a naive parse
        "",
    ],
)
def test_everything_else_is_not_simulated(command: str) -> None:
    assert parse_sed_edit(command) is None


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("sed -i 's/beta/BETA/g' f.txt", ["-i", "s/beta/BETA/g"]),
        ("sed -i 's/beta/X/Ig' f.txt", ["-i", "s/beta/X/Ig"]),
        ("sed -Ei 's#(foo)/(bar)#\\2/\\1#' f.txt", ["-E", "-i", "s#(foo)/(bar)#\\2/\\1#"]),
        ("sed -i -e 's/a/A/2' -e 's/ü/u/' f.txt", ["-i", "-e", "s/a/A/2", "-e", "s/ü/u/"]),
    ],
)
async def test_preview_equals_what_is_written_equals_real_sed(
    tmp_path: Path, command: str, args: list[str]
) -> None:
    ctx = make_ctx(tmp_path)
    target = ctx.cwd / "f.txt"
    target.write_text(TEXT, encoding="utf-8")
    target.chmod(0o640)
    expected = real_sed(tmp_path, args)
    assert expected != TEXT

    inp = BashInput.model_validate({"command": command})
    assert BASH_TOOL.prepare_prompt is not None
    diff, approved = await BASH_TOOL.prepare_prompt(inp, ctx)
    assert diff is not None and approved is not None
    assert target.read_text(encoding="utf-8") == TEXT  # the preview touched only a copy
    edit = approved.simulated_sed_edit
    assert edit is not None and edit.file_path == str(target) and edit.new_content == expected
    # the diff shows exactly the change that will be written
    minus = [ln[1:] for ln in diff.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    plus = [ln[1:] for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    old_lines, new_lines = TEXT.splitlines(), expected.splitlines()
    assert minus == [ln for ln in old_lines if ln not in new_lines]
    assert plus == [ln for ln in new_lines if ln not in old_lines]

    res = await BASH_TOOL.call(approved, ctx, lambda _p: None)
    assert not res.is_error, BASH_TOOL.to_content(res.data)
    assert target.read_text(encoding="utf-8") == expected
    assert target.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in ctx.cwd.iterdir()] == ["f.txt"]  # no temp files left behind


async def test_stale_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    target = ctx.cwd / "f.txt"
    target.write_text(TEXT, encoding="utf-8")
    _diff, approved = await BASH_TOOL.prepare_prompt(  # type: ignore[misc]
        BashInput(command="sed -i 's/beta/BETA/' f.txt"), ctx
    )
    assert approved is not None
    target.write_text(TEXT + "changed meanwhile\n", encoding="utf-8")
    res = await BASH_TOOL.call(approved, ctx, lambda _p: None)
    assert res.is_error
    assert "changed since the sed preview" in BASH_TOOL.to_content(res.data)  # type: ignore[operator]
    assert target.read_text(encoding="utf-8") == TEXT + "changed meanwhile\n"


async def test_simulated_edit_must_match_the_command(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    (ctx.cwd / "f.txt").write_text(TEXT, encoding="utf-8")
    (ctx.cwd / "g.txt").write_text(TEXT, encoding="utf-8")
    _diff, approved = await BASH_TOOL.prepare_prompt(  # type: ignore[misc]
        BashInput(command="sed -i 's/beta/BETA/' f.txt"), ctx
    )
    assert approved is not None
    swapped = approved.model_copy(update={"command": "sed -i 's/beta/BETA/' g.txt"})
    res = await BASH_TOOL.call(swapped, ctx, lambda _p: None)
    assert res.is_error
    assert (ctx.cwd / "f.txt").read_text(encoding="utf-8") == TEXT
    assert (ctx.cwd / "g.txt").read_text(encoding="utf-8") == TEXT


async def test_model_sent_simulated_edit_is_stripped_and_sed_really_runs(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    target = ctx.cwd / "f.txt"
    target.write_text(TEXT, encoding="utf-8")
    raw = {
        "command": "sed -i 's/beta/BETA/' f.txt",
        "_simulated_sed_edit": {
            "file_path": str(target),
            "new_content": "INJECTED\n",
            "original_hash": __import__("hashlib").sha256(TEXT.encode()).hexdigest(),
        },
    }
    inp = BASH_TOOL.input_model.model_validate(raw)
    assert inp.simulated_sed_edit is None
    res = await BASH_TOOL.call(inp, ctx, lambda _p: None)
    assert not res.is_error
    assert target.read_text(encoding="utf-8") == real_sed(tmp_path, ["-i", "s/beta/BETA/"])


async def test_no_preview_for_other_commands_or_unusable_files(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    assert await BASH_TOOL.prepare_prompt(BashInput(command="ls"), ctx) == (None, None)  # type: ignore[misc]
    missing = BashInput(command="sed -i 's/a/b/' missing.txt")
    assert await BASH_TOOL.prepare_prompt(missing, ctx) == (None, None)  # type: ignore[misc]
    (ctx.cwd / "bin.dat").write_bytes(b"\xff\xfe a \x00")
    binary = BashInput(command="sed -i 's/a/b/' bin.dat")
    assert await BASH_TOOL.prepare_prompt(binary, ctx) == (None, None)  # type: ignore[misc]
    (ctx.cwd / "f.txt").write_text(TEXT, encoding="utf-8")
    (ctx.cwd / "link.txt").symlink_to("f.txt")
    link = BashInput(command="sed -i 's/a/b/' link.txt")
    assert await BASH_TOOL.prepare_prompt(link, ctx) == (None, None)  # type: ignore[misc]
    bad_regex = BashInput(command="sed -i -E 's/(unclosed/b/' f.txt")
    assert await BASH_TOOL.prepare_prompt(bad_regex, ctx) == (None, None)  # type: ignore[misc]
    bg = BashInput(command="sed -i 's/a/b/' f.txt", run_in_background=True)
    assert await BASH_TOOL.prepare_prompt(bg, ctx) == (None, None)  # type: ignore[misc]


async def test_preview_resolves_the_file_against_the_shell_cwd(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    (ctx.cwd / "sub").mkdir()
    (ctx.cwd / "sub" / "f.txt").write_text(TEXT, encoding="utf-8")
    inp = BashInput(command="cd sub")
    await BASH_TOOL.call(inp, ctx, lambda _p: None)
    _diff, approved = await BASH_TOOL.prepare_prompt(  # type: ignore[misc]
        BashInput(command="sed -i 's/gamma/GAMMA/' f.txt"), ctx
    )
    assert approved is not None
    assert approved.simulated_sed_edit.file_path == str(ctx.cwd / "sub" / "f.txt")
    res = await BASH_TOOL.call(approved, ctx, lambda _p: None)
    assert not res.is_error
    assert "Beta GAMMA" in (ctx.cwd / "sub" / "f.txt").read_text(encoding="utf-8")


def test_sed_is_available() -> None:
    assert shutil.which("sed") is not None
