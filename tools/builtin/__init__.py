"""Built-in tools, one module (or package) per tool."""

__all__: list[str] = []
