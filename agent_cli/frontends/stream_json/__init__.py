"""``--output-format stream-json``: Claude Code's frames, one JSON object a line."""

__all__: list[str] = []
