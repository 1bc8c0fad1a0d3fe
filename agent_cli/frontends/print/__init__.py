"""``nerve -p``: one turn, no UI; its prompt, slash commands, structured output."""

__all__: list[str] = []
