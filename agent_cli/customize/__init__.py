"""What users write in .claude/ and .nerve/: memory files and agent definitions."""

__all__: list[str] = []
