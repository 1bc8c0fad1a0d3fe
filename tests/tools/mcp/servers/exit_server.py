"""An MCP "server" that fails at start-up: a message on stderr and exit status 2."""

import sys

print("exit server: missing configuration, giving up", file=sys.stderr, flush=True)
sys.exit(2)
