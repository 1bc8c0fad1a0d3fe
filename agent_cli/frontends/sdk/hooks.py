"""The Agent SDK's hooks: the callbacks registered in ``initialize`` join the session's hooks.

Each matching hook sends a ``hook_callback`` control request (``callback_id``, ``input`` — the
event JSON a command hook reads on stdin — and ``tool_use_id``); the SDK's answer is the hook's
output, applied as a command hook's JSON output (``tools.hooks.callbacks``). An error
answer (the callback raised), no answer in time, or stdin closing first is a failed hook: a
guard denies unless its matcher says ``on_failure="continue"``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent_cli.frontends.sdk.control import ControlChannel, ControlError

__all__ = ["SdkHookCallback", "register_sdk_hooks"]


class SdkHookCallback:
    """The runner's ``HookCallback`` over the control channel."""

    def __init__(self, channel: ControlChannel) -> None:
        self.channel = channel

    async def __call__(
        self, callback_id: str, hook_input: dict[str, Any], tool_use_id: str | None
    ) -> Any:
        return await self.channel.request(
            "hook_callback", callback_id=callback_id, input=hook_input, tool_use_id=tool_use_id
        )


def register_sdk_hooks(
    session: Any, channel: ControlChannel, config: Any, warn: Callable[[str], None]
) -> int:
    """Add the ``hooks`` of ``initialize`` to the session's hook runner; how many were added.

    A malformed registration is a ``ControlError`` (the SDK's ``initialize`` fails with it),
    and nothing of it is added: a guard must not be half registered.
    """
    from tools.hooks.callbacks import HookConfigError, parse_callback_hooks

    try:
        handlers = parse_callback_hooks(config, warn)
    except HookConfigError as exc:
        raise ControlError(f"cannot register the SDK's hooks: {exc}") from exc
    if not handlers:
        return 0
    runner = getattr(session.ctx, "hooks", None)
    if runner is None:
        raise ControlError("cannot register the SDK's hooks: this session runs no hooks")
    runner.hook_callback = SdkHookCallback(channel)
    runner.add_handlers(handlers)
    return sum(len(v) for v in handlers.values())
