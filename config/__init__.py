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
    Settings,
    normalize_mode,
)
from config.paths import find_project_root, local_settings_path

__all__ = [
    "PERMISSION_MODES",
    "SOURCES",
    "HookHandler",
    "HookMatcherGroup",
    "LayerFile",
    "LoadedSettings",
    "PermissionsSettings",
    "RuleEntry",
    "Settings",
    "SettingsError",
    "find_project_root",
    "load_settings",
    "local_settings_path",
    "normalize_mode",
]
