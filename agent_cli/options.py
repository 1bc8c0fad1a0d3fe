"""Parsing the main ``nerve`` flags (stdlib only: ``nerve --help`` must stay light)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import TYPE_CHECKING

from tools.records import datarecord

if TYPE_CHECKING:
    import argparse

__all__ = [
    "OptionsError",
    "RunOptions",
    "build_parser",
    "is_mcp_prompt_tool",
    "parse_run_options",
    "parse_with_argparse",
    "split_rule_list",
]

OUTPUT_FORMATS = ("text", "json", "stream-json")
INPUT_FORMATS = ("text", "stream-json")
MODES = ("default", "manual", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto")


def is_mcp_prompt_tool(value: str | None) -> bool:
    """``--permission-prompt-tool`` names an MCP tool (``mcp__server__tool``)."""
    return bool(value) and str(value).startswith("mcp__") and str(value).count("__") >= 2


def split_rule_list(values: Sequence[str] | None) -> list[str]:
    """``--allowedTools "Bash(git *),Read" --allowedTools Edit`` -> three rules.

    Commas inside parentheses belong to the rule (``Bash(a,b)``), spaces separate rules only
    outside parentheses.
    """
    rules: list[str] = []
    for value in values or ():
        depth = 0
        cur = ""
        for ch in value:
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth = max(0, depth - 1)
            if depth == 0 and (ch == "," or ch.isspace()):
                if cur.strip():
                    rules.append(cur.strip())
                cur = ""
                continue
            cur += ch
        if cur.strip():
            rules.append(cur.strip())
    return rules


@datarecord
class RunOptions:
    prompt: str | None = None
    print_mode: bool = False
    output_format: str = "text"
    permission_mode: str | None = None
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    max_turns: int | None = None
    model: str | None = None
    settings: str | None = None
    add_dirs: list[str] = field(default_factory=list)
    continue_session: bool = False
    resume: str | None = None  # "" = picker
    fork_session: bool = False
    session_id: str | None = None
    dangerously_skip_permissions: bool = False
    verbose: bool = False
    worktree: str | None = None  # start in the git worktree .nerve/worktrees/<name>
    # issue 17 (print mode at Claude Code's level)
    max_budget_usd: float | None = None  # stop before a request once the session spent this
    # issue 23 (the Agent SDK drives nerve): one block, kept together
    system_prompt: str | None = None  # replaces the default prompt ("" keeps the default)
    append_system_prompt: str | None = None  # appended to the prompt, default or replaced
    input_format: str = "text"  # "stream-json": the SDK's headless mode (no -p, never the TUI)
    permission_prompt_tool: str | None = None  # "stdio": an ask becomes a can_use_tool request
    include_partial_messages: bool = False
    replay_user_messages: bool = False  # each prompt echoed as a user frame with its uuid
    # issue 17 flags (helper "flags"): MCP config, tool set, setting sources, schema, fallback
    mcp_configs: list[str] = field(default_factory=list)  # each a file path or inline JSON
    strict_mcp_config: bool = False  # only the --mcp-config servers
    tools: list[str] | None = None  # the built-in tools offered; None = all, [] = none
    setting_sources: list[str] | None = None  # user/project/local layers to load; None = all
    json_schema: str | None = None  # the final answer must match this JSON Schema
    fallback_model: str | None = None  # after repeated overload (529) the request goes here
    # the TypeScript Agent SDK's flags (helper "tssdk")
    allow_dangerously_skip_permissions: bool = False  # bypassPermissions may be switched to
    thinking: str | None = None  # --thinking enabled|adaptive|disabled, over the configured
    max_thinking_tokens: int | None = None  # thinking on with this budget (0: off)
    effort: str | None = None  # over CLAUDE_CODE_EFFORT_LEVEL / effortLevel
    agents: str | None = None  # --agents JSON: sub-agent types over the files' (cli_agents)
    no_session_persistence: bool = False  # no transcript written (cannot be resumed)


# agent_cli.model.thinking.EFFORT_LEVELS (not imported: this module stays stdlib only)
EFFORT_LEVELS = ("low", "medium", "high", "xhigh", "max")


def build_parser() -> argparse.ArgumentParser:
    import argparse  # here: plain ``nerve`` starts without it (see parse_run_options)

    p = argparse.ArgumentParser(prog="nerve", add_help=False)
    p.add_argument("prompt", nargs="?")
    p.add_argument("-p", "--print", dest="print_mode", action="store_true")
    p.add_argument("--output-format", choices=OUTPUT_FORMATS, default="text")
    p.add_argument("--permission-mode", choices=MODES)
    p.add_argument("--allowedTools", "--allowed-tools", dest="allowed_tools", action="append")
    p.add_argument(
        "--disallowedTools", "--disallowed-tools", dest="disallowed_tools", action="append"
    )
    p.add_argument("--max-turns", type=int)
    p.add_argument("--model")
    p.add_argument("--settings")
    p.add_argument("--add-dir", dest="add_dirs", action="append", default=[])
    p.add_argument("-c", "--continue", dest="continue_session", action="store_true")
    p.add_argument("-r", "--resume", nargs="?", const="")
    p.add_argument("--fork-session", action="store_true")
    p.add_argument("--session-id")
    p.add_argument("--dangerously-skip-permissions", action="store_true")
    p.add_argument("--verbose", action="store_true")
    p.add_argument("-w", "--worktree", metavar="NAME")
    # issue 17: Claude Code's print-mode flags
    p.add_argument("--max-budget-usd", type=float)
    # issue 23: what the Agent SDK passes (one block, kept together)
    p.add_argument("--system-prompt")
    p.add_argument("--append-system-prompt")
    p.add_argument("--input-format", choices=INPUT_FORMATS, default="text")
    p.add_argument("--permission-prompt-tool")
    p.add_argument("--include-partial-messages", action="store_true")
    p.add_argument("--replay-user-messages", action="store_true")
    p.add_argument("--mcp-config", dest="mcp_configs", action="append", default=[])
    p.add_argument("--strict-mcp-config", action="store_true")
    p.add_argument("--tools")
    p.add_argument("--setting-sources")
    p.add_argument("--json-schema")
    p.add_argument("--fallback-model")
    # the TypeScript Agent SDK: bypass may be switched to later; initialize carries MCP servers
    # (SDK mode always reads a first initialize before it builds the session: frontends/sdk/initialize.py)
    p.add_argument("--allow-dangerously-skip-permissions", action="store_true")
    p.add_argument("--await-initialize", action="store_true")
    # the SDKs' thinking and effort options (what /model thinking|effort sets, for the session)
    p.add_argument("--thinking", choices=("enabled", "adaptive", "disabled"))
    p.add_argument("--max-thinking-tokens", type=int)
    p.add_argument("--effort", choices=EFFORT_LEVELS)
    p.add_argument("--agents")
    p.add_argument("--no-session-persistence", action="store_true")
    return p


class OptionsError(ValueError):
    pass


def parse_run_options(argv: Sequence[str]) -> RunOptions:
    """The options of ``nerve ARGV``. No arguments (plain ``nerve``, the interactive app) is
    every default: the parser is not built (argparse and the parser cost the first frame
    ~5-8 ms); ``tests/agent_cli/test_options.py`` holds the two equal."""
    if not argv:
        return RunOptions()
    return parse_with_argparse(argv)


def parse_with_argparse(argv: Sequence[str]) -> RunOptions:
    """``parse_run_options`` through the parser, whatever ``argv`` is."""
    parser = build_parser()

    def fail(message: str) -> None:
        raise OptionsError(message)

    parser.error = fail  # type: ignore[method-assign,assignment]
    ns = parser.parse_args(list(argv))
    if ns.max_thinking_tokens is not None and ns.max_thinking_tokens < 0:
        raise OptionsError("--max-thinking-tokens must be 0 (off) or a token budget")
    if ns.max_turns is not None and ns.max_turns < 1:
        raise OptionsError("--max-turns must be at least 1")
    if ns.max_budget_usd is not None and not ns.max_budget_usd > 0:
        raise OptionsError("--max-budget-usd must be a positive amount of US dollars")
    tools, sources = _flag_lists(ns.tools, ns.setting_sources)
    if ns.session_id is not None:
        import uuid

        try:  # it names the transcript file: a path or other text must not reach it
            ns.session_id = str(uuid.UUID(ns.session_id))
        except ValueError:
            raise OptionsError(f"--session-id must be a UUID, got {ns.session_id!r}") from None
    if ns.fallback_model is not None and not ns.fallback_model.strip():
        raise OptionsError("--fallback-model needs a model name")
    return RunOptions(
        prompt=ns.prompt,
        print_mode=ns.print_mode,
        output_format=ns.output_format,
        permission_mode=ns.permission_mode,
        allowed_tools=split_rule_list(ns.allowed_tools),
        disallowed_tools=split_rule_list(ns.disallowed_tools),
        max_turns=ns.max_turns,
        model=ns.model,
        settings=ns.settings,
        add_dirs=list(ns.add_dirs),
        continue_session=ns.continue_session,
        resume=ns.resume,
        fork_session=ns.fork_session,
        session_id=ns.session_id,
        dangerously_skip_permissions=ns.dangerously_skip_permissions,
        verbose=ns.verbose,
        worktree=ns.worktree,
        max_budget_usd=ns.max_budget_usd,
        system_prompt=ns.system_prompt,
        append_system_prompt=ns.append_system_prompt,
        input_format=ns.input_format,
        permission_prompt_tool=ns.permission_prompt_tool,
        include_partial_messages=ns.include_partial_messages,
        replay_user_messages=ns.replay_user_messages,
        mcp_configs=list(ns.mcp_configs),
        strict_mcp_config=ns.strict_mcp_config,
        tools=tools,
        setting_sources=sources,
        json_schema=ns.json_schema,
        fallback_model=ns.fallback_model.strip() if ns.fallback_model else None,
        allow_dangerously_skip_permissions=ns.allow_dangerously_skip_permissions,
        thinking=ns.thinking,
        max_thinking_tokens=ns.max_thinking_tokens,
        effort=ns.effort,
        agents=ns.agents,
        no_session_persistence=ns.no_session_persistence,
    )


_SETTING_SOURCES = ("user", "project", "local")


def _flag_lists(
    tools: str | None, sources: str | None
) -> tuple[list[str] | None, list[str] | None]:
    """``--tools "Bash,Read"`` ("" = none, "default" = all) and ``--setting-sources
    user,project`` as lists (commas or spaces separate names)."""
    tool_list = None
    if tools is not None:
        names = [n for n in tools.replace(",", " ").split() if n]
        tool_list = None if names == ["default"] else names
    source_list = None
    if sources is not None:
        source_list = [n for n in sources.replace(",", " ").split() if n]
        for name in source_list:
            if name not in _SETTING_SOURCES:
                raise OptionsError(
                    f"--setting-sources: unknown source {name!r} (expected user, project, local)"
                )
    return tool_list, source_list
