"""Settings: models, layered loading with provenance, atomic rule writes. Imports nothing of ours."""

__all__: list[str] = []
