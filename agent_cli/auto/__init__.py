"""Auto mode: the two-stage safety classifier and its prompts."""

__all__: list[str] = []
