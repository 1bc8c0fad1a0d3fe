"""Start-up budget (issue 11): what ``nerve -p`` does not load until it is used, and the cyclic
GC paused while the session is built (agent_cli.boot.gc_pause).

A real ``nerve -p`` process against the scripted server lists its ``sys.modules`` at exit: the
auto-mode classifier is not among them. The session builds it on first use, with the settings
and environment of the start (tests/agent_cli/session/test_environment.py) and classifies as
before in auto mode (tests/agent_cli/auto/test_classifier.py).
"""

from __future__ import annotations

import subprocess
import sys

from agent_cli.testing import Scenario, text
from tests.agent_cli.e2e.conftest import Harness, harness

__all__ = ["harness"]

LATER = ("agent_cli.auto.classifier", "agent_cli.auto.classifier_prompt")

CODE = (
    "import sys\n"
    "from agent_cli.cli import main\n"
    "rc = main(sys.argv[1:])\n"
    f"print('LOADED', sorted(m for m in sys.modules if m in {LATER!r}))\n"
    "print('RC', rc)\n"
)


def _python(harness: Harness, code: str, *args: str, answers: int = 1) -> str:
    """Run ``code`` in a fresh interpreter in the project against a server that answers
    "lean" ``answers`` times (all of them used); its stdout."""
    server = harness.server(Scenario.of(*([text("lean")] for _ in range(answers))))
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code, *args],
            cwd=harness.project,
            env=harness.env_for(server),
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        server.stop()
    server.assert_done()
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _run(harness: Harness, *args: str) -> str:
    out = _python(harness, CODE, *args)
    assert "lean" in out and "RC 0" in out, out
    return out


def test_print_mode_does_not_import_the_auto_mode_classifier(harness: Harness) -> None:
    assert "LOADED []" in _run(harness, "-p", "hi")


GC_CODE = """
import gc, sys
import agent_cli.cli as cli
from agent_cli.session.agent_session import AgentSession

seen = []
create = AgentSession.create.__func__

def spy(cls, *args, **kwargs):
    seen.append(gc.isenabled())
    return create(cls, *args, **kwargs)

AgentSession.create = classmethod(spy)
cli._exit_now = lambda rc: print('GC', seen, gc.isenabled(), gc.get_freeze_count() > 0, rc)
cli.main()
"""


def test_the_collector_is_paused_while_the_session_is_built_then_back_on(
    harness: Harness,
) -> None:
    out = _python(harness, GC_CODE, "-p", "hi")
    assert "lean" in out, out
    # Off during the build; on again (with start-up's objects frozen) for the turn and after.
    assert "GC [False] True True 0" in out, out


def test_a_caller_of_main_keeps_its_collector(harness: Harness) -> None:
    import gc

    from agent_cli.cli import main

    assert main(["--version"]) == 0
    assert gc.isenabled()


# What the interactive session build (``nerve``'s "session ready") does not load when the project
# has no hooks and no MCP server: what runs a hook, the MCP client, adapters and manager.
NOT_AT_READY = (
    "tools.hooks.callbacks",
    "tools.hooks.dispatch",
    "tools.hooks.http",
    "tools.hooks.output",
    "tools.hooks.process",
    "tools.hooks.verdict",
    "tools.mcp.adapter",
    "tools.mcp.client",
    "tools.mcp.manager",
)

READY_CODE = f"""
import sys
from agent_cli.frontends.interactive import InteractiveFactory
from agent_cli.options import parse_run_options

factory = InteractiveFactory(parse_run_options([]))
factory.trust_question()
session = factory()
print('TOOLS', len(session.tools()))
print('LOADED', sorted(m for m in sys.modules if m in {NOT_AT_READY!r}))
"""


def test_a_session_without_hooks_or_mcp_servers_does_not_load_their_runners(
    harness: Harness,
) -> None:
    out = _python(harness, READY_CODE, answers=0)  # builds the session, asks nothing
    assert "TOOLS " in out and "TOOLS 0" not in out, out
    assert "LOADED []" in out, out
