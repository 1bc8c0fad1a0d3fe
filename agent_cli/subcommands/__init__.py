"""Subcommands of ``nerve`` (each module exposes ``run(argv) -> int``)."""

__all__: list[str] = []
