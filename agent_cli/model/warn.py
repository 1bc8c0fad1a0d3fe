"""``Warn``: how a transport reports what it skipped but survived (a line that is not an event,
an event whose data is not a JSON object), once, without failing the attempt.

Its own module so the transports (``http_transport``, ``sdk_transport``) and the seam that
chooses between them (``transport``) share it without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Warn"]

Warn = Callable[[str], None]
