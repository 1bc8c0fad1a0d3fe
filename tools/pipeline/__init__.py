"""The fourteen steps every tool call travels, the streaming executor, the result budget."""

__all__: list[str] = []
