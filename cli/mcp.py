"""`memoryx mcp`: the MCP server over stdio (memoryx.server.mcp), for desktop assistants and IDEs.

The memory opens on the first tool call, not before the handshake: clients time out servers that take
seconds to answer `initialize`, and opening the embedded stores (embedding model, FalkorDB) does. With
MEMORYX_URL set the tools go through that server instead (`RemoteMemory`), under MEMORYX_API_KEY.
"""

from __future__ import annotations

import contextlib
import sys
import threading

from memoryx.cli.inputs import EXIT_OK, UsageError


def mcp_user_ids(args, settings) -> list[str]:
    given = args.user_id or [u for u in (settings.mcp_user_id or "").split(",")]
    users = [u.strip() for u in given if u and u.strip()]
    if not users:
        raise UsageError("memoryx mcp serves named users only: pass --user-id alice (repeat it for several) "
                         "or set MEMORYX_MCP_USER_ID=alice.")
    return users


class LazyMemory:
    """Opens the memory once, on first use, from any thread."""

    def __init__(self, open_memory):
        self._open = open_memory
        self._lock = threading.Lock()
        self.memory = None

    def __call__(self):
        with self._lock:
            if self.memory is None:
                with contextlib.redirect_stdout(sys.stderr):  # stdout carries the protocol
                    self.memory = self._open()
            return self.memory

    def close(self) -> None:
        if self.memory is not None:
            self.memory.close()


def cmd_mcp(args, open_memory) -> int:
    from memoryx.server.mcp import run_stdio
    from memoryx.settings import get_settings

    users = mcp_user_ids(args, get_settings())
    memory = LazyMemory(open_memory)
    print(f"MemoryX MCP server on stdio for user(s) {', '.join(users)}", file=sys.stderr, flush=True)
    try:
        run_stdio(memory, users)
    finally:
        memory.close()
    return EXIT_OK
