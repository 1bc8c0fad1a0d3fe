"""``nerve`` without -p: open the TUI at once; the session is built behind its first frame.

Only what the first frame needs is imported here (the TUI and Textual). Settings, tools, hooks
and the git probes of ``AgentSession.create`` run in a thread after the app has painted; the
model SDK is imported later still, by ``prewarm``. Before the build, an untrusted project whose
settings would grant something gets the folder-trust prompt (``agent_cli.session.trust``). A missing API key, the one error most users
meet, is checked first (cheaply) so it stays a plain message on stderr with exit status 1.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from agent_cli.options import RunOptions

if TYPE_CHECKING:
    from agent_cli.session.port import SessionPort
    from agent_cli.session.trust import TrustQuestion

__all__ = ["InteractiveFactory", "bypass_requested", "has_credentials", "run_interactive"]


def run_interactive(options: RunOptions) -> int:
    """Run the interactive app for ``options``; returns the exit status."""
    if not has_credentials(os.environ):
        from agent_cli.model.config import MissingApiKey

        print(f"nerve: {MissingApiKey()}", file=sys.stderr)
        return 1
    try:
        from agent_cli.tui import run_tui, use_frame_rate

        use_frame_rate()  # before Textual is imported
        import agent_cli.tui.app  # noqa: F401  (Textual: needed for the first frame anyway)
    except ImportError as exc:  # pragma: no cover - the TUI ships with the package
        print(f"nerve: the interactive app is unavailable ({exc}); use -p", file=sys.stderr)
        return 1

    return run_tui(
        session_factory=InteractiveFactory(options),
        bypass_available=bypass_requested(options),
        open_resume_picker=options.resume == "" and not options.continue_session,
    )


class InteractiveFactory:
    """Builds the interactive session in the app's thread; first it offers the folder-trust
    question (``trust_question``), which the app asks before calling the factory."""

    def __init__(self, options: RunOptions, cwd: Path | None = None) -> None:
        self.options = options
        self.cwd = cwd

    def trust_question(self) -> TrustQuestion | None:
        from agent_cli.session.trust import trust_question

        return trust_question(self.cwd or Path.cwd(), self.options.settings)

    def __call__(self) -> SessionPort:
        from agent_cli.session.agent_session import AgentSession

        return AgentSession.create(self.options, cwd=self.cwd, interactive=True)


def bypass_requested(options: RunOptions) -> bool:
    """Whether bypassPermissions is available this run: the rule ``AgentSession.create`` applies."""
    return (
        options.dangerously_skip_permissions
        or options.allow_dangerously_skip_permissions
        or options.permission_mode == "bypassPermissions"
    )


def has_credentials(env: Mapping[str, str], cwd: Path | None = None) -> bool:
    """Whether ``AgentSession.create`` may find credentials: a key, a token, a custom URL, a
    cloud provider flag (the build reports what is wrong with it), or a settings file that
    names an ``apiKeyHelper`` or ``ANTHROPIC_`` variables (the build decides).

    Inlined because importing ``agent_cli.model`` costs start-up time the first frame does not
    need; only the few settings files are peeked at, not parsed.
    """
    names = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")
    if any(env.get(name, "").strip() for name in names):
        return True
    if any(k.startswith("CLAUDE_CODE_USE_") and str(v).strip() for k, v in env.items()):
        return True
    from config.paths import find_project_root, resolve_config_dirs

    dirs = resolve_config_dirs(home=None, policy_dir=None, claude_policy_dir=None, environ=env)
    root = find_project_root(cwd or Path.cwd())
    files = [
        dirs.nerve_user / "settings.json",
        dirs.claude_user / "settings.json",
        dirs.nerve_policy / "managed-settings.json",
        dirs.claude_policy / "managed-settings.json",
        *(
            root / d / f
            for d in (".nerve", ".claude")
            for f in ("settings.json", "settings.local.json")
        ),
    ]
    from config.files import read_regular_file

    for path in files:
        try:
            # a FIFO or device there is refused unopened: this check must never hang
            text = read_regular_file(path).decode("utf-8", errors="replace")
        except OSError:
            continue
        if "apiKeyHelper" in text or "ANTHROPIC_" in text:
            return True
    return False
