"""The build's last stage: the services a new session's tools reach through ``ToolServices``.

``tools`` cannot import the loop, so the session hands them what needs it: the Agent tool's
runner (``wire_subagents``: child loops on the session's model client) and auto mode's safety
classifier (``wire_classifier``: built on first use). The Skill tool's catalog and the Read
tool's file context are ``agent_cli.session.custom``'s, the side model
``agent_cli.session.side_model``'s, the worktree ``agent_cli.session.worktree_start``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from agent_cli.loop.system_prompt import build_system_prompt

if TYPE_CHECKING:
    from agent_cli.loop.agent_loop import ModelPort
    from agent_cli.loop.system_prompt import Environment
    from agent_cli.session.agent_session import AgentSession

__all__ = ["wire_classifier", "wire_subagents"]


def wire_subagents(
    session: AgentSession,
    env: Environment,
    model_client: ModelPort,
    *,
    project_trusted: bool = True,
    extra: Sequence[Any] = (),
) -> None:
    """The Agent tool's runner (``tools`` cannot import the loop): child loops on this
    session's model client, usage totals and transcript (sidechain files)."""
    from agent_cli.agents.runner import LoopSubagentRunner
    from agent_cli.customize.agents import load_agent_definitions
    from agent_cli.customize.cli_agents import merge_agents

    sources = session.options.setting_sources
    definitions, warnings = load_agent_definitions(
        session.cwd, project_trusted=project_trusted, sources=sources
    )
    session.warnings += warnings
    definitions = merge_agents(definitions, extra)  # --agents win by name
    session.ctx.options.services.subagent_runner = LoopSubagentRunner(
        model_client=model_client,
        parent_model=lambda: session.model,
        definitions=definitions,
        parent_transcript=lambda: session.transcript,
        prompt_builder=lambda tools: build_system_prompt(
            env, tool_descriptions=[(t.name, t.description) for t in tools], sources=sources
        ),
        usage=session.loop.usage,
    )
    if any(t.name == "Agent" for t in session.ctx.options.tools):
        # Frozen with the rest of the prompt: the types the model may name in subagent_type.
        listing = "\n".join(f"- {d.name}: {d.description}" for d in definitions)
        session.loop.system_prompt += f"\n\nSub-agent types for the Agent tool:\n{listing}"


def wire_classifier(session: AgentSession, settings: Any, model_client: ModelPort) -> None:
    """The auto-mode safety classifier (the pipeline starts it only in auto mode): on this
    session's model client, reading the user's request from the live conversation, its tokens
    counted in the session's usage. Sub-agents share it through ``options.services``. Built on
    first use: a session that never enters auto mode does not import it (start-up time)."""
    extras = dict(settings.merged.extras())
    environ = session.ctx.options.environ
    environ = dict(environ) if environ is not None else None  # as at start

    def build() -> Any:
        from agent_cli.auto.classifier import ClassifierConfig, ModelSafetyClassifier

        return ModelSafetyClassifier(
            model_client,
            config=ClassifierConfig.from_settings(extras, environ),
            main_model=lambda: session.model,
            conversation=lambda: session.loop.messages,
            on_usage=lambda model, usage: session.loop.usage.add(model, usage),
        )

    session.ctx.options.services.classifier = _LazyClassifier(build)


class _LazyClassifier:
    """Stands for the classifier ``build()`` makes on the first ``classify`` or attribute (read
    or set)."""

    def __init__(self, build: Callable[[], Any]) -> None:
        self._build = build
        self._real: Any = None

    def _get(self) -> Any:
        if self._real is None:
            self._real = self._build()
        return self._real

    async def classify(self, *args: Any, **kwargs: Any) -> Any:
        return await self._get().classify(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._get(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            object.__setattr__(self, name, value)
        else:
            setattr(self._get(), name, value)
