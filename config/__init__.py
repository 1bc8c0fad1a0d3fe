"""Settings: models, layered loading with provenance, atomic rule writes. Imports nothing of ours."""

from config.errors import SettingsError
from config.files import read_regular_file
from config.layers import SOURCES, LayerFile, parse_settings_text, read_settings_file
from config.loaded import LoadedSettings, RuleEntry
from config.loader import load_settings
from config.models import (
    PERMISSION_MODES,
    HookHandler,
    HookMatcherGroup,
    PermissionsSettings,
    SandboxFilesystemSettings,
    SandboxNetworkSettings,
    SandboxSettings,
    Settings,
    normalize_mode,
)
from config.paths import ConfigRoots, find_project_root, local_settings_path
from config.safe_git import pin_git_env, safe_git_argv
from config.trust import Withheld
from config.writer import (
    SettingsWriteError,
    add_permission_rule,
    read_json_object,
    remove_permission_rule,
    remove_settings_value,
    set_settings_value,
)

__all__ = [
    "PERMISSION_MODES",
    "SOURCES",
    "ConfigRoots",
    "HookHandler",
    "HookMatcherGroup",
    "LayerFile",
    "LoadedSettings",
    "PermissionsSettings",
    "RuleEntry",
    "SandboxFilesystemSettings",
    "SandboxNetworkSettings",
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
    "parse_settings_text",
    "pin_git_env",
    "read_json_object",
    "read_regular_file",
    "read_settings_file",
    "remove_permission_rule",
    "remove_settings_value",
    "safe_git_argv",
    "set_settings_value",
]
