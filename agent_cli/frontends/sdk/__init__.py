"""The Agent SDK's mode: the control protocol over stream-json, both ways."""

__all__: list[str] = []
