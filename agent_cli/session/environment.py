"""The session environment: the one mapping a session reads and passes on its variables from.

Claude Code applies settings ``env`` to its own process environment, so a variable set there
reaches the model client (``ANTHROPIC_BASE_URL``, ``ANTHROPIC_AUTH_TOKEN``, ``ANTHROPIC_MODEL``,
``HTTPS_PROXY`` ...) and everything it starts. Nerve builds the same environment once per
session, in ``agent_cli.session.build``, with this precedence (highest first):

1. settings ``env``, merged over the layers (policy > ``--settings`` > local > project > user;
   an untrusted project's ``env`` is withheld, ``config.trust``);
2. the environment Nerve was started with (the shell's).

A variable the settings do not set keeps the shell's value; one they set replaces it.
Variables Nerve needs before settings can be read (``CLAUDE_CONFIG_DIR``, ``NERVE_CONFIG_DIR``,
``NERVE_POLICY_DIR``, ``NERVE_DATA_DIR``, ``NERVE_TRUST_ALL``) are taken from the shell only;
set in ``env`` they still reach the commands Nerve starts. On top of the session environment,
hooks get ``CLAUDE_PROJECT_DIR`` and spawned commands Nerve's process markers.

Why a mapping passed down rather than ``os.environ.update``: the same object goes, explicitly,
to the model configuration, the Bash tool (foreground, background tasks, ``!`` commands),
hooks and MCP servers, so what each sees is testable in-process; two sessions in one process
(tests, a future multi-session UI) never leak variables into each other; and Nerve's own
process environment stays what the user started it with.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["session_environ"]


def session_environ(
    settings_env: Mapping[str, str], base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The shell's environment (``base``, default ``os.environ``) with ``settings_env`` over it."""
    out = dict(os.environ if base is None else base)
    out.update(settings_env)
    return out
