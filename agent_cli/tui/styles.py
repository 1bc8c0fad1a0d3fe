"""The app's CSS (kept in Python so it ships inside the package without data-file config)."""

__all__ = ["APP_CSS"]

APP_CSS = """
Screen { layout: vertical; }
#conversation { height: 1fr; padding: 0 1; scrollbar-size-vertical: 1; }
#conversation > * { margin: 0 0 1 0; }
#conversation > SettledParts { margin: 0; }
.user { color: $text-muted; text-style: bold; }
.assistant { margin: 0; padding: 0; }
.assistant > * { margin: 0 0 0 0; }
.notice { color: $text-muted; }
.notice.warning { color: $warning; }
.notice.error { color: $error; }
.tool { height: auto; }
.tool:focus { background: $boost; }
.tool-header { text-style: bold; }
.tool.running .tool-header { color: $accent; }
.tool.done .tool-header { color: $success; }
.tool.error .tool-header { color: $error; }
#working { height: 1; padding: 0 1; color: $accent; }
#completions { height: auto; max-height: 8; border: none; padding: 0 1; background: $surface; }
#prompt { height: auto; min-height: 3; max-height: 12; border: round $primary; padding: 0 1; }
#prompt:focus { border: round $accent; }
#status { height: 1; padding: 0 1; color: $text-muted; }
PermissionScreen { align: center middle; }
#perm-box {
    width: 90%; height: auto; max-height: 90%; border: round $warning;
    background: $panel; padding: 0 1;
}
#perm-command { margin: 1 0 0 0; padding: 0 1; background: $boost; }
#perm-preview { margin: 1 0 0 0; }
#perm-why { margin: 1 0 0 0; }
#perm-question { margin: 1 0 0 0; }
#perm-feedback { margin: 1 0 0 0; }
ResumeScreen { align: center middle; }
#resume-box { width: 90%; height: 80%; border: round $primary; background: $panel; padding: 0 1; }
#resume-list { height: 1fr; }
RewindScreen { align: center middle; }
#rewind-box { width: 90%; height: auto; max-height: 90%; border: round $warning; background: $panel; padding: 0 1; }
#rewind-summary { margin: 1 0; }
#rewind-list { height: auto; max-height: 20; }
"""
