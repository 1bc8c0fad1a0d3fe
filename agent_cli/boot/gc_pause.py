"""Start-up without the cyclic garbage collector.

Importing ~550 modules creates hundreds of thousands of objects (classes, dataclass methods,
pydantic schemas) and almost no garbage, yet the collector keeps running over all of them as
they are made: ~6% of ``nerve -p``'s CPU time. The ``nerve`` process pauses it from the start
(:func:`pause`) until its session is built (:func:`resume` at the end of
``agent_cli.session.build.build_session``, whichever front end asked), then freezes what
start-up made (``gc.freeze``: later collections do not walk it again) and turns it back on.
Only the real command pauses it (``agent_cli.cli.main`` without arguments), never a caller's
process; :func:`resume` is a no-op when nothing was paused; a start-up that fails resumes too
(the session starter's ``failed`` callback, ``cli.main`` on every way out).
"""

from __future__ import annotations

import gc

__all__ = ["pause", "paused", "resume"]

_paused = False


def pause() -> None:
    """Turn the collector off until :func:`resume` (if it was on)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def paused() -> bool:
    return _paused


def resume() -> None:
    """Freeze the objects start-up made and turn the collector back on (once)."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
