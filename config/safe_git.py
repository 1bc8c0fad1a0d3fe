"""Git as Nerve itself runs it: a configuration the repository cannot override.

Git reads programs to run from the repository's own ``.git/config`` (``core.fsmonitor`` on
every ``status``, ``core.hooksPath`` and the hooks there, pagers, diff drivers). A folder handed
over as files (an archive, a copied checkout, a nested repository) can name any command there,
and Nerve runs git before the user has been asked anything: the system prompt's ``git status``
at every start, the worktree tools, the trust check. Options given with ``-c`` are git's
"command" scope, above every configuration file, so these pins win over the repository's.

What is pinned, and why (``safe_git_argv``):

* ``core.fsmonitor=false``: the hook form names a program git starts on every command that
  looks at the work tree. ``false`` is a boolean for git >= 2.36; older git takes the value as
  the hook's path and runs ``false``, which does nothing. The cost is speed in huge repositories
  that rely on the built-in monitor daemon.
* ``core.hooksPath=/dev/null``: no hook runs in Nerve's own git runs, the worktree ones
  included (``worktree add`` runs post-checkout, branch updates reference-transaction). The
  hooks directory may be one the model can write (``core.hooksPath = scripts/hooks``), and
  those runs follow a tool call, not a git command the user approved. Nothing is found under
  ``/dev/null``, so git runs no hook (git's own tests use the same value).
* ``safe.bareRepository=explicit`` (git >= 2.38, ignored before): git does not take a directory
  shaped like a bare repository (``HEAD``, ``refs/``, ``objects/``, ``config`` written as plain
  files into the project) for a repository unless told so. Only the system, global and command
  scopes may set it: a repository cannot turn it back on.
* ``--no-pager``: our runs capture the output (no terminal), so git would not page anyway; this
  keeps ``core.pager`` from ever mattering, for free.
* ``--no-optional-locks``: ``status`` does not refresh and rewrite the index, so Nerve's probes
  never hold ``index.lock`` against the user's own git.

Not pinned: ``diff.external`` and textconv drivers (none of these runs produces a diff; one
that does should pass ``--no-ext-diff --no-textconv``); ``GIT_CONFIG_NOSYSTEM`` (the system
configuration is the administrator's, not writable by the model, and may hold what git needs
there: safe.directory, proxies); network helpers (none of these runs uses the network).

``pin_git_env`` is the part that can travel in an environment (for the Bash tool, whose git
commands Nerve does not write): ``core.fsmonitor=false`` only, see its docstring.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

__all__ = ["SAFE_GIT_CONFIG", "pin_git_env", "safe_git_argv"]

SAFE_GIT_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("safe.bareRepository", "explicit"),
)


def safe_git_argv(*args: str, cwd: Path | str | None = None) -> list[str]:
    """``git`` with the pinned configuration (module docstring), ``-C cwd`` when given, then
    ``args``."""
    argv = ["git"]
    for key, value in SAFE_GIT_CONFIG:
        argv += ["-c", f"{key}={value}"]
    argv += ["--no-pager", "--no-optional-locks"]
    if cwd is not None:
        argv += ["-C", str(cwd)]
    return [*argv, *args]


_FSMONITOR = ("core.fsmonitor", "false")


def pin_git_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` plus ``core.fsmonitor=false`` as one more GIT_CONFIG_KEY_n/VALUE_n entry (git >=
    2.31; the command scope, above the repository's config, below a ``git -c`` on the command
    line, which the permission engine makes ask).

    For shells that run the model's commands: defence in depth for auto-allowed git reads, should
    the analysis ever miss a planted repository (a background job the model started could write
    one between the check and the run). Only fsmonitor: it is a speed feature whose absence
    changes no result, whereas hooks, the bare-repository rule or a pager are behaviour the
    user's own commands, scripts and tests may rely on. Entries already in ``env`` are kept
    (ours comes last, so it wins); a malformed GIT_CONFIG_COUNT is left as it is (git refuses
    it either way), and pinning twice adds nothing."""
    out = dict(env)
    raw = out.get("GIT_CONFIG_COUNT", "0") or "0"
    if not raw.isdigit():
        return out
    count = int(raw)
    last = count - 1
    if count and (out.get(f"GIT_CONFIG_KEY_{last}"), out.get(f"GIT_CONFIG_VALUE_{last}")) == (
        _FSMONITOR
    ):
        return out
    out[f"GIT_CONFIG_KEY_{count}"], out[f"GIT_CONFIG_VALUE_{count}"] = _FSMONITOR
    out["GIT_CONFIG_COUNT"] = str(count + 1)
    return out
