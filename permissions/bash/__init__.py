"""Bash command analysis with tree-sitter-bash: simple commands, wrappers, read-only tables."""

__all__: list[str] = []
