"""Hook configuration: lenient parsing of the ``hooks`` settings object, matchers, ``if`` rules.

The shape is Claude Code's: event -> list of matcher groups -> ``hooks`` list of handlers.
Nothing here raises on bad input: a malformed group or handler is dropped and a warning is
returned, so a typo in one settings file never takes the session down.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from permissions.rules import LEGACY_TOOL_ALIASES, RuleSyntaxError, parse_rule
from tools.records import datarecord

__all__ = [
    "GUARD_EVENTS",
    "KNOWN_EVENTS",
    "MATCHERLESS_EVENTS",
    "MODEL_HOOK_TYPES",
    "TOOL_EVENTS",
    "HookHandler",
    "Matcher",
    "compile_matcher",
    "if_condition_matches",
    "parse_hooks_config",
    "tool_name_variants",
]

TOOL_EVENTS = frozenset(
    {"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied"}
)
# Events where a hook decides whether a call runs: a hook Nerve cannot run denies there.
GUARD_EVENTS = frozenset({"PreToolUse", "PermissionRequest"})
# Hook types a model evaluates (the hook's ``prompt`` + the event JSON -> an {ok, reason} verdict).
MODEL_HOOK_TYPES = frozenset({"prompt", "agent"})
# Events whose matcher CC ignores: every group fires.
MATCHERLESS_EVENTS = frozenset({"UserPromptSubmit", "Stop", "PostToolBatch"})
KNOWN_EVENTS = TOOL_EVENTS | frozenset(
    {
        "PostToolBatch",
        "UserPromptSubmit",
        "UserPromptExpansion",
        "Notification",
        "Stop",
        "StopFailure",
        "SubagentStart",
        "SubagentStop",
        "PreCompact",
        "PostCompact",
        "SessionStart",
        "SessionEnd",
        "Setup",
        "InstructionsLoaded",
        "ConfigChange",
        "CwdChanged",
        "DirectoryAdded",
        "FileChanged",
        "WorktreeCreate",
        "WorktreeRemove",
        "TeammateIdle",
        "TaskCreated",
        "TaskCompleted",
        "Elicitation",
        "ElicitationResult",
        "MessageDisplay",
        "PreModelSwitch",
        "PostModelSwitch",
        "PreSkillShellCommand",
    }
)

# A matcher made only of these characters is a list of exact names; anything else is a regex.
_SIMPLE_MATCHER = re.compile(r"[A-Za-z0-9_\- ,|]*")
# The field an `if` rule's content is matched against, by first key present in the input.
_PRIMARY_FIELDS = ("file_path", "path", "notebook_path", "url", "pattern")


@datarecord(frozen=True, slots=True)
class Matcher:
    """A compiled group matcher. ``names`` for exact lists, ``regex`` otherwise; both None = all."""

    source: str
    names: frozenset[str] | None = None
    regex: re.Pattern[str] | None = None
    broken: bool = False

    def matches(self, values: tuple[str, ...]) -> bool:
        """True when any of ``values`` (a name and its aliases) is selected by this matcher."""
        if self.broken:
            return False
        if self.names is not None:
            return any(v in self.names for v in values)
        if self.regex is not None:
            return any(self.regex.search(v) for v in values)
        return True


@datarecord(frozen=True, slots=True)
class HookHandler:
    """One runnable handler of one event, with the matcher of the group it came from."""

    event: str
    matcher: Matcher
    command: str
    args: tuple[str, ...] | None = None
    timeout_s: float | None = None
    if_rule: str | None = None
    policy: bool = False
    status_message: str | None = None
    # a type Nerve cannot run (``http``...): kept so a guard fails closed
    unrunnable: str | None = None
    # ``command``, or a model-evaluated type (``prompt``, ``agent``) whose text is ``command``
    kind: str = "command"
    # the model a ``prompt``/``agent`` hook asks (None: the fast model / the session's)
    model: str | None = None
    # an ``http`` hook (its url is ``command``): extra headers, and the variables they may use
    headers: tuple[tuple[str, str], ...] = ()
    allowed_env_vars: tuple[str, ...] = ()
    # a ``callback`` hook (the Agent SDK's; its id is ``command``): what a failure does
    on_failure: str | None = None

    @property
    def key(self) -> tuple[str, str, tuple[str, ...] | None]:
        """Identity for de-duplication: type + command (or prompt) + args."""
        return (self.unrunnable or self.kind, self.command, self.args)

    @property
    def name(self) -> str:
        """A short, human-readable name for messages."""
        text = self.command if self.args is None else " ".join((self.command, *self.args))
        if self.kind == "callback":
            return f"SDK hook callback {text!r}"
        if self.kind in MODEL_HOOK_TYPES or self.kind == "http":
            text = f"{self.kind} hook {' '.join(text.split())!r}"
        return text if len(text) <= 80 else text[:77] + "..."


def compile_matcher(source: Any, warn: Callable[[str], None]) -> Matcher:
    """Compile a group's ``matcher``; an invalid regex warns and never matches."""
    if source is None:
        return Matcher("")
    if not isinstance(source, str):
        warn(f"hook matcher {source!r} is not a string; the group never matches")
        return Matcher(str(source), broken=True)
    text = source.strip()
    if text in ("", "*"):
        return Matcher(source)
    if _SIMPLE_MATCHER.fullmatch(text):
        names = frozenset(p.strip() for p in re.split(r"[|,]", text) if p.strip())
        return Matcher(source, names=names)
    try:
        return Matcher(source, regex=re.compile(text))
    except re.error as exc:
        warn(f"hook matcher {source!r} is not a valid regex ({exc}); the group never matches")
        return Matcher(source, broken=True)


