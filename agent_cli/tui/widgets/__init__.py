"""The conversation's widgets and the prompt input."""

__all__: list[str] = []
