"""What the commands of one script write, where, and the safety checks that follow from it.

``WalkState`` follows the working directory through ``cd`` while the commands are judged in
order: it resolves write targets (redirects and the operands of file-writing programs), raises
the protected-path, critical-rm and git-after-cd checks, and says whether acceptEdits may run
the command.
"""

from __future__ import annotations

from collections.abc import Sequence

from permissions.bash.analysis import CommandFacts, sed_in_place_operands
from permissions.bash.paths import is_critical_rm_target, is_inside, is_protected, resolve_path
from permissions.types import PermissionContext, SafetyCheck

__all__ = ["WalkState", "write_words"]

_EDIT_PROGRAMS = frozenset({"mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"})
_WRITERS = _EDIT_PROGRAMS | {"tee", "ln", "chmod", "chown", "chgrp", "truncate", "install", "dd"}
_VALUE_FLAGS: dict[str, frozenset[str]] = {
    "touch": frozenset({"-d", "-r", "-t", "--date", "--reference"}),
    "mkdir": frozenset({"-m", "--mode", "--context"}),
    "cp": frozenset({"-t", "-S", "--target-directory", "--suffix"}),
    "mv": frozenset({"-t", "-S", "--target-directory", "--suffix"}),
    "ln": frozenset({"-t", "-S", "--target-directory", "--suffix"}),
    "install": frozenset({"-m", "-o", "-g", "-t", "-S", "--mode", "--owner", "--group"}),
    "truncate": frozenset({"-s", "-r", "--size", "--reference"}),
}


def _operands(prog: str, args: Sequence[str]) -> list[str] | None:
    """Path operands of a file-writing command (None when it cannot be modelled)."""
    if prog == "sed":
        return sed_in_place_operands(list(args))
    if prog == "dd":
        return [a[3:] for a in args if a.startswith("of=")]
    values = _VALUE_FLAGS.get(prog, frozenset())
    out: list[str] = []
    skip = False
    end = False
    for a in args:
        if skip:
            skip = False
            if prog in ("cp", "mv", "ln", "install"):
                out.append(a)  # -t DIR is the destination
            continue
        if end or not a.startswith("-") or a == "-":
            out.append(a)
        elif a == "--":
            end = True
        elif a in values:
            skip = True
    if prog in ("chmod", "chown", "chgrp") and out:
        out = out[1:]
    return out


def write_words(f: CommandFacts) -> tuple[list[str | None], bool]:
    """The paths ``f`` writes as written (None: unknown), and whether the writing program's
    operands could be modelled."""
    targets: list[str | None] = list(f.writes)
    core = f.core
    if core and core[0] in _WRITERS:
        edit_words = _operands(core[0], core[1:])
        if edit_words is None:
            return targets, False
        targets.extend(edit_words if f.known else [None])
    return targets, True


class WalkState:
    """Mutable bookkeeping of one assessment walk."""

    def __init__(self, ctx: PermissionContext) -> None:
        self.home = str(ctx.home)
        self.start = str(ctx.cwd)
        self.cwd: str | None = self.start
        self.dirs = [str(d) for d in ctx.working_dirs]
        self.safety: list[SafetyCheck] = []
        self.accept_ok = True

    def write_targets(
        self, f: CommandFacts, targets: list[str | None], modelled: bool
    ) -> list[str | None]:
        """Judge the paths ``f`` writes (``targets``, ``modelled``: :func:`write_words`);
        returns them resolved (None: unknown)."""
        core = f.core
        if not modelled and core and core[0] != "sed":
            self.accept_ok = False
        resolved: list[str | None] = []
        for t in targets:
            r = resolve_path(t, self.cwd, self.home) if t is not None else None
            if r is not None and is_protected(r):
                self.safety.append(
                    SafetyCheck(f"writes to a protected path: {r}", classifier_approvable=True)
                )
            resolved.append(r)
        if core and core[0] in ("rm", "rmdir"):
            self.check_rm(f, core)
        return resolved

    def check_rm(self, f: CommandFacts, core: Sequence[str]) -> None:
        words = f.cmd.words[len(f.cmd.words) - len(core) :]
        recursive = any(
            a in ("--recursive",)
            or (a.startswith("-") and not a.startswith("--") and "r" in a.lower())
            for a in core[1:]
        )
        for w in words[1:]:
            if w.known and w.value is not None and w.value.startswith("-") and w.value != "-":
                continue
            if is_critical_rm_target(w.text, w.value, w.glob, recursive, self.cwd, self.home):
                self.safety.append(
                    SafetyCheck(f"rm of a critical path: {w.text}", classifier_approvable=False)
                )

    def check_git_after_cd(self, f: CommandFacts) -> None:
        """git reads the config of the repository it finds: after a cd into another directory
        a planted (bare) repository's core.fsmonitor or hooks would run code."""
        if f.core and f.core[0] == "git" and self.cwd != self.start:
            self.safety.append(
                SafetyCheck(
                    "git runs after cd into another directory (its repository config could run"
                    " code)",
                    classifier_approvable=True,
                )
            )

    def track_cd(self, f: CommandFacts) -> None:
        core = f.core
        if not core or core[0] not in ("cd", "pushd", "popd"):
            return
        if core[0] == "popd":
            self.cwd = None
            return
        args = [a for a in core[1:] if not a.startswith("-") or a == "-"]
        if not args:
            self.cwd = self.home if core[0] == "cd" else None
        elif not f.known or args[0] == "-":
            self.cwd = None
        else:
            self.cwd = resolve_path(args[0], self.cwd, self.home)

    def edits_ok(self, f: CommandFacts, targets: list[str | None]) -> bool:
        core = f.core
        if not f.known or core is None or f.via_xargs:
            return False  # xargs: the operands come from stdin
        if not (f.read_only or core[0] in _EDIT_PROGRAMS or _read_only_but_writes(f)):
            return False
        if core[0] == "sed" and sed_in_place_operands(list(core[1:])) is None:
            return False
        for t in targets:
            if t is None or not is_inside(t, self.dirs) or is_protected(t):
                return False
        return True


def _read_only_but_writes(f: CommandFacts) -> bool:
    """A read-only program whose only effect is an output redirect (``echo x > f``)."""
    return bool(f.writes) and f.reads_only