def tool_name_variants(tool_name: str) -> tuple[str, ...]:
    """The tool's name plus its legacy/current aliases, so old matchers keep working."""
    out = [tool_name]
    current = LEGACY_TOOL_ALIASES.get(tool_name)
    if current is not None:
        out.append(current)
    canonical = current or tool_name
    out.extend(old for old, new in LEGACY_TOOL_ALIASES.items() if new == canonical)
    return tuple(dict.fromkeys(out))


def _plain(obj: Any) -> Any:
    """Pydantic models become plain dicts (by alias), everything else is returned as is."""
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        try:
            return dump(by_alias=True, exclude_none=True)
        except Exception:  # a model that cannot dump is just malformed input
            return None
    return obj


def _parse_handler(
    event: str, matcher: Matcher, raw: Any, policy: bool, where: str, warn: Callable[[str], None]
) -> HookHandler | None:
    raw = _plain(raw)
    if not isinstance(raw, Mapping):
        warn(f"{where}: handler is not an object; skipped")
        return None
    kind = raw.get("type", "command")
    if kind in MODEL_HOOK_TYPES:
        return _parse_model_handler(event, matcher, raw, policy, where, warn, str(kind))
    if kind == "http" and (http := _parse_http_handler(event, matcher, raw, policy, where, warn)):
        return http
    if kind != "command":
        # Skipping a guard would fail open: the handler stays and denies what it guards.
        guards = event in GUARD_EVENTS
        effect = "every call it matches is denied" if guards else "it does not run"
        label = "http (malformed)" if kind == "http" else str(kind)
        warn(f"{where}: hook type {label!r} cannot run in Nerve yet; {effect}")
        return HookHandler(
            event=event, matcher=matcher, command=f"<{kind} hook>", policy=policy, unrunnable=label
        )
    command = raw.get("command")
    if not isinstance(command, str) or not command.strip():
        warn(f"{where}: command hook without a 'command' string; skipped")
        return None
    args_raw = raw.get("args")
    args: tuple[str, ...] | None = None
    if args_raw is not None:
        if not isinstance(args_raw, list) or not all(isinstance(a, str) for a in args_raw):
            warn(f"{where}: 'args' must be a list of strings; skipped")
            return None
        args = tuple(args_raw)
    timeout = _timeout(raw, where, warn)
    if_rule = _if_rule(raw, event, where, warn)
    status = raw.get("statusMessage")
    return HookHandler(
        event=event,
        matcher=matcher,
        command=command,
        args=args,
        timeout_s=timeout,
        if_rule=if_rule,
        policy=policy,
        status_message=status if isinstance(status, str) else None,
    )


