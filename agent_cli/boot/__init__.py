"""What the ``nerve`` process does to itself before it builds anything: the cyclic GC paused
while the session is built, pydantic's plugin discovery skipped, Textual's command palette
left out, and what start-up compiles and where its modules are kept between runs. Imports nothing of Nerve's own: every wing may use it."""

__all__: list[str] = []
