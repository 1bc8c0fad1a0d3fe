"""JSONL session transcripts and the prompt history."""

__all__: list[str] = []
