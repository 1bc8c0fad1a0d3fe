"""The app's modal screens: permission, question, trust, pickers, /config and /permissions.

Importing the package imports none of its modules (nor Textual): each name loads its module on
first use (PEP 562).
"""

import sys

TYPE_CHECKING = False  # as typing's, without importing typing at start-up
if TYPE_CHECKING:
    from agent_cli.tui.screens.permission import LOCAL_SETTINGS_FILE, ask_in_modal
    from agent_cli.tui.screens.picker import ChoiceScreen
    from agent_cli.tui.screens.question import ask_questions_in_modal
    from agent_cli.tui.screens.resume import ResumeScreen
    from agent_cli.tui.screens.rewind import RewindChoice, RewindScreen, apply_rewind
    from agent_cli.tui.screens.settings import open_view
    from agent_cli.tui.screens.trust import ask_trust_in_modal, settle_trust

__all__ = [
    "LOCAL_SETTINGS_FILE",
    "ChoiceScreen",
    "ResumeScreen",
    "RewindChoice",
    "RewindScreen",
    "apply_rewind",
    "ask_in_modal",
    "ask_questions_in_modal",
    "ask_trust_in_modal",
    "open_view",
    "settle_trust",
]

# Each name's module, imported on the name's first use (``__getattr__``).
_MODULES = {
    "permission": ("LOCAL_SETTINGS_FILE", "ask_in_modal"),
    "picker": ("ChoiceScreen",),
    "question": ("ask_questions_in_modal",),
    "resume": ("ResumeScreen",),
    "rewind": ("RewindChoice", "RewindScreen", "apply_rewind"),
    "settings": ("open_view",),
    "trust": ("ask_trust_in_modal", "settle_trust"),
}
_HOME = {name: module for module, names in _MODULES.items() for name in names}


def __getattr__(name: str) -> object:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    __import__(f"{__name__}.{module}")
    value = getattr(sys.modules[f"{__name__}.{module}"], name)
    globals()[name] = value
    return value