def _timeout(raw: Mapping[str, Any], where: str, warn: Callable[[str], None]) -> float | None:
    timeout_raw = raw.get("timeout")
    if timeout_raw is None:
        return None
    if isinstance(timeout_raw, bool) or not isinstance(timeout_raw, int | float):
        warn(f"{where}: timeout {timeout_raw!r} is not a number; using the default")
    elif timeout_raw <= 0:
        warn(f"{where}: timeout {timeout_raw!r} is not positive; using the default")
    else:
        return float(timeout_raw)
    return None


def _if_rule(
    raw: Mapping[str, Any], event: str, where: str, warn: Callable[[str], None]
) -> str | None:
    if_rule = raw.get("if")
    if if_rule is not None and not isinstance(if_rule, str):
        warn(f"{where}: 'if' must be a rule string; the condition is ignored")
        return None
    if if_rule is not None and event not in TOOL_EVENTS:
        warn(f"{where}: 'if' applies to tool events only; the condition is ignored")
        return None
    return if_rule


def _parse_model_handler(
    event: str,
    matcher: Matcher,
    raw: Mapping[str, Any],
    policy: bool,
    where: str,
    warn: Callable[[str], None],
    kind: str,
) -> HookHandler:
    """A ``prompt``/``agent`` hook. Without a prompt it cannot run: a guard then denies."""
    prompt = raw.get("prompt")
    model = raw.get("model")
    if model is not None and not isinstance(model, str):
        warn(f"{where}: 'model' must be a string; using the default model")
        model = None
    if not isinstance(prompt, str) or not prompt.strip():
        effect = "every call it matches is denied" if event in GUARD_EVENTS else "it does not run"
        warn(f"{where}: {kind} hook without a 'prompt' string; {effect}")
        return HookHandler(
            event=event,
            matcher=matcher,
            command=f"<{kind} hook without a prompt>",
            policy=policy,
            unrunnable=f"{kind} (no prompt)",
        )
    return HookHandler(
        event=event,
        matcher=matcher,
        command=prompt,
        timeout_s=_timeout(raw, where, warn),
        if_rule=_if_rule(raw, event, where, warn),
        policy=policy,
        status_message=raw["statusMessage"] if isinstance(raw.get("statusMessage"), str) else None,
        kind=kind,
        model=model,
    )


def _parse_http_handler(
    event: str,
    matcher: Matcher,
    raw: Mapping[str, Any],
    policy: bool,
    where: str,
    warn: Callable[[str], None],
) -> HookHandler | None:
    """An ``http`` hook; None (it then cannot run: a guard denies) without a usable url."""
    url = raw.get("url")
    if not isinstance(url, str) or urlsplit(url.strip()).scheme not in ("http", "https"):
        warn(f"{where}: http hook without an http(s) 'url'")
        return None
    headers_raw = raw.get("headers") or {}
    allowed_raw = raw.get("allowedEnvVars") or []
    if not isinstance(headers_raw, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in headers_raw.items()
    ):
        warn(f"{where}: 'headers' must be an object of strings")
        return None
    if not isinstance(allowed_raw, list) or not all(isinstance(v, str) for v in allowed_raw):
        warn(f"{where}: 'allowedEnvVars' must be a list of names")
        return None
    status = raw.get("statusMessage")
    return HookHandler(
        event=event,
        matcher=matcher,
        command=url.strip(),
        timeout_s=_timeout(raw, where, warn),
        if_rule=_if_rule(raw, event, where, warn),
        policy=policy,
        status_message=status if isinstance(status, str) else None,
        kind="http",
        headers=tuple(headers_raw.items()),
        allowed_env_vars=tuple(allowed_raw),
    )


def _prefixed(warn: Callable[[str], None], where: str) -> Callable[[str], None]:
    return lambda message: warn(f"{where}: {message}")


