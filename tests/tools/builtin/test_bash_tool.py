"""The Bash tool end to end with real processes: output, exit codes, cwd, validation, traits."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pydantic
import pytest

from tests.tools.builtin.test_bash_support import call, make_ctx, no_survivors
from tools.builtin.bash import BASH_TOOL, TOOLS, BashInput
from tools.builtin.bash.format import BashOutput
from tools.process.output import BashProgress

__all__ = ["no_survivors"]


def text_of(result: object) -> str:
    content = BASH_TOOL.to_content(result.data)  # type: ignore[attr-defined]
    assert isinstance(content, str)
    return content


async def test_module_exports_tool() -> None:
    assert TOOLS == (BASH_TOOL,)
    assert BASH_TOOL.name == "Bash"
    assert BASH_TOOL.max_result_size_chars == 30_000
    assert BASH_TOOL.permission_kind.value == "bash"


async def test_stdout_and_stderr_are_merged_in_order(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    res = await call(BASH_TOOL, ctx, command="echo a; echo b >&2; echo c")
    assert not res.is_error
    assert text_of(res) == "a\nb\nc"
    assert res.data.exit_code == 0


async def test_runs_bash_without_login_or_rc_and_stdin_is_devnull(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    res = await call(
        BASH_TOOL,
        ctx,
        command='echo "$BASH_VERSION" | cut -c1; shopt -q login_shell && echo login; cat; echo end',
    )
    lines = text_of(res).splitlines()
    assert lines[0].isdigit()
    assert "login" not in lines
    assert lines[-1] == "end"  # cat read /dev/null and did not hang


async def test_progress_events_arrive_in_order_before_the_end(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    events: list[BashProgress] = []
    res = await call(
        BASH_TOOL,
        ctx,
        events,
        command="for i in 1 2 3 4; do echo line$i; sleep 0.15; done",
    )
    assert text_of(res) == "line1\nline2\nline3\nline4"
    assert len(events) >= 3
    assert all(isinstance(e, BashProgress) for e in events)
    # the first event came before the command finished: it has not seen the last line yet
    assert "line4" not in events[0].last_lines and "line1" in events[0].last_lines
    counts = [e.lines_so_far for e in events]
    assert counts == sorted(counts)
    seen: list[str] = []
    for e in events:
        for line in e.last_lines:
            if line not in seen:
                seen.append(line)
    assert seen == ["line1", "line2", "line3", "line4"]
    # the final state is never dropped
    assert events[-1].lines_so_far == 4 and events[-1].last_lines[-1] == "line4"
    assert events[-1].bytes == len("line1\n") * 4


async def test_progress_last_lines_are_bounded_and_include_partial_line(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    events: list[BashProgress] = []
    await call(BASH_TOOL, ctx, events, command="seq 1 1000; printf 'tail-no-newline'")
    final = events[-1]
    assert final.lines_so_far == 1001
    assert final.last_lines == ("997", "998", "999", "1000", "tail-no-newline")


async def test_exit_code_is_an_error(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    res = await call(BASH_TOOL, ctx, command="echo before; exit 3")
    assert res.is_error
    assert res.data.exit_code == 3
    assert text_of(res) == "before\n[Exit code 3]"
    res = await call(BASH_TOOL, ctx, command="false")
    assert res.is_error and res.data.exit_code == 1


async def test_exit_1_of_search_and_test_programs_is_plain(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    (ctx.cwd / "f.txt").write_text("alpha\n")
    (ctx.cwd / "g.txt").write_text("beta\n")
    for command in (
        "grep nomatch f.txt",
        "cat f.txt | grep -c nomatch",
        "diff f.txt g.txt",
        "test -e missing",
        "[ -e missing ]",
        f"{Path(sys.executable).parent / 'rg'} nomatch f.txt",
    ):
        res = await call(BASH_TOOL, ctx, command=command)
        assert not res.is_error, command
        assert res.data.exit_code == 1, command
    # exit 2 (a real grep error) and exit 1 from anything else are errors
    res = await call(BASH_TOOL, ctx, command="grep x /nonexistent/file")
    assert res.is_error and res.data.exit_code == 2
    res = await call(BASH_TOOL, ctx, command="grep -q alpha f.txt && false")
    assert res.is_error


async def test_signal_is_reported(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    res = await call(BASH_TOOL, ctx, command="echo x; kill -9 $$")
    assert res.is_error
    assert res.data.signal == "SIGKILL" and res.data.exit_code is None
    assert "[Killed by signal SIGKILL]" in text_of(res)


async def test_unicode_binary_and_carriage_returns(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    res = await call(BASH_TOOL, ctx, command="echo 'héllo 世界 🎉'")
    assert text_of(res) == "héllo 世界 🎉"
    res = await call(BASH_TOOL, ctx, command=r"printf '\xff\xfe\x80ok\n'")
    assert not res.is_error
    assert text_of(res) == "\ufffd\ufffd\ufffdok"
    res = await call(BASH_TOOL, ctx, command=r"printf 'progress 10%%\rprogress 100%%\r\ndone\r\n'")
    assert text_of(res) == "progress 100%\ndone"


async def test_empty_output_says_so(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    res = await call(BASH_TOOL, ctx, command="true")
    assert text_of(res) == "(Bash completed with no output)"


async def test_cwd_persists_inside_working_dirs(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    (ctx.cwd / "sub" / "deeper").mkdir(parents=True)
    res = await call(BASH_TOOL, ctx, command="cd sub")
    assert not res.is_error
    res = await call(BASH_TOOL, ctx, command="pwd")
    assert text_of(res) == str((ctx.cwd / "sub").resolve())
    # a cd in a subshell does not count
    await call(BASH_TOOL, ctx, command="(cd deeper)")
    res = await call(BASH_TOOL, ctx, command="pwd")
    assert text_of(res) == str((ctx.cwd / "sub").resolve())
    # the exit code survives the cwd trailer
    res = await call(BASH_TOOL, ctx, command="cd deeper && false")
    assert res.is_error and res.data.exit_code == 1
    res = await call(BASH_TOOL, ctx, command="pwd")
    assert text_of(res) == str((ctx.cwd / "sub" / "deeper").resolve())


async def test_cwd_resets_when_leaving_working_dirs(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    (ctx.cwd / "sub").mkdir()
    await call(BASH_TOOL, ctx, command="cd sub")
    res = await call(BASH_TOOL, ctx, command="cd / && echo moved")
    assert not res.is_error
    assert text_of(res) == f"moved\nShell cwd was reset to {ctx.cwd}"
    res = await call(BASH_TOOL, ctx, command="pwd")
    assert text_of(res) == str(ctx.cwd.resolve())


async def test_cwd_may_move_into_an_additional_dir(tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    ctx = make_ctx(tmp_path, additional=(extra,))
    await call(BASH_TOOL, ctx, command=f"cd {extra}")
    res = await call(BASH_TOOL, ctx, command="pwd")
    assert text_of(res) == str(extra.resolve())


async def test_deleted_cwd_falls_back_with_notice(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    (ctx.cwd / "gone").mkdir()
    await call(BASH_TOOL, ctx, command="cd gone")
    (ctx.cwd / "gone").rmdir()
    res = await call(BASH_TOOL, ctx, command="pwd")
    assert text_of(res) == f"{ctx.cwd.resolve()}\nShell cwd was reset to {ctx.cwd}"


async def test_exported_variables_do_not_persist(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    await call(BASH_TOOL, ctx, command="export NERVE_TEST_VAR=1")
    res = await call(BASH_TOOL, ctx, command='echo "${NERVE_TEST_VAR:-unset}"')
    assert text_of(res) == "unset"


async def test_command_ending_in_comment_or_heredoc_runs_unchanged(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    res = await call(BASH_TOOL, ctx, command="echo hi # trailing comment")
    assert text_of(res) == "hi"
    res = await call(BASH_TOOL, ctx, command="cat <<'EOF'\nline one\nEOF")
    assert text_of(res) == "line one"
    res = await call(BASH_TOOL, ctx, command="echo hi \\")
    assert text_of(res) == "hi" and res.data.exit_code == 0


# -- validation and schema ----------------------------------------------------------------------


@pytest.mark.parametrize("command", ["", "   ", "\n\t"])
async def test_empty_command_refused(tmp_path: Path, command: str) -> None:
    err = await BASH_TOOL.validate_input(BashInput(command=command), make_ctx(tmp_path))
    assert err is not None and err.code == "empty_command"


@pytest.mark.parametrize(
    "command",
    [
        "sleep 5",
        "sleep 2",
        "sleep 5;",
        "sleep 1; sleep 1.5",
        "sleep 3 && sleep 1",
        "sleep 1m",
        "sleep infinity",
    ],
)
async def test_standalone_sleep_refused(tmp_path: Path, command: str) -> None:
    err = await BASH_TOOL.validate_input(BashInput(command=command), make_ctx(tmp_path))
    assert err is not None and err.code == "standalone_sleep"
    assert "run_in_background" in err.message and "TaskOutput" in err.message


@pytest.mark.parametrize(
    "command", ["sleep 1", "sleep 5 && echo hi", "sleep 0.5; ls", "echo sleep 5"]
)
async def test_other_sleeps_allowed(tmp_path: Path, command: str) -> None:
    assert await BASH_TOOL.validate_input(BashInput(command=command), make_ctx(tmp_path)) is None


async def test_background_sleep_allowed(tmp_path: Path) -> None:
    inp = BashInput(command="sleep 30", run_in_background=True)
    assert await BASH_TOOL.validate_input(inp, make_ctx(tmp_path)) is None


def test_timeout_bounds_are_in_the_schema() -> None:
    with pytest.raises(pydantic.ValidationError):
        BashInput.model_validate({"command": "ls", "timeout": 600_001})
    with pytest.raises(pydantic.ValidationError):
        BashInput.model_validate({"command": "ls", "timeout": 0})
    assert BashInput.model_validate({"command": "ls", "timeout": 600_000}).timeout == 600_000
    schema = BASH_TOOL.input_schema()
    assert schema["required"] == ["command"]
    assert set(schema["properties"]) == {
        "command",
        "timeout",
        "description",
        "run_in_background",
        "dangerouslyDisableSandbox",  # Claude Code's name; see tools/sandbox/policy.py
    }


def test_internal_sed_field_is_hidden_and_cannot_be_injected() -> None:
    schema_text = json.dumps(BASH_TOOL.api_schema())
    assert "simulated" not in schema_text.lower()
    injected = {
        "file_path": "/etc/passwd",
        "new_content": "pwned",
        "original_hash": "0" * 64,
    }
    for key in ("_simulated_sed_edit", "simulated_sed_edit"):
        inp = BashInput.model_validate({"command": "sed -i s/a/b/ f", key: injected})
        assert inp.simulated_sed_edit is None
        assert (
            BashInput.model_validate_json(
                json.dumps({"command": "x", key: injected})
            ).simulated_sed_edit
            is None
        )
    # the dump (transcripts, hooks) never carries it either
    inp = BashInput(command="x").model_copy(update={"simulated_sed_edit": None})
    assert (
        "simulated_sed_edit" not in inp.model_dump()
        and "_simulated_sed_edit" not in inp.model_dump(by_alias=True)
    )


# -- traits and rendering ---------------------------------------------------------------------


def test_background_is_never_concurrency_safe() -> None:
    assert BASH_TOOL.is_concurrency_safe(BashInput(command="ls", run_in_background=True)) is False
    assert BASH_TOOL.is_read_only(BashInput(command="rm -rf build")) is False


def test_traits_follow_the_bash_analysis() -> None:
    analysis = pytest.importorskip("permissions.bash")
    if not hasattr(analysis, "is_read_only_command"):
        pytest.skip("permissions.bash.is_read_only_command has not landed yet")
    for command in ("ls -la", "git status", "cat README.md | grep x"):
        expected = analysis.is_read_only_command(command, None)
        assert BASH_TOOL.is_read_only(BashInput(command=command)) is expected
        assert BASH_TOOL.is_concurrency_safe(BashInput(command=command)) is expected
    assert BASH_TOOL.is_read_only(BashInput(command="ls -la")) is True
    assert BASH_TOOL.is_concurrency_safe(BashInput(command="ls -la")) is True
    assert BASH_TOOL.is_read_only(BashInput(command="rm -rf build")) is False
    assert BASH_TOOL.is_concurrency_safe(BashInput(command="rm -rf build")) is False


def test_render_hooks() -> None:
    long = "echo " + "x" * 300 + "\n  && ls"
    rendered = BASH_TOOL.render_call(BashInput(command=long))  # type: ignore[misc]
    assert "\n" not in rendered and len(rendered) <= 120 and rendered.endswith("…")
    assert BASH_TOOL.describe_call(BashInput(command="git status")) == "Bash(git status)"
    progress = BashProgress(lines_so_far=12, last_lines=("a", "b"), bytes=2048)
    assert BASH_TOOL.render_progress(progress).startswith("a\nb\n")  # type: ignore[misc]
    ok = BashOutput(output="x\n", exit_code=0, total_bytes=2, total_lines=1)
    assert BASH_TOOL.render_result(ok) == "Done · 1 lines"  # type: ignore[misc]
    bad = BashOutput(output="", exit_code=3, is_error=True)
    assert BASH_TOOL.render_result(bad) == "Exit code 3"  # type: ignore[misc]


async def test_cwd_trailer_does_not_touch_the_commands_own_fds(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    (ctx.cwd / "sub").mkdir()
    res = await call(BASH_TOOL, ctx, command="exec 3>log.txt; echo mine >&3; cd sub")
    assert not res.is_error
    assert (ctx.cwd / "log.txt").read_text() == "mine\n"
    res = await call(BASH_TOOL, ctx, command="pwd")
    assert text_of(res) == str((ctx.cwd / "sub").resolve())


async def test_command_that_exits_keeps_the_previous_cwd(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    (ctx.cwd / "sub").mkdir()
    res = await call(BASH_TOOL, ctx, command="cd sub; exit 0")
    assert not res.is_error
    res = await call(BASH_TOOL, ctx, command="pwd")
    assert text_of(res) == str(ctx.cwd.resolve())
