"""Claude Code's hooks: configuration, matching, running each kind, reading their output."""

__all__: list[str] = []