def parse_hooks_config(
    config: Any, *, policy: bool, warn: Callable[[str], None]
) -> dict[str, list[HookHandler]]:
    """Turn a ``hooks`` settings object into handlers by event, in config order."""
    config = _plain(config)
    out: dict[str, list[HookHandler]] = {}
    if config is None:
        return out
    label = "policy hooks" if policy else "hooks"
    if not isinstance(config, Mapping):
        warn(f"{label}: expected an object of events, got {type(config).__name__}; ignored")
        return out
    for event, groups in config.items():
        if not isinstance(event, str):
            warn(f"{label}: event name {event!r} is not a string; skipped")
            continue
        if event not in KNOWN_EVENTS:
            warn(f"{label}: unknown hook event {event!r} (kept, but nothing may fire it)")
        groups = _plain(groups)
        if not isinstance(groups, list):
            warn(f"{label}.{event}: expected a list of matcher groups; skipped")
            continue
        for gi, group in enumerate(groups):
            where = f"{label}.{event}[{gi}]"
            group = _plain(group)
            if not isinstance(group, Mapping):
                warn(f"{where}: matcher group is not an object; skipped")
                continue
            handlers = _plain(group.get("hooks"))
            if not isinstance(handlers, list):
                warn(f"{where}: matcher group without a 'hooks' list; skipped")
                continue
            matcher = compile_matcher(group.get("matcher"), _prefixed(warn, where))
            if event in MATCHERLESS_EVENTS:
                matcher = Matcher(matcher.source)
            for hi, raw in enumerate(handlers):
                h = _parse_handler(event, matcher, raw, policy, f"{where}.hooks[{hi}]", warn)
                if h is not None:
                    out.setdefault(event, []).append(h)
    return out


# --- `if` conditions ---------------------------------------------------------------------


def _bash_matches(content: str, command: str) -> bool:
    try:
        # Lazy: tree-sitter is heavy, and only Bash `if` rules need it.
        from permissions.bash import bash_rule_matches  # type: ignore[attr-defined]
    except ImportError:  # analysis unavailable: cannot exclude the call, so the hook runs
        return True
    try:
        return bool(bash_rule_matches(content, command))
    except Exception:  # a matcher bug must not hide a check: run the hook
        return True


def _path_candidates(value: str, cwd: Path, project_dir: Path | None) -> list[str]:
    out = [value]
    if os.path.isabs(value):
        for base in (project_dir, cwd):
            if base is None:
                continue
            try:
                out.append(os.path.relpath(value, base))
            except ValueError:
                continue
    return out


def _pattern_variants(pattern: str, project_dir: Path | None) -> list[str]:
    if pattern.startswith("//"):
        return [pattern[1:]]
    if pattern.startswith("~/"):
        return [os.path.expanduser(pattern)]
    if pattern.startswith("/") and project_dir is not None:
        # CC anchors "/x" at the settings file's base; also accept a true absolute path.
        return [pattern, str(project_dir) + pattern, pattern.lstrip("/")]
    return [pattern]


def _content_matches(
    content: str, tool_input: Mapping[str, Any], cwd: Path, project_dir: Path | None
) -> bool:
    field = next((f for f in _PRIMARY_FIELDS if isinstance(tool_input.get(f), str)), None)
    if field is None:
        return True  # nothing to compare with: cannot exclude, so run
    value = str(tool_input[field])
    if field == "url" and content.startswith("domain:"):
        domain = content[len("domain:") :].strip().lower()
        host = (urlsplit(value).hostname or "").lower()
        return host == domain or host.endswith("." + domain)
    if field == "url" or field == "pattern":
        return fnmatch.fnmatchcase(value, content)
    candidates = _path_candidates(value, cwd, project_dir)
    return any(
        fnmatch.fnmatchcase(c, p)
        for p in _pattern_variants(content, project_dir)
        for c in candidates
    )


def if_condition_matches(
    rule: str,
    tool_name: str,
    tool_input: Mapping[str, Any],
    *,
    cwd: Path,
    project_dir: Path | None = None,
) -> bool:
    """Whether a handler's ``if`` rule selects this call. Unparseable rules select everything."""
    try:
        value = parse_rule(rule)
    except RuleSyntaxError:
        return True
    if value.tool_name not in tool_name_variants(tool_name):
        return False
    if value.content is None:
        return True
    if value.tool_name == "Bash":
        command = tool_input.get("command")
        if not isinstance(command, str):
            return True
        return _bash_matches(value.content, command)
    return _content_matches(value.content, tool_input, cwd, project_dir)
