"""``nerve -p`` input: piped stdin with and without a prompt, a huge stdin budgeted, a silent
stdin not waited on forever; UserPromptSubmit context kept for the whole turn and after."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import NERVE, Harness


def _first_user_text(run_body: dict) -> str:
    content = run_body["messages"][0]["content"]
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if b.get("type") == "text")


def test_piped_stdin_is_appended_to_the_prompt(harness: Harness) -> None:
    diff = "diff --git a/x b/x\n-old\n+new\n"
    run = harness.run(["-p", "review this"], Scenario.of(Turn([text("LGTM")])), input=diff)
    assert run.rc == 0, run.stderr
    assert run.stdout.strip() == "LGTM"
    sent = _first_user_text(run.server.requests[0].body)
    assert sent == "review this\n\n" + diff


def test_stdin_alone_is_the_prompt_and_empty_stdin_keeps_the_prompt(harness: Harness) -> None:
    run = harness.run(["-p"], Scenario.of(Turn([text("ok")])), input="just stdin\n")
    assert run.rc == 0, run.stderr
    assert _first_user_text(run.server.requests[0].body) == "just stdin\n"
    run = harness.run(["-p", "only the prompt"], Scenario.of(Turn([text("ok")])), input="")
    assert run.rc == 0, run.stderr
    assert _first_user_text(run.server.requests[0].body) == "only the prompt"


def test_no_prompt_and_empty_stdin_is_a_clear_error(harness: Harness) -> None:
    run = harness.run(["-p"], None, input="  \n")
    assert run.rc == 2
    assert "needs a prompt" in run.stderr


def test_huge_stdin_is_budgeted_with_a_note_and_saved_whole(harness: Harness) -> None:
    lines = [f"line {i:06d} " + "x" * 40 for i in range(60_000)]  # ~3 MB
    huge = "\n".join(lines) + "\n"
    run = harness.run(["-p", "summarise"], Scenario.of(Turn([text("summary")])), input=huge)
    assert run.rc == 0, run.stderr
    sent = _first_user_text(run.server.requests[0].body)
    assert sent.startswith("summarise\n\nline 000000 ")
    assert len(sent) < 110_000  # the default budget is 100,000 characters of stdin
    note = re.search(r"\[stdin was (\S+), over the prompt budget .* saved at (\S+) ", sent)
    assert note is not None, sent[-500:]
    assert note.group(1).endswith("MB")
    saved = Path(note.group(2))
    assert saved.read_text() == huge  # nothing lost
    assert "over the prompt budget" in run.stderr and str(saved) in run.stderr
    # the kept part ends at a line end, and the note follows it
    body = sent.split("\n\n[stdin was", 1)[0]
    assert body.splitlines()[-1] in lines


def test_stdin_budget_comes_from_the_environment(harness: Harness) -> None:
    harness.env["NERVE_STDIN_MAX_CHARS"] = "50"
    data = "".join(f"{i:03d}\n" for i in range(100))
    run = harness.run(["-p"], Scenario.of(Turn([text("ok")])), input=data)
    assert run.rc == 0, run.stderr
    sent = _first_user_text(run.server.requests[0].body)
    kept = sent.split("\n\n[stdin was", 1)[0]
    assert data.startswith(kept) and 25 < len(kept) <= 50
    assert "over the prompt budget of 50 characters" in sent


def test_binary_stdin_is_decoded_with_a_warning(harness: Harness) -> None:
    server = harness.server(Scenario.of(Turn([text("ok")])))
    try:
        proc = subprocess.run(
            [NERVE, "-p", "what is this"],
            cwd=harness.project,
            env=harness.env_for(server),
            input=b"abc\xff\xfedef",
            capture_output=True,
            timeout=60,
        )
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stderr
    assert b"not valid UTF-8" in proc.stderr
    assert _first_user_text(server.requests[0].body) == "what is this\n\nabc\ufffd\ufffddef"


def test_a_silent_stdin_is_not_waited_on_forever(harness: Harness) -> None:
    """A prompt with an inherited pipe that nobody writes to or closes: go on without it."""
    server = harness.server(Scenario.of(Turn([text("went on")])))
    proc = subprocess.Popen(
        [NERVE, "-p", "hello"],
        cwd=harness.project,
        env=harness.env_for(server),
        stdin=subprocess.PIPE,  # kept open, never written
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = _wait_output(proc)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        server.stop()
    assert proc.returncode == 0, err
    assert out.strip() == "went on"
    assert "no input arrived on stdin" in err
    assert _first_user_text(server.requests[0].body) == "hello"


def _wait_output(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """stdout and stderr once the process exits, with its stdin still open."""
    assert proc.stdout is not None and proc.stderr is not None
    proc.wait(timeout=60)
    return proc.stdout.read(), proc.stderr.read()


def _context_hook(harness: Harness) -> None:
    hook = harness.root / "ctx.sh"
    hook.write_text(
        "#!/bin/sh\ncat > /dev/null\n"
        'echo \'{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", '
        '"additionalContext": "Project codename: Falcon"}}\'\n'
    )
    hook.chmod(0o755)
    config = Path(harness.env["NERVE_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    settings = {
        "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": str(hook)}]}]}
    }
    (config / "settings.json").write_text(json.dumps(settings))


def _has_context(body: dict) -> bool:
    return json.dumps(body["messages"]).count("Project codename: Falcon") >= 1


def test_user_prompt_submit_context_stays_for_the_turn_and_after(harness: Harness) -> None:
    _context_hook(harness)
    with_context = Match(predicate=_has_context, description="the hook's context is sent")
    first = harness.run(
        ["-p", "go", "--permission-mode", "bypassPermissions"],
        Scenario.of(
            Turn([tool_use("Bash", {"command": "echo hi"}, id="t1")], match=with_context),
            Turn([text("Done.")], match=Match(tool_result_for="t1", predicate=_has_context)),
        ),
    )
    assert first.rc == 0, first.stderr
    assert len(first.server.requests) == 2
    # the next prompt of the session still carries the first prompt's context (and its own)
    second = harness.run(
        ["-p", "-c", "and now?"],
        Scenario.of(Turn([text("still Falcon")], match=with_context)),
    )
    assert second.rc == 0, second.stderr
    sent = json.dumps(second.server.requests[0].body["messages"])
    assert sent.count("Project codename: Falcon") == 2


def test_max_budget_usd_stops_cleanly_and_the_result_says_why(harness: Harness) -> None:
    scenario = Scenario.of(
        Turn(
            [tool_use("Bash", {"command": "echo spent"}, id="t1")],
            input_tokens=200_000,
            output_tokens=1_000,
        ),
        Turn([text("never asked")], match=Match(tool_result_for="t1")),
    )
    args = ["-p", "go", "--output-format", "json", "--permission-mode", "bypassPermissions"]
    run = harness.run(
        [*args, "--max-budget-usd", "0.01"],
        scenario,
        check_done=False,
    )
    assert run.rc == 1, run.stderr
    out = run.json()
    assert out["subtype"] == "error_max_budget_usd" and out["is_error"] is True
    assert out["terminal_reason"] == "budget_exhausted" and out["total_cost_usd"] >= 0.01
    assert out["errors"] == ["Reached maximum budget ($0.01)"] and "result" not in out
    assert len(run.server.requests) == 1  # the call that crossed it finished, no new request
    assert run.server.failures == []
    assert "Reached the budget of $0.01" in run.stderr


def test_max_budget_usd_must_be_positive(harness: Harness) -> None:
    run = harness.run(["-p", "go", "--max-budget-usd", "0"], None)
    assert run.rc == 2 and "--max-budget-usd must be a positive" in run.stderr
