"""The session's side model: one-off requests tools make (``tools.side_model.SideModel``).

WebFetch asks the fast model about a page, WebSearch asks the session's model to run the API's
server-side web search. Both go through the session's own model client (so its endpoint, key,
retries and the scripted server in tests), and their tokens join the session's usage totals.

The fast model is Claude Code's small fast model (``agent_cli.model.names.small_fast_model``):
``ANTHROPIC_SMALL_FAST_MODEL``, else the ``haiku`` alias (which ``ANTHROPIC_DEFAULT_HAIKU_MODEL``
remaps), read from the session environment (settings ``env`` over the shell's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from agent_cli.model.names import expand_alias, small_fast_model
from agent_cli.model.turn import ModelError, TurnRequest
from tools.side_model import FAST, MAIN, SideModelError, SideReply, SideRequest

if TYPE_CHECKING:
    from agent_cli.session.agent_session import AgentSession
    from tools.context import AbortSignal

__all__ = ["SessionSideModel", "fast_model", "wire_side_model"]


def fast_model(env: Mapping[str, str] | None = None) -> str:
    """The side calls' fast model for ``env`` (default ``os.environ``)."""
    return small_fast_model(env)


class SessionSideModel:
    """``SideModel`` over a model client (``stream_turn``), counting usage into ``on_usage``."""

    def __init__(
        self,
        client: Any,
        *,
        main_model: Callable[[], str],
        fast: str | None = None,
        on_usage: Callable[[str, Any], None] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.client = client
        self._main_model = main_model
        self._environ = environ
        self.fast = fast or fast_model(environ)
        self._on_usage = on_usage
        self.requests = 0

    def resolve(self, model: str) -> str:
        if model == FAST:
            return self.fast
        if model == MAIN:
            return self._main_model()
        return expand_alias(model, self._environ)

    async def query(self, request: SideRequest, abort: AbortSignal) -> SideReply:
        model = self.resolve(request.model)
        self.requests += 1
        try:
            turn = await self.client.stream_turn(
                TurnRequest(
                    request.system,
                    [dict(m) for m in request.messages],
                    [dict(t) for t in request.tools],
                    model=model,
                    max_tokens=request.max_tokens,
                ),
                abort=abort,
            )
        except ModelError as exc:
            raise SideModelError(exc.message, status=exc.status, error_type=exc.error_type) from exc
        if self._on_usage is not None:
            try:
                self._on_usage(turn.model or model, turn.usage)
            except Exception:
                pass  # accounting never fails the tool
        if turn.aborted:
            raise SideModelError("interrupted")
        if turn.error:
            raise SideModelError(f"the answer was cut off ({turn.error})")
        return SideReply(content=list(turn.content), stop_reason=turn.stop_reason, model=model)


def wire_side_model(session: AgentSession, client: Any) -> None:
    """Give the session's tools (and its sub-agents') the side model, its ``prompt`` hooks the
    model they ask and its ``agent`` hooks their read-only sub-agent (the hook runner is shared
    with sub-agents)."""
    side = SessionSideModel(
        client,
        main_model=lambda: session.model,
        on_usage=lambda model, usage: session.loop.usage.add(model, usage),
        environ=session.ctx.options.environ,
    )
    session.ctx.options.services.side_model = side
    from tools.hooks.runner import HookRunner  # imported by the build already

    hooks = session.ctx.hooks
    if isinstance(hooks, HookRunner):
        from agent_cli.agents.hook_agent import LoopHookAgent

        hooks.side_model = side
        hooks.agent_hook = LoopHookAgent(
            model_client=client, context=lambda: session.ctx, usage=session.loop.usage
        )
