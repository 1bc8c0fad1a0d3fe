"""The tool system: contract, registry, pipeline, executor, budget, hooks, built-in tools."""

__all__: list[str] = []
