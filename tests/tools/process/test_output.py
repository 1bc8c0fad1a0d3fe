"""The output collector on its own: bounded memory, spooling, the spool cap, progress lines."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tools.builtin.bash.format import benign_exit, excerpt, format_size
from tools.process import output as output_mod
from tools.process.output import (
    HEAD_BYTES,
    INLINE_BYTES,
    BashProgress,
    OutputCollector,
    clean_text,
    new_spool_path,
)


def collector(tmp_path: Path, events: list[BashProgress] | None = None) -> OutputCollector:
    return OutputCollector(
        spool_path_factory=lambda: new_spool_path(tmp_path),
        on_progress=events.append if events is not None else None,
    )


def test_small_output_stays_in_memory(tmp_path: Path) -> None:
    c = collector(tmp_path)
    c.feed(b"a\nb\n")
    c.finish()
    assert c.complete and c.all_bytes() == b"a\nb\n" and c.spool_path is None
    assert list(tmp_path.iterdir()) == []
    c.close()


def test_large_output_spools_and_keeps_head_and_tail(tmp_path: Path) -> None:
    c = collector(tmp_path)
    data = b"".join(b"%d\n" % i for i in range(300_000))
    for i in range(0, len(data), 4096):
        c.feed(data[i : i + 4096])
    c.finish()
    assert not c.complete and len(data) > INLINE_BYTES
    assert c.head_bytes() == data[:HEAD_BYTES]
    assert data.endswith(c.tail_bytes())
    assert c.total_bytes == len(data) and c.total_lines == 300_000
    assert c.spool_path is not None and c.spool_path.read_bytes() == data
    text, cut = excerpt(c, failed=False)
    assert cut and text.startswith("0\n1\n") and text.endswith("299999\n")
    c.close()


def test_spool_cap_stops_writing_but_keeps_counting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(output_mod, "SPOOL_CAP_BYTES", 400_000)
    c = collector(tmp_path)
    for _ in range(100):
        c.feed(b"x" * 9_999 + b"\n")
    c.finish()
    assert c.spool_cut and c.spool_bytes == 400_000
    assert c.spool_path is not None and c.spool_path.stat().st_size == 400_000
    assert c.total_bytes == 1_000_000 and c.total_lines == 100
    c.close()


def test_short_output_over_the_char_limit_is_spooled_on_demand(tmp_path: Path) -> None:
    c = collector(tmp_path)
    c.feed(b"y" * 40_000 + b"\n")
    c.finish()
    assert c.complete
    path = c.ensure_spool()
    assert path is not None and path.read_bytes() == b"y" * 40_000 + b"\n"
    c.close()


async def test_progress_is_throttled_and_the_final_state_is_kept(tmp_path: Path) -> None:
    events: list[BashProgress] = []
    c = collector(tmp_path, events)
    for i in range(1000):
        c.feed(b"line %d\n" % i)
    burst = len(events)
    assert 1 <= burst < 100  # 1000 chunks, throttled to one event per 50 ms
    await asyncio.sleep(0.15)  # the deferred event shows the latest state without new data
    assert len(events) == burst + 1 and events[-1].last_lines[-1] == "line 999"
    c.feed(b"part")
    c.feed(b"ial\n")
    c.finish()
    assert events[-1].lines_so_far == 1001
    assert events[-1].last_lines == ("line 996", "line 997", "line 998", "line 999", "partial")
    c.close()


def test_progress_lines_across_chunk_boundaries(tmp_path: Path) -> None:
    events: list[BashProgress] = []
    c = collector(tmp_path, events)
    c.feed(b"hel")
    c.feed(b"lo\nwor")
    c.finish()
    assert events[-1].last_lines == ("hello", "wor") and events[-1].lines_so_far == 2
    c.close()


def test_clean_text() -> None:
    assert clean_text(b"a\r\nb\r\n") == "a\nb\n"
    assert clean_text(b"10%\r50%\r100%\ndone") == "100%\ndone"
    assert clean_text(b"spinner\r") == "spinner"
    assert clean_text(b"\xffok") == "\ufffdok"


def test_format_size_and_benign_exits() -> None:
    assert format_size(512) == "512 bytes"
    assert format_size(2048) == "2KB"
    assert format_size(1536 * 1024) == "1.5MB"
    assert benign_exit("grep -r foo .", 1)
    assert benign_exit("FOO=1 command grep x f", 1)
    assert benign_exit("cat f | /usr/bin/grep x", 1)
    assert not benign_exit("grep x f", 2)
    assert not benign_exit("grep x f; false", 1)
    assert not benign_exit("grep 'unterminated", 1)
