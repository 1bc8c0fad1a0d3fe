"""A project whose ``.claude/`` folder is shaped like those of real public repositories.

The shapes (not the words) follow what ships in the wild: commands with ``allowed-tools``,
``argument-hint`` in bare brackets, ``$ARGUMENTS`` and ``!`git …` `` context lines (as in the
commit/PR commands of anthropics/claude-code and ChrisWiles/claude-code-showcase); a namespaced
command folder; rules split into nested folders with and without ``paths:`` frontmatter; an
agent whose description is a YAML block scalar (VoltAgent's subagent collections); a skill
with a helper script beside its SKILL.md (anthropics/skills).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["FILES", "make_showcase"]

FILES: dict[str, str] = {
    ".claude/commands/pr-review.md": """\
---
description: Review a pull request against the project checklist
argument-hint: [pr-number]
allowed-tools: Read, Grep, Bash(git:*), Bash(gh pr view:*)
---

# PR review

Review the pull request: $ARGUMENTS

1. Look at the change with `gh pr diff $ARGUMENTS`.
2. Apply the checklist in .claude/agents/reviewer.md.
""",
    ".claude/commands/commit.md": """\
---
allowed-tools: Bash(git add:*), Bash(git status:*), Bash(git commit:*)
description: Create a git commit with a conventional message
argument-hint: [message] [--amend]
---

## Context

- Current branch: !`git branch --show-current`
- Current status: !`git status --short`

## Your task

Create one commit. Message hint: $1
""",
    ".claude/commands/frontend/component.md": """\
---
description: Scaffold a React component
argument-hint: <ComponentName>
model: haiku
---
Create the component $1 in src/components/$1.tsx following @docs/style.md.
""",
    ".claude/commands/deploy.md": """\
---
description: Deploy to an environment (only when the user asks)
disable-model-invocation: true
---
Deploy to $ARGUMENTS.
""",
    ".claude/commands/broken.md": """\
---
description: "never closed
allowed-tools: Bash
---
This command must not be offered.
""",
    ".claude/rules/testing.md": """\
# Testing

RULE-UNCONDITIONAL-MARKER: every bug fix comes with a test that failed before it.
""",
    ".claude/rules/frontend/react.md": """\
---
paths:
  - "src/components/**/*.tsx"
---
RULE-REACT-MARKER: components are function components with typed props.
""",
    ".claude/agents/reviewer.md": """\
---
name: reviewer
description: |
  Use this agent to review a change.
  It reads the diff and the files around it.
tools: Read, Grep, Glob
model: inherit
---
You review changes for bugs and style.
""",
    ".claude/skills/release-notes/SKILL.md": """\
---
name: release-notes
description: Draft release notes from the commits since the last tag
allowed-tools: Bash(python3:*)
---
# Release notes

Run `python3 ${CLAUDE_SKILL_DIR}/scripts/collect.py` and group what it prints by area.
Read ${CLAUDE_SKILL_DIR}/template.md for the layout.
""",
    ".claude/skills/release-notes/scripts/collect.py": """\
print("SKILL-HELPER-OUTPUT")
""",
    ".claude/skills/release-notes/template.md": "SKILL-TEMPLATE-MARKER\n",
    "CLAUDE.md": "MEMORY-MARKER: this project uses pytest.\n",
    "docs/style.md": "STYLE-MARKER: two-space indent.\n",
    "src/components/Button.tsx": "export const Button = () => null;\n",
    "src/app.py": "print('hi')\n",
}


def make_showcase(root: Path, *, git: bool = True) -> Path:
    """Write the files under ``root`` (a git repository with one commit when ``git``)."""
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if git:
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com",
            "GIT_CONFIG_GLOBAL": "/dev/null",
        }
        for args in (
            ["init", "-q", "-b", "main"],
            ["add", "-A"],
            ["commit", "-q", "-m", "init"],
        ):
            subprocess.run(["git", *args], cwd=root, env=env, check=True)
    return root
