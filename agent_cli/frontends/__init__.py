"""The ways in: print mode, the interactive app, the offline demo."""

__all__: list[str] = []
