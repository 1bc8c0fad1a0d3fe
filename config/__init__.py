"""Settings: models, layered loading with provenance, atomic rule writes. Imports nothing of ours."""

from config.errors import SettingsError
from config.layers import SOURCES, LayerFile
from config.loaded import LoadedSettings, RuleEntry
from config.loader import load_settings
from config.models import (
    PERMISSION_MODES,
    HookHandler,
    HookMatcherGroup,
    PermissionsSettings,
    SandboxSettings,
    Settings,
    normalize_mode,
)
from config.paths import find_project_root, local_settings_path
from config.trust import Withheld
from config.writer import (
    SettingsWriteError,
    add_permission_rule,
    remove_permission_rule,
    remove_settings_value,
    set_settings_value,
)

__all__ = [
    "PERMISSION_MODES",
    "SOURCES",
    "HookHandler",
    "HookMatcherGroup",
    "LayerFile",
    "LoadedSettings",
    "PermissionsSettings",
    "RuleEntry",
    "SandboxSettings",
    "Settings",
    "SettingsError",
    "SettingsWriteError",
    "Withheld",
    "add_permission_rule",
    "find_project_root",
    "load_settings",
    "local_settings_path",
    "normalize_mode",
    "remove_permission_rule",
    "remove_settings_value",
    "set_settings_value",
]
