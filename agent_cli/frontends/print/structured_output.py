"""``nerve -p --json-schema SCHEMA``: the final answer as JSON validated against a schema
(also each prompt's answer in the Agent SDK's mode, its ``output_format``/``outputFormat``).

As Claude Code does, the model gets a ``StructuredOutput`` tool whose input schema is the
user's schema (a schema whose top level is not an object is wrapped as ``{"output": ...}``,
since a tool's input must be an object) and is told to call it once with its final answer. The
call is validated with ``jsonschema``: a mismatch is an error result naming what is wrong, so
the model corrects itself; a turn that ends without a valid call gets a reminder and goes on.
After ``MAX_ATTEMPTS`` failures (mismatches and reminders together) the run stops with the
result subtype ``error_max_structured_output_retries``. The valid value is the result's
``structured_output`` (and what text output prints).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from agent_cli.loop.events import AgentEvent, TurnFinished
from tools.base import Tool, ToolResult, build_tool
from tools.context import ToolUseContext
from tools.errors import ToolExecutionError
from tools.records import datarecord

__all__ = [
    "MAX_ATTEMPTS",
    "TOOL_NAME",
    "StructuredOutput",
    "for_option",
    "parse_schema",
]

TOOL_NAME = "StructuredOutput"
MAX_ATTEMPTS = 5
_WRAP_KEY = "output"
_MAX_ISSUES = 8
_DESCRIPTION = (
    "Return your final response in the requested structured format. You MUST call this tool "
    "exactly once, at the end, with the complete answer as its input; its input schema is the "
    "format required."
)
_PROMPT = (
    "\n\nThe user asked for structured output. When you have finished the task, call the "
    f"{TOOL_NAME} tool exactly once with your final answer, matching its input schema. If it "
    "reports a validation error, call it again with a corrected answer."
)
_REMINDER = (
    f"You must call the {TOOL_NAME} tool with your final answer (matching its input schema) "
    "to complete this request. Call it now."
)


def parse_schema(text: str, cwd: Path) -> dict[str, Any]:
    """``--json-schema`` as inline JSON or a file path -> a checked JSON Schema (ValueError)."""
    source = "--json-schema"
    if not text.lstrip().startswith(("{", "[")):
        path = Path(text).expanduser()
        path = path if path.is_absolute() else cwd / path
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ValueError(f"--json-schema: not JSON and no such file: {text}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"--json-schema {text}: {exc}") from None
        source = f"--json-schema {path}"
    try:
        schema = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{source}: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    if not isinstance(schema, dict):
        raise ValueError(f"{source}: a JSON Schema must be an object")
    import jsonschema

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ValueError(f"{source}: not a valid JSON Schema: {exc.message}") from None
    return schema


def for_option(json_schema: str | None, cwd: Path) -> StructuredOutput | None:
    """The run's state for ``--json-schema`` (None without it); ValueError for a bad schema."""
    return None if json_schema is None else StructuredOutput(parse_schema(json_schema, cwd))


class _AnyInput(BaseModel):
    """Any object: the tool validates against the user's schema itself, so that a mismatch is
    counted (a failed parse in the pipeline would not reach the tool)."""

    model_config = ConfigDict(extra="allow")


@datarecord
class StructuredOutput:
    """The run's structured-output state: the tool, the value, the attempts used."""

    schema: dict[str, Any]
    abort: Callable[[], None] = lambda: None
    value: Any = None
    provided: bool = False
    failures: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def wrapped(self) -> bool:
        return self.schema.get("type") != "object"

    @property
    def exhausted(self) -> bool:
        return not self.provided and self.failures >= MAX_ATTEMPTS

    def tool(self) -> Tool[Any]:
        import jsonschema
        from jsonschema.exceptions import relevance

        validator_cls = jsonschema.validators.validator_for(
            self.schema, default=jsonschema.Draft202012Validator
        )
        validator = validator_cls(self.schema)
        api_schema = (
            {"type": "object", "properties": {_WRAP_KEY: self.schema}, "required": [_WRAP_KEY]}
            if self.wrapped
            else self.schema
        )

        async def call(inp: _AnyInput, ctx: ToolUseContext, _report: Any) -> ToolResult:
            data = inp.model_dump(mode="json")
            value = data.get(_WRAP_KEY) if self.wrapped else data
            errors = sorted(validator.iter_errors(value), key=relevance)
            if self.provided:
                return ToolResult("Structured output was already provided; end your turn.")
            if errors:
                self.failures += 1
                issues = [
                    f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}"
                    for e in errors[:_MAX_ISSUES]
                ]
                self.problems = issues
                if self.failures >= MAX_ATTEMPTS:
                    self.abort()
                    raise ToolExecutionError(
                        f"The output does not match the schema ({'; '.join(issues)}); "
                        "no attempts left."
                    )
                raise ToolExecutionError(
                    "The output does not match the required schema:\n- "
                    + "\n- ".join(issues)
                    + f"\nCall {TOOL_NAME} again with a corrected answer."
                )
            self.value, self.provided = value, True
            return ToolResult("Structured output provided successfully.")

        return build_tool(
            name=TOOL_NAME,
            input_model=_AnyInput,
            call=call,
            description=_DESCRIPTION,
            is_read_only=True,
            is_concurrency_safe=False,
            input_schema_override=api_schema,
        )

    def start_turn(self) -> None:
        """A new prompt asks for a new answer (the Agent SDK's conversation: one per query)."""
        self.value, self.provided, self.failures, self.problems = None, False, 0, []

    def install(self, session: Any) -> None:
        """Offer the tool for this session and tell the model to use it."""
        self.abort = session.abort
        ctx = session.loop.ctx
        tools = (*ctx.options.tools, self.tool())
        session.loop.ctx = replace(ctx, options=replace(ctx.options, tools=tools))
        session.loop.system_prompt += _PROMPT

    async def run(self, session: Any, prompt: str) -> AsyncIterator[AgentEvent]:
        """The turn, then a reminder turn while the model ended without a valid call."""
        last: AgentEvent | None = None
        async for event in session.run_turn(prompt):
            yield event
            last = event
        while (
            not self.provided
            and not self.exhausted
            and isinstance(last, TurnFinished)
            and not last.is_error
            and last.stop_reason == "end_turn"
        ):
            self.failures += 1
            self.problems = [f"the turn ended without calling {TOOL_NAME}"]
            if self.exhausted:
                return
            async for event in session.run_turn(_REMINDER):
                yield event
                last = event

    def failure(self) -> str:
        return f"no output matching --json-schema after {MAX_ATTEMPTS} attempts: " + "; ".join(
            self.problems
        )

    def add_to_result(self, result: dict[str, Any]) -> None:
        """The json result gets ``structured_output`` (None when missing) and, when the
        attempts ran out, the subtype ``error_max_structured_output_retries``."""
        result["structured_output"] = self.value if self.provided else None
        if self.exhausted:
            result["subtype"] = "error_max_structured_output_retries"
            result["is_error"] = True
            result["errors"] = [*result.get("errors", []), self.failure()]
