"""The agent loop: turns, events, messages, the system prompt, the transcript recorder."""

__all__: list[str] = []
