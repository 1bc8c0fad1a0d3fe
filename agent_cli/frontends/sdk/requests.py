"""The answers to the Agent SDK's own control requests (``initialize``, ``interrupt``, ...).

``SdkRequests.handle`` returns the ``response`` body of a success answer or raises
``ControlError`` with the text of an error answer: an unknown subtype is an error on that
request id, never silence.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from agent_cli import __version__
from agent_cli.frontends.sdk.context import context_usage_response, rewind_files_response
from agent_cli.frontends.sdk.control import ControlError
from agent_cli.frontends.sdk.initialize import BOOT_FIELDS
from agent_cli.frontends.sdk.tasks import stop_task_response

__all__ = ["SdkRequests"]


class SdkRequests:
    """Answers the SDK's requests on one session."""

    def __init__(self, session: Any, register_hooks: Callable[[Any], Any] | None = None) -> None:
        self.session = session
        self.register_hooks = register_hooks  # initialize's hooks join the session's (sdk.hooks)
        self.initial_model: str = session.model
        self.initialized = False
        # whether the session was built with the first initialize's fields (sdk.initialize)
        self.booted = False
        self.warn: Callable[[str], None] = lambda text: None

    async def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        subtype = request.get("subtype")
        if subtype == "initialize":
            return self._initialize(request)
        if subtype == "interrupt":
            self.session.abort()
            return {}
        if subtype == "set_permission_mode":
            try:
                self.session.set_mode(str(request.get("mode")))
            except ValueError as exc:
                raise ControlError(str(exc)) from exc
            return {}
        if subtype == "set_model":
            model = request.get("model")
            self.session.set_model(str(model) if model else self.initial_model)
            return {}
        if subtype == "set_max_thinking_tokens":
            self._set_thinking(request.get("max_thinking_tokens"))
            return {}
        if subtype == "mcp_status":
            from agent_cli.frontends.sdk.mcp import mcp_status

            return await mcp_status(self.session)
        if subtype == "get_context_usage":
            return context_usage_response(self.session)
        if subtype == "rewind_files":
            return rewind_files_response(self.session, request)
        if subtype == "stop_task":
            return await stop_task_response(self.session, request)
        raise ControlError(f"unsupported control request subtype: {subtype!r}")

    def _set_thinking(self, tokens: Any) -> None:
        """``setMaxThinkingTokens(n)``: 0 turns thinking off, n on with that budget (at least
        the API's 1,024), null back to the configured thinking; the effort stays."""
        from agent_cli.model.thinking import ThinkingChoice, budget_of

        if tokens is not None and (
            isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0
        ):
            raise ControlError("max_thinking_tokens must be null, 0 or a token budget")
        loop = self.session.loop
        current = loop.thinking if isinstance(loop.thinking, ThinkingChoice) else None
        effort = current.effort if current is not None else None
        if tokens is None:
            loop.thinking = ThinkingChoice(None, None, effort)
        elif tokens == 0:
            loop.thinking = ThinkingChoice(False, None, effort)
        else:
            loop.thinking = ThinkingChoice(True, budget_of(tokens), effort)

    def _initialize(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.initialized:
            raise ControlError("already initialized")
        hooks = request.get("hooks")
        if hooks:
            if self.register_hooks is None:  # fail closed: a guard must not be skipped silently
                raise ControlError("SDK hook callbacks are not supported here")
            self.register_hooks(hooks)
        self.initialized = True
        late = [f for f in BOOT_FIELDS if f in request and not self.booted]
        if late:
            self.warn(
                f"initialize was not the first input line: {', '.join(late)} not applied "
                "(the session was already built)"
            )
        commands = [
            {"name": getattr(c, "name", str(c)), "description": getattr(c, "description", "")}
            for c in self.session.custom_commands()
        ]
        agents = [
            {
                "name": d.name,
                "description": d.description,
                **({"model": d.model} if d.model else {}),
            }
            for d in self.session.agent_definitions()
        ]
        return {
            "commands": commands,
            "agents": agents,
            "output_style": "default",
            "available_output_styles": ["default"],
            "models": [],
            "account": {},
            "pid": os.getpid(),
            "nerve_version": __version__,
            "hook_on_failure_supported": True,
            **({"hooks_applied": True} if hooks else {}),
            **({"mcp_servers_applied": self.booted} if "mcpServers" in request else {}),
        }
