"""An MCP "server" that prints garbage on stdout instead of JSON-RPC, then waits for EOF."""

import sys

for _ in range(5):
    print("this is not json-rpc {{{", flush=True)
print("garbage server: printed garbage", file=sys.stderr, flush=True)
sys.stdin.read()
