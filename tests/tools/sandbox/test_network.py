"""Issue 22 item 2: no network but the proxy; domains allowed, asked, refused — for real.

The only server is a real HTTP server on the host's 127.0.0.1, reached by name (``localhost``)
through Nerve's proxy, as any domain would be: the sandbox has no other way out. The client is
Python's own ``http.client`` inside the sandbox (CONNECT through ``set_tunnel``, plain requests
in absolute form), so no curl is needed.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import tools.sandbox.netns as netns
from permissions.rules import make_rule
from permissions.types import PermissionMode
from tests.tools.pipeline_helpers import ScriptedPrompts
from tests.tools.sandbox.support import World, needs_sandbox, run_bash
from tools.context import Callbacks, PermissionAnswer, PermissionResponse
from tools.process.background import get_manager

pytestmark = needs_sandbox

CLIENT = """
import http.client, sys
host, port, how = sys.argv[1], int(sys.argv[2]), sys.argv[3]
try:
    if how == "direct":
        c = http.client.HTTPConnection(host, port, timeout=10); c.request("GET", "/")
    elif how == "connect":
        c = http.client.HTTPConnection("127.0.0.1", 3128, timeout=10)
        c.set_tunnel(host, port); c.request("GET", "/")
    else:
        c = http.client.HTTPConnection("127.0.0.1", 3128, timeout=10)
        c.request("GET", f"http://{host}:{port}/")
    r = c.getresponse(); print(r.status, r.read().decode().strip())
except OSError as e:
    print("error", e)
"""


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello from the host"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[int]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


async def _get(
    world: World, port: int, how: str = "plain", host: str = "localhost"
) -> tuple[str, tuple[str, ...]]:
    (world.project / "client.py").write_text(CLIENT)
    out = await run_bash(world, f"{sys.executable} client.py {host} {port} {how}")
    return out.output.strip(), out.notices


async def test_no_network_by_default(world: World, server: int) -> None:
    text, notices = await _get(world, server)
    assert text.startswith("403 Nerve sandbox:"), text
    assert "not in sandbox.network.allowedDomains" in text
    [note] = notices  # the reason reaches the model in the tool result (no one to ask here)
    assert note.startswith(f"[sandbox] network access to localhost:{server} was refused")
    direct, _ = await _get(world, server, "direct", "127.0.0.1")
    assert direct.startswith("error"), direct  # the host's loopback is not the sandbox's


async def test_an_allowed_domain_is_reached_plain_and_through_connect(
    world: World, server: int
) -> None:
    world.session(allowed_domains=("localhost",))
    for how in ("plain", "connect"):
        text, notices = await _get(world, server, how)
        assert text == "200 hello from the host", (how, notices)


async def test_a_sandbox_that_never_reports_runs_with_no_network_and_says_so() -> None:
    info_r, info_w = os.pipe()  # bubblewrap's --info-fd: nothing ever written
    block_r, block_w = os.pipe()  # --block-fd: the command waits for one byte
    try:
        shake = await netns.handshake(info_r, block_w, timeout_s=0.05)
        assert shake.released and shake.pid is None and shake.sock is None
        assert isinstance(shake.error, TimeoutError) and "did not report" in str(shake.error)
        assert os.read(block_r, 1) == b"1"  # let go (fail closed: no proxy, so no network)
    finally:
        for fd in (info_r, info_w, block_r, block_w):
            os.close(fd)


async def test_a_wildcard_does_not_open_local_addresses(world: World, server: int) -> None:
    world.session(allowed_domains=("*",))
    text, notices = await _get(world, server)
    assert text.startswith("403") and "resolves to a local address" in text
    assert notices


async def test_denied_domains_and_webfetch_rules(world: World, server: int) -> None:
    world.session(allowed_domains=("localhost",), denied_domains=("localhost",))
    assert "deniedDomains" in (await _get(world, server))[0]
    world.session(allowed_domains=(), denied_domains=())
    world.rules = (make_rule("WebFetch(domain:localhost)", "allow", "userSettings"),)
    world.sandbox = None
    world.config = world.config.__class__(enabled=True)
    text, _ = await _get(world, server)
    assert text.startswith("403") and "local address" in text  # a rule is not an exact listing
    world.rules = (make_rule("WebFetch(domain:localhost)", "deny", "userSettings"),)
    world.session(allowed_domains=("localhost",))
    assert "denied by the rule WebFetch(domain:localhost)" in (await _get(world, server))[0]


async def test_a_new_domain_asks_once_and_always_is_remembered(world: World, server: int) -> None:
    world.session(allowed_domains=("localhost:1",))  # listed by name, but for another port
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.ALLOW_ALWAYS)])
    world.callbacks = Callbacks(request_permission=prompts)
    assert (await _get(world, server))[0] == "200 hello from the host"
    [prompt] = prompts.prompts
    assert prompt.title == f"Network access to localhost:{server} from the sandbox"
    assert [str(r) for r in prompt.verdict.suggestions] == ["WebFetch(domain:localhost)"]
    assert world.session().approved_domains == {"localhost"}
    # remembered for the session: no second prompt (ScriptedPrompts would fail loudly)
    assert (await _get(world, server))[0] == "200 hello from the host"
    assert len(prompts.prompts) == 1


async def test_a_declined_domain_is_refused_with_the_users_words(world: World, server: int) -> None:
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.DENY, feedback="not now")])
    world.callbacks = Callbacks(request_permission=prompts)
    text, notices = await _get(world, server)
    assert text.startswith("403") and "not now" in text and "not now" in notices[0]


async def test_dont_ask_mode_refuses_without_asking(world: World, server: int) -> None:
    world.mode = PermissionMode.DONT_ASK
    world.callbacks = Callbacks(request_permission=ScriptedPrompts([]))  # asked: fails loudly
    text, _ = await _get(world, server)
    assert text.startswith("403") and "dontAsk" in text


async def test_the_socat_relay_serves_users_who_cannot_join_the_namespace(
    world: World, server: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = world.session().backend
    if not (getattr(backend, "socat", None) and getattr(backend, "nsenter", None)):
        pytest.skip("socat or nsenter is not installed")
    monkeypatch.setattr(netns, "_JOIN_DENIED", True)  # what an ordinary user gets from setns
    world.session(allowed_domains=("localhost",))
    assert (await _get(world, server))[0] == "200 hello from the host"
    assert (await _get(world, server, "connect"))[0] == "200 hello from the host"


async def test_a_background_task_cannot_ask_and_notes_the_refusal(
    world: World, server: int
) -> None:
    (world.project / "client.py").write_text(CLIENT)
    world.callbacks = Callbacks(request_permission=ScriptedPrompts([]))
    out = await run_bash(
        world, f"{sys.executable} client.py localhost {server} plain", run_in_background=True
    )
    manager = get_manager(world.ctx())
    task = manager.get(out.extra["task_id"])
    assert task is not None
    assert await manager.wait(task.task_id, 30)
    assert any("background task cannot ask" in n for n in task.notes)
    from tools.builtin.tasks import TASK_OUTPUT_TOOL, TaskOutputInput

    shown = await TASK_OUTPUT_TOOL.call(
        TaskOutputInput(task_id=task.task_id), world.ctx(), lambda _p: None
    )
    assert "403 Nerve sandbox" in str(shown.data)
    assert f"<sandbox>[sandbox] network access to localhost:{server} was refused" in str(shown.data)
    await asyncio.sleep(0)
