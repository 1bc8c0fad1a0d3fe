"""Writing permission rules ("don't ask again") into a settings file, atomically.

The file is the user's: every other key and its order is kept, a broken file is refused rather
than overwritten, the file mode is kept, and a symlinked file is updated at its target.
Writers serialise on ``fcntl.flock`` of a sibling lock file, so concurrent Nerve processes
adding rules to the same file lose nothing; the write itself is temp file + fsync +
``os.replace``, so a reader never sees a half-written file.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

from config.errors import SettingsError
from config.files import read_regular_file
from config.paths import local_settings_path

__all__ = [
    "SettingsWriteError",
    "add_permission_rule",
    "local_settings_path",
    "read_json_object",
    "remove_permission_rule",
    "remove_settings_value",
    "set_settings_value",
]

_BEHAVIORS: Final[frozenset[str]] = frozenset({"allow", "deny", "ask"})
_DEFAULT_MODE: Final[int] = 0o666


class SettingsWriteError(SettingsError):
    """The file could not be updated; it was left exactly as it was."""


def _check(behavior: str, rule: str) -> str:
    if behavior not in _BEHAVIORS:
        raise ValueError(f"behavior must be allow, deny or ask, not {behavior!r}")
    text = rule.strip()
    if not text or "\n" in text or "\r" in text:
        raise ValueError(f"not a permission rule: {rule!r}")
    return text


def _umask() -> int:
    # os.umask() can only be read by setting it, which races with other threads; Linux
    # exposes it read-only in /proc.
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


@contextlib.contextmanager
def _locked(target: Path) -> Iterator[None]:
    lock_path = target.with_name(target.name + ".lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def read_json_object(target: Path) -> dict[str, Any]:
    """A settings-style JSON file as a dict: ``{}`` when it is missing or empty. Anything else
    that is not one JSON object raises ``SettingsWriteError`` naming the file (and the line)."""
    try:
        # a FIFO or device in the file's place is refused before it is opened (never hangs)
        text = read_regular_file(target).decode("utf-8-sig")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsWriteError(f"{target}: cannot read: {exc}") from exc
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsWriteError(
            f"{target}:{exc.lineno}:{exc.colno}: invalid JSON ({exc.msg})"
        ) from exc
    if not isinstance(data, dict):
        raise SettingsWriteError(f"{target}: top level is not a JSON object")
    return data


def _read_object(target: Path) -> dict[str, Any]:
    try:
        return read_json_object(target)
    except SettingsWriteError as exc:
        raise SettingsWriteError(f"{exc}; fix the file by hand, it was not changed") from exc


def _rule_list(data: dict[str, Any], behavior: str, target: Path, create: bool) -> list[Any]:
    perms = data.get("permissions")
    if perms is None:
        if not create:
            return []
        perms = data["permissions"] = {}
    if not isinstance(perms, dict):
        raise SettingsWriteError(f"{target}: 'permissions' is not an object; it was not changed")
    rules = perms.get(behavior)
    if rules is None:
        if not create:
            return []
        rules = perms[behavior] = []
    if not isinstance(rules, list):
        raise SettingsWriteError(
            f"{target}: 'permissions.{behavior}' is not a list; it was not changed"
        )
    return rules


def _write_atomic(target: Path, data: dict[str, Any]) -> None:
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = _DEFAULT_MODE & ~_umask()
    payload = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(payload)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    dir_fd = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)  # make the rename itself durable
    finally:
        os.close(dir_fd)


def _update(path: Path, change: Callable[[dict[str, Any]], bool]) -> bool:
    target = Path(os.path.realpath(path))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SettingsWriteError(f"{target.parent}: cannot create directory: {exc}") from exc
    with _locked(target):
        data = _read_object(target)
        if not change(data):
            return False
        _write_atomic(target, data)
        return True


def add_permission_rule(path: Path, behavior: str, rule: str) -> bool:
    """Append ``rule`` to ``permissions.<behavior>`` of the settings file at ``path``.

    Creates the file and its directory if needed. Returns ``False`` (and leaves the file
    untouched) if the rule is already there. The usual destination is
    :func:`local_settings_path` (``<project>/.claude/settings.local.json``).
    Raises :class:`SettingsWriteError` if the file is broken; it is never overwritten.
    """
    text = _check(behavior, rule)

    def change(data: dict[str, Any]) -> bool:
        rules = _rule_list(data, behavior, path, create=True)
        if text in rules:
            return False
        rules.append(text)
        return True

    return _update(path, change)


def remove_permission_rule(path: Path, behavior: str, rule: str) -> bool:
    """Remove every occurrence of ``rule`` from ``permissions.<behavior>``.

    Returns ``True`` if the file changed. A missing file or rule is not an error.
    """
    text = _check(behavior, rule)
    if not Path(os.path.realpath(path)).exists():
        return False

    def change(data: dict[str, Any]) -> bool:
        rules = _rule_list(data, behavior, path, create=False)
        kept = [r for r in rules if not (isinstance(r, str) and r.strip() == text)]
        if len(kept) == len(rules):
            return False
        rules[:] = kept
        return True

    return _update(path, change)


def set_settings_value(path: Path, keys: tuple[str, ...], value: Any) -> bool:
    """Set ``data[keys[0]][keys[1]]... = value`` in the settings file at ``path`` (``/sandbox``
    writes ``sandbox.enabled``). Creates missing objects on the way; returns ``False`` if the
    value was already there. Refuses (``SettingsWriteError``) a key on the way that is not an
    object, and a file that is not valid JSON; the file is never overwritten then."""
    if not keys or not all(isinstance(k, str) and k for k in keys):
        raise ValueError(f"not a settings key path: {keys!r}")

    def change(data: dict[str, Any]) -> bool:
        node = data
        for depth, key in enumerate(keys[:-1]):
            child = node.setdefault(key, {})
            if not isinstance(child, dict):
                dotted = ".".join(keys[: depth + 1])
                raise SettingsWriteError(f"{path}: {dotted!r} is not an object; it was not changed")
            node = child
        if keys[-1] in node and node[keys[-1]] == value and type(node[keys[-1]]) is type(value):
            return False
        node[keys[-1]] = value
        return True

    return _update(path, change)


def remove_settings_value(path: Path, keys: tuple[str, ...]) -> bool:
    """Delete ``data[keys[0]]...[keys[-1]]`` from the JSON file at ``path``; every other key is
    kept. Returns ``False`` (file untouched) when the file or the key is absent. A broken file
    raises :class:`SettingsWriteError` and is never overwritten."""
    if not keys or not all(isinstance(k, str) and k for k in keys):
        raise ValueError(f"not a settings key path: {keys!r}")
    if not Path(os.path.realpath(path)).exists():
        return False

    def change(data: dict[str, Any]) -> bool:
        node: Any = data
        for key in keys[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if not isinstance(node, dict) or keys[-1] not in node:
            return False
        del node[keys[-1]]
        return True

    return _update(path, change)
