"""Sub-agents: the Agent tool's runner on a child loop."""

__all__: list[str] = []
