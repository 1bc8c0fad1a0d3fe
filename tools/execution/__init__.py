"""Running tool calls: the 14-step pipeline, the streaming executor, hooks, result budget."""

__all__: list[str] = []
