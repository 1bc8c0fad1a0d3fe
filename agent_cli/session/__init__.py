"""A running session: build (the composition root), the port a UI drives, admin, resume, folder trust."""

__all__: list[str] = []
