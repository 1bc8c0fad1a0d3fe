"""``agent_cli.tui.css_cache``: Textual's parsed stylesheets kept between runs.

Fresh interpreters, as ``nerve`` starts: a run with the file must give every widget the same
styles as a run without it, take the texts from the file on the second run, and parse afresh
whatever does not fit (another theme's variables, a damaged entry).
"""

from __future__ import annotations

import marshal
import subprocess
import sys
from pathlib import Path

APP = r"""
import asyncio
from textual.app import App
from textual.widgets import Static

class Demo(App):
    CSS = '''
    Static { background: $primary; height: 3; border: round $accent; }
    #b { color: red; padding: 1 2; }
    Static:hover { text-style: bold; }
    '''
    def compose(self):
        yield Static("a", id="a")
        yield Static("b", id="b")

def show(app, label):
    for w in app.query(Static):
        s = w.styles
        print("STYLE", label, w.id, s.background, s.height, s.color, s.border, s.padding)
    rules = [(r.selectors, sorted(map(repr, r.styles.get_rules().items()))) for r in app.stylesheet.rules]
    print("RULES", label, len(rules), sorted(map(repr, rules)))

async def main():
    app = Demo()
    async with app.run_test() as pilot:
        show(app, "first theme")
        app.theme = "nord"
        await pilot.pause()
        show(app, "nord")

asyncio.run(main())
"""


def run(code: str) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def with_cache(path: Path) -> str:
    return (
        "from agent_cli.boot import code_cache\n"
        f"code_cache.install({str(path)!r})\n"
        "from agent_cli.tui import css_cache\n"
        "css_cache.install()\n"
        f"{APP}\n"
        "print('CSS', css_cache.stats())\n"
        "print('SAVED', code_cache.save())\n"
    )


def styles(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith(("STYLE", "RULES"))]


def counts(lines: list[str]) -> str:
    return next(line for line in lines if line.startswith("CSS"))


def test_the_second_run_takes_the_parsed_css_and_styles_are_the_same(tmp_path: Path) -> None:
    cache = tmp_path / "start.marshal"
    plain = run(APP)
    assert any("STYLE nord a" in line for line in plain)
    first = run(with_cache(cache))
    assert "'hits': 0" in counts(first) and "SAVED True" in first
    second = run(with_cache(cache))
    assert styles(plain) == styles(first) == styles(second)
    # both themes' texts came from the file; nothing new to write
    assert "'parsed': 0" in counts(second), counts(second)
    assert "'hits': 0" not in counts(second)
    assert "SAVED False" in second
    data = marshal.loads(cache.read_bytes())
    assert len(data["tables"]["css"]) == 2  # one set of entries per theme's variables


def test_a_damaged_entry_is_parsed_afresh(tmp_path: Path) -> None:
    cache = tmp_path / "start.marshal"
    plain = run(APP)
    run(with_cache(cache))
    data = marshal.loads(cache.read_bytes())
    for entries in data["tables"]["css"].values():
        for key in entries:
            entries[key] = b"\x80\x05not a pickle"
    cache.write_bytes(marshal.dumps(data))
    again = run(with_cache(cache))
    assert styles(again) == styles(plain)
    assert "'hits': 0" in counts(again) and "SAVED True" in again  # parsed and stored again


def test_without_the_code_cache_nothing_is_wrapped() -> None:
    # a library caller (no code cache installed) keeps Textual's parse untouched
    out = run(
        "from agent_cli.tui import css_cache\n"
        "from textual.css.stylesheet import Stylesheet\n"
        "before = Stylesheet._parse_rules\n"
        "css_cache.install()\n"
        "print('SAME', Stylesheet._parse_rules is before, css_cache.installed())\n"
    )
    assert "SAME True False" in out
