"""``nerve demo``: the offline tour and its scripted model."""

__all__: list[str] = []
