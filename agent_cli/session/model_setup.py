"""The session's model: the build's model stage (``choose_model``), and the session's choice.

The model is the flag's, the settings', or the default, each an alias the session environment
may remap (``agent_cli.model.config``); the effort level and "always think" come from the
settings and the environment, a ``--fallback-model`` must name another model. The client is
lazy (``LazyModelClient``): a session starts without importing httpx or the SDK, and a UI can
start that import right after its first frame (``prewarm``). A test or the demo passes its own
client; then only the name is resolved. The system prompt is frozen here, from the environment
the build probed and the tools of the pool (``agent_cli.loop.system_prompt``).

``ModelChoice`` is the part of ``AgentSession`` that names the model. ``name`` is the session's
model (the status line, sub-agents, the side model and the classifier follow it); the loop asks
``loop.model_name``, which is the same except during a turn of a custom command whose ``model``
frontmatter names another one (``for_turn``). Every name is an alias expanded with the session
environment (``ANTHROPIC_DEFAULT_*_MODEL`` from settings ``env`` remap them), as at start-up.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from agent_cli.loop.system_prompt import Environment, build_system_prompt
from agent_cli.options import RunOptions
from agent_cli.session.resume import SessionError

if TYPE_CHECKING:
    from agent_cli.loop.agent_loop import AgentLoop, ModelPort
    from tools.base import Tool

__all__ = ["LazyModelClient", "ModelChoice", "ModelSetup", "choose_model", "import_client"]


class ModelSetup:
    """The model stage's result: what the loop runs on, and what choosing it warned about."""

    __slots__ = ("client", "name", "system_prompt", "warnings")
    name: str
    client: ModelPort
    system_prompt: str
    warnings: list[str]

    def __init__(
        self, name: str, client: ModelPort, system_prompt: str, warnings: list[str]
    ) -> None:
        self.name = name
        self.client = client
        self.system_prompt = system_prompt
        self.warnings = warnings


def choose_model(
    options: RunOptions,
    settings: Any,
    client: ModelPort | None,
    environ: dict[str, str],
    env: Environment,
    tools: Sequence[Tool[Any]],
) -> ModelSetup:
    """The model of a session started with ``options`` and ``settings`` (see the module
    docstring; ``client``: the caller's own, else a lazy one) and its system prompt."""
    warnings: list[str] = []
    name, client = _model(options, settings, client, environ, warnings)
    system_prompt = build_system_prompt(
        env,
        tool_descriptions=[(t.name, t.description) for t in tools],
        warnings=warnings,
        replace=options.system_prompt or None,  # --system-prompt "" keeps the default
        append=options.append_system_prompt or None,
        sources=options.setting_sources,
    )
    return ModelSetup(name, client, system_prompt, warnings)


def _model(
    options: RunOptions,
    settings: Any,
    client: ModelPort | None,
    environ: dict[str, str],
    warnings: list[str],
) -> tuple[str, ModelPort]:
    from agent_cli.model.config import ModelConfig, resolve_model

    if client is not None:
        return resolve_model(options.model, settings.model, environ), client
    config = ModelConfig.resolve(
        cli_model=options.model,
        settings_model=settings.model,
        api_key_helper=settings.merged.apiKeyHelper,
        env=environ,
    )
    from dataclasses import replace

    from agent_cli.model.thinking import effort_level

    extras = settings.merged.extras()
    effort, warning = effort_level(
        environ.get("CLAUDE_CODE_EFFORT_LEVEL"), extras.get("effortLevel")
    )
    if warning:
        warnings.append(warning)
    always = extras.get("alwaysThinkingEnabled") is True
    config = replace(config, always_thinking=always, effort=effort)
    if options.fallback_model:
        from agent_cli.model.names import expand_alias

        fallback = expand_alias(options.fallback_model, environ)
        if fallback == config.model:
            raise SessionError(f"--fallback-model {fallback} is the main model; name another one")
        config = replace(config, fallback_model=fallback)
    return config.model, LazyModelClient(config)


def import_client() -> Any:
    """Import the model client (and httpx; the SDK only for Bedrock/Vertex, which builds ~1,500
    pydantic models at import: pausing the cyclic GC meanwhile saves ~15% of that, and freezing
    them keeps later collections from walking them again)."""
    import gc
    import sys

    if "agent_cli.model.client" not in sys.modules:
        enabled = gc.isenabled()
        gc.disable()
        try:
            import agent_cli.model.client  # noqa: F401
        finally:
            if enabled:
                gc.enable()
            gc.freeze()
    from agent_cli.model.client import ModelClient

    return ModelClient


class LazyModelClient:
    """Builds the real client (importing httpx) on the first request, not at start.

    ``prewarm()`` imports it in a background thread, so a UI can start it right after its first
    frame and have it ready by the time the user has typed a prompt.
    """

    def __init__(self, config: Any) -> None:
        self.config = config
        self._client: Any = None

    @staticmethod
    def prewarm() -> None:
        import threading

        threading.Thread(target=import_client, name="nerve-prewarm", daemon=True).start()

    def _real(self) -> Any:
        if self._client is None:
            self._client = import_client()(self.config)
        return self._client

    async def stream_turn(self, *args: Any, **kwargs: Any) -> Any:
        return await self._real().stream_turn(*args, **kwargs)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()


class ModelChoice:
    """The model of ``loop``'s session (see the module docstring)."""

    def __init__(self, loop: AgentLoop) -> None:
        self._loop = loop
        self.name = loop.model_name

    def resolve(self, model: str) -> str:
        """``model`` with its alias expanded (``ValueError`` for a name that is not one)."""
        from agent_cli.model.names import expand_alias

        return expand_alias(model, self._loop.ctx.options.environ)

    def set(self, model: str) -> None:
        """``/model``: the session's model from now on."""
        self.name = self.resolve(model)
        self._loop.model_name = self.name

    @contextmanager
    def for_turn(self, model: str | None) -> Iterator[None]:
        """The loop runs on ``model`` (when given) until the block ends, then on the model it
        ran on before."""
        before = self._loop.model_name
        if model is not None:
            self._loop.model_name = model
        try:
            yield
        finally:
            self._loop.model_name = before
