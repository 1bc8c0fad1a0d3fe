"""``/permissions`` in the app: the allow / ask / deny rules with the file each comes from; ``a``
adds a rule (checked by the rule parser), ``d`` deletes the highlighted one. Both go through the
session (``add_rule`` / ``remove_rule``): the file is written by ``config.writer`` and the
session's engine uses the change from its next decision on."""

from __future__ import annotations

from typing import Any, Final

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from agent_cli.slash.settings_view import rule_file
from agent_cli.tui.safe import clean, plain_text

__all__ = ["DESTINATIONS", "PermissionsScreen", "parse_rule_line"]

BEHAVIORS: Final[tuple[str, ...]] = ("allow", "ask", "deny")
DESTINATIONS: Final[dict[str, str]] = {
    "local": "localSettings",
    "project": "projectSettings",
    "user": "userSettings",
    "session": "session",
}
_ORDER: Final[dict[str, int]] = {"allow": 0, "ask": 1, "deny": 2}
HELP: Final[str] = "a add · d delete · Esc close"
PLACEHOLDER: Final[str] = (
    "allow|ask|deny RULE [@local|@project|@user|@session]  (Enter adds, Esc cancels)"
)


def parse_rule_line(text: str) -> tuple[str, str, str]:
    """``"deny Bash(rm *) @user"`` -> ``("deny", "Bash(rm *)", "userSettings")``; the rule is
    checked by the rule parser and given in its canonical form. Raises ``ValueError``."""
    from permissions.rules import parse_rule

    words = text.strip().split(maxsplit=1)
    if len(words) < 2 or words[0] not in BEHAVIORS:
        raise ValueError("expected allow, ask or deny, then the rule: deny Bash(rm *)")
    behavior, rest = words
    destination = "localSettings"
    head, _, tail = rest.rpartition(" ")
    if tail.startswith("@"):
        if tail[1:] not in DESTINATIONS:
            raise ValueError(f"unknown file {tail!r}: use @{', @'.join(DESTINATIONS)}")
        destination, rest = DESTINATIONS[tail[1:]], head
    try:
        rule = str(parse_rule(rest.strip()))
    except ValueError as exc:
        raise ValueError(f"bad rule {rest.strip()!r}: {exc}") from exc
    return behavior, rule, destination


class PermissionsScreen(ModalScreen[None]):
    """The rules, grouped allow / ask / deny, each with its source and file."""

    BINDINGS = [Binding("escape", "close", show=False)]
    DEFAULT_CSS = """
    PermissionsScreen { align: center middle; }
    #rules-box { width: 90%; max-width: 120; height: auto; max-height: 90%;
                 border: round $accent; padding: 0 1; background: $surface; }
    #rules-list { height: auto; max-height: 18; }
    #rule-input { display: none; }
    #rule-input.open { display: block; }
    #rules-message { margin: 1 0 0 0; }
    """

    def __init__(self, session: Any) -> None:
        super().__init__()
        self.session = session
        self.rules: list[Any] = []
        self.message = ""

    def compose(self) -> ComposeResult:
        with Vertical(id="rules-box"):
            yield Static(f"Permission rules  ({HELP})", markup=False)
            yield OptionList(id="rules-list", markup=False)
            yield Input(placeholder=PLACEHOLDER, id="rule-input")
            yield Static("", id="rules-message", markup=False)

    def on_mount(self) -> None:
        self.reload()
        self.query_one("#rules-list", OptionList).focus()

    def reload(self) -> None:
        """Show the session's rules as they are now."""
        loaded = getattr(self.session, "settings", None)
        self.rules = sorted(self.session.rules(), key=lambda r: (_ORDER.get(r.behavior, 9), r.rule))
        olist = self.query_one("#rules-list", OptionList)
        highlighted = olist.highlighted
        olist.clear_options()
        if not self.rules:
            olist.add_option(Option("No permission rules.", disabled=True))
            return
        for r in self.rules:
            where = rule_file(loaded, r.behavior, r.rule, r.source)
            olist.add_option(Option(clean(f"{r.behavior:<5}  {r.rule}  ({r.source}: {where})")))
        olist.highlighted = 0 if highlighted is None else min(highlighted, len(self.rules) - 1)

    def lines(self) -> list[str]:
        """What the list shows, one line per rule."""
        olist = self.query_one("#rules-list", OptionList)
        return [str(olist.get_option_at_index(i).prompt) for i in range(olist.option_count)]

    def tell(self, text: str, *, error: bool = False) -> None:
        self.message = text
        self.query_one("#rules-message", Static).update(
            plain_text(text, style="red" if error else "")
        )
        say = getattr(self.app, "say", None)
        if say is not None:
            say(text, "error" if error else "info")

    def on_key(self, event: events.Key) -> None:
        if self.focused is not self.query_one("#rules-list", OptionList):
            return
        if event.key == "a":
            event.stop()
            field = self.query_one("#rule-input", Input)
            field.add_class("open")
            field.focus()
        elif event.key in ("d", "delete"):
            event.stop()
            self.delete_highlighted()

    def delete_highlighted(self) -> None:
        """Remove the highlighted rule from its file (or the session)."""
        index = self.query_one("#rules-list", OptionList).highlighted
        if index is None or not self.rules or index >= len(self.rules):
            return
        from config import SettingsError

        r = self.rules[index]
        try:
            removed = self.session.remove_rule(r.behavior, r.rule, r.source)
        except (ValueError, OSError, SettingsError) as exc:  # policy / cli, or a broken file
            self.tell(f"Could not delete {r.behavior} rule {r.rule}: {exc}", error=True)
            return
        if removed:
            self.tell(f"Deleted {r.behavior} rule {r.rule} from {r.source}.")
        else:
            self.tell(f"No {r.behavior} rule {r.rule} in {r.source} to delete.", error=True)
        self.reload()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        from config import SettingsError

        event.stop()
        try:
            behavior, rule, destination = parse_rule_line(event.value)
            self.session.add_rule(behavior, rule, destination)
        except (ValueError, OSError, SettingsError) as exc:  # the text stays, to fix
            self.tell(f"Not added: {exc}", error=True)
            return
        self.tell(f"Added {behavior} rule {rule} to {destination}.")
        field = self.query_one("#rule-input", Input)
        field.value = ""
        field.remove_class("open")
        self.reload()
        self.query_one("#rules-list", OptionList).focus()

    def action_close(self) -> None:
        field = self.query_one("#rule-input", Input)
        if field.has_class("open"):  # Esc first leaves the field, keeping the list open
            field.remove_class("open")
            self.query_one("#rules-list", OptionList).focus()
            return
        self.dismiss(None)
