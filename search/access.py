"""Access recording after a search: the returned memories' access counts, written on a background thread.

A search never waits for this write (a chatbot's reply is not delayed by bookkeeping). The searches' ids
queue up per store; one long-lived writer thread drains the queue, LINGER_S after the first search queued, so
whatever accumulated meanwhile goes out as one transaction (under a stream of searches: one write per batch,
not one per search, and no thread or pool created per search). A memory returned by n searches gets n accesses.
`flush_access` waits until the queue is written (tests, shutdown - it is registered with atexit).
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections import Counter
from typing import Any

log = logging.getLogger(__name__)

_cond = threading.Condition()
_queue: dict[int, tuple[Any, Counter]] = {}  # id(sql store) -> (store, memory id -> accesses)
_busy = False  # the writer holds a batch taken off the queue
_flushing = 0  # callers waiting in flush_access: the writer does not linger
_writer: threading.Thread | None = None

# The writer waits this long after the first queued search before writing: a stream of searches then shares
# one write transaction (~1.5 ms of CPU on SQLite, much of it holding the GIL the next search needs) instead
# of paying one each; an access lands at most this much later.
LINGER_S = 0.05


def _write(sql: Any, counts: Counter) -> None:
    """Each memory's count added, in one write transaction (SQLStore.record_accesses)."""
    try:
        sql.record_accesses(counts)
    except Exception as exc:  # a closed store at shutdown, a locked database: never the caller's problem
        log.debug("recording access of %d memories failed: %s", len(counts), exc)


def _run() -> None:
    global _busy
    while True:
        with _cond:
            while not _queue:
                _cond.wait()
            deadline = time.monotonic() + LINGER_S
            while not _flushing:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                _cond.wait(left)
            batch = list(_queue.values())
            _queue.clear()
            _busy = True
        try:
            for sql, counts in batch:
                _write(sql, counts)
        finally:
            with _cond:
                _busy = False
                _cond.notify_all()


def record_access_later(sql: Any, ids: list[str]) -> None:
    """Queue one access of each of `ids` in `sql`; returns at once."""
    global _writer
    if not ids:
        return
    with _cond:
        if _writer is None:
            _writer = threading.Thread(target=_run, name="memoryx-access", daemon=True)
            _writer.start()
            atexit.register(flush_access)
        _queue.setdefault(id(sql), (sql, Counter()))[1].update(ids)
        _cond.notify_all()


def flush_access(timeout: float | None = 10.0) -> None:
    """Wait until the queued access records are written (tests, shutdown); a timeout leaves the rest to the
    writer thread."""
    global _flushing
    deadline = None if timeout is None else time.monotonic() + timeout
    with _cond:
        _flushing += 1
        _cond.notify_all()
        try:
            while _queue or _busy:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return
                _cond.wait(left)
        finally:
            _flushing -= 1
