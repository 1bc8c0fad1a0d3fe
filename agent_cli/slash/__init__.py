"""Slash commands: one registry shared by the interactive app and print mode.

``registry`` holds the command table and the host protocol a front end implements; ``builtin``
the commands Nerve ships; ``text`` the plain-text views they print (also used by the TUI).
"""

__all__: list[str] = []
