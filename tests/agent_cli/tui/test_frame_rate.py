"""The app paints up to ``FRAME_RATE`` frames a second (a keystroke's echo waits for the next
frame tick), unless the user set ``TEXTUAL_FPS``; the variable does not leak to the tools.

Fresh interpreters: Textual reads the rate once, when it is first imported.
"""

from __future__ import annotations

import os
import subprocess
import sys

from agent_cli.tui import FRAME_RATE, SWITCH_INTERVAL_S

# run_tui with a stand-in app that reports what Textual's screen timer will use
CODE = (
    "import os, sys, types\n"
    "fake = types.ModuleType('agent_cli.tui.app')\n"
    "class NerveApp:\n"
    "    return_code = 0\n"
    "    def __init__(self, *a, **k): pass\n"
    "    def run(self):\n"
    "        import textual.screen\n"
    "        print('PERIOD', round(1 / textual.screen.UPDATE_PERIOD))\n"
    "        print('LEAKED', 'TEXTUAL_FPS' in os.environ)\n"
    "        print('SWITCH', sys.getswitchinterval())\n"
    "fake.NerveApp = NerveApp\n"
    "sys.modules['agent_cli.tui.app'] = fake\n"
    "from agent_cli.tui import run_tui\n"
    "run_tui()\n"
    "print('AFTER', sys.getswitchinterval())\n"
)


def run(env: dict[str, str]) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, timeout=60, env=env
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_app_paints_at_the_higher_rate_without_leaking_the_variable() -> None:
    env = {k: v for k, v in os.environ.items() if k != "TEXTUAL_FPS"}
    out = run(env)
    assert f"PERIOD {FRAME_RATE}" in out and FRAME_RATE > 60
    assert "LEAKED False" in out


def test_the_users_textual_fps_wins() -> None:
    env = {**{k: v for k, v in os.environ.items() if k != "TEXTUAL_FPS"}, "TEXTUAL_FPS": "30"}
    out = run(env)
    assert "PERIOD 30" in out
    assert "LEAKED True" in out  # theirs, left as it was


def test_other_threads_hold_up_the_app_for_a_shorter_slice_only_while_it_runs() -> None:
    out = run({k: v for k, v in os.environ.items() if k != "TEXTUAL_FPS"})
    assert f"SWITCH {SWITCH_INTERVAL_S}" in out and SWITCH_INTERVAL_S < 0.005
    assert "AFTER 0.005" in out  # Python's default, back once the app ended
