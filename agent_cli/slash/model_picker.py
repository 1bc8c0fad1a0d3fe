"""``/model`` without a name in the app: a list of the models, the current one highlighted and
marked; choosing one sets the session's model (the next request uses it). The ids shown are the
aliases as this session expands them (``ANTHROPIC_DEFAULT_*_MODEL`` remaps them)."""

from __future__ import annotations

from typing import Any

from agent_cli.slash.registry import SlashHost

__all__ = ["model_choices", "start_model_picker"]

_LABELS = {
    "opus": "Opus: the most capable",
    "sonnet": "Sonnet: the default, for everyday work",
    "haiku": "Haiku: the fastest",
}


def model_choices(current: str, environ: Any = None) -> tuple[list[tuple[str, str]], int]:
    """``[(name to set, label)]`` and the index of the current model. A current model that no
    alias stands for (``--model claude-x``) is listed last, so it can be chosen back."""
    from agent_cli.model.names import MODEL_ALIASES, expand_alias

    rows: list[tuple[str, str]] = []
    index = -1
    for alias in MODEL_ALIASES:
        model_id = expand_alias(alias, environ)
        if model_id == current:
            index = len(rows)
        rows.append((alias, f"{_LABELS.get(alias, alias)} ({model_id})"))
    if index < 0:
        index = len(rows)
        rows.append((current, current))
    marked = [
        (name, f"{'✓' if i == index else ' '} {label}") for i, (name, label) in enumerate(rows)
    ]
    return marked, index


def start_model_picker(host: SlashHost) -> None:
    """Put up the list; the choice goes to ``session.set_model``."""
    session: Any = host.session
    environ = getattr(getattr(getattr(session, "ctx", None), "options", None), "environ", None)
    rows, current = model_choices(session.model, environ)

    async def chosen(index: int | None) -> None:
        if index is None:
            return
        try:
            session.set_model(rows[index][0])
        except ValueError as exc:
            host.say(str(exc), "error")
            return
        host.refresh_status()
        host.say(f"Model: {session.model}")

    host.choose(f"Model (now {session.model})", [label for _, label in rows], chosen, current)
