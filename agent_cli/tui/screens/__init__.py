"""The app's modal screens: permission, question, trust, pickers, /config and /permissions."""

__all__: list[str] = []
