"""Ending a short-lived process (a CLI command) without tearing the interpreter down.

After a command has closed its stores, what a normal interpreter exit still does is free every module,
native session and mapping one by one (~0.25 s with the encoder and the stores loaded) and close the vector
shards it only read, which syncs every mapped segment file again (tens of ms per file on a slow disk) though
nothing changed. `end_process` does the part of the exit that matters — waits for the threads Python would
wait for, runs the `atexit` handlers (tracing exporters flush there), flushes stdout and stderr — and then
leaves with `os._exit`, so the kernel releases the rest. A vector shard this process wrote to is flushed (its
segments and write-ahead log on disk) but not closed; one it only read is neither: closing would sync every
mapped file again with nothing left to write. The kernel drops the write-ahead-log lock with the process, and
the next open finds what a process killed right after a flush leaves, which the engine is built to open.

Never call it from a process that goes on (a server, a test calling `cli.main`): it ends the process.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading

from memoryx.stores.vectors.edge_shard import SharedShard


def leave_shards_to_exit() -> None:
    """From here on, closing a vector shard flushes what this process wrote to it and leaves the rest to the
    process's end."""
    SharedShard.leave_open_at_exit = True


def end_process(code: int) -> None:
    """Exit with `code` as the interpreter would, minus the teardown (see the module docstring)."""
    shutdown = getattr(threading, "_shutdown", None)  # what the interpreter's own exit calls first
    if shutdown is None or threading.current_thread() is not threading.main_thread():
        raise SystemExit(code)  # another Python, or not the main thread: the ordinary exit
    shutdown()  # joins the non-daemon threads (executor workers) and runs their exit hooks
    atexit._run_exitfuncs()  # noqa: SLF001 - the registered handlers, as the interpreter would run them
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that stopped early (`memoryx list | head -1`), a closed stream
            pass
    os._exit(code)
