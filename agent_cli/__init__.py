"""Nerve: the application layer (CLI, model client, agent loop, transcripts, TUI)."""

__version__ = "0.1.0"

__all__ = ["__version__"]
