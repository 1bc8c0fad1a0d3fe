"""An MCP "server" that never answers: it reads stdin until EOF and then exits."""

import sys

print("hang server: reading and never answering", file=sys.stderr, flush=True)
sys.stdin.read()
