"""Access recording after a search: the returned memories' access counts, written on a background thread.

An access counts once per memory and day (UTC): a memory returned again on the day it was last returned is not
counted again, and the ranking reads only the accesses of earlier days (`settled_accesses`). So repeating a
search never changes its own scores or order - what the user just saw stays put - while a memory needed on many
days still ranks up over time (search/scoring.py's access term).

A search never waits for this write (a chatbot's reply is not delayed by bookkeeping). The searches' ids
queue up per store; one long-lived writer thread drains the queue, LINGER_S after the first search queued, so
whatever accumulated meanwhile goes out as one transaction (under a stream of searches: one write per batch,
not one per search, and no thread or pool created per search). A batch counts each memory once.
`flush_access` waits until the queue is written (tests, shutdown - it is registered with atexit).
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections import Counter
from datetime import datetime, timezone
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


def _day_of(stored: Any) -> str | None:
    """The UTC day ("YYYY-MM-DD") of a stored ISO time, None when absent."""
    return stored[:10] if isinstance(stored, str) and len(stored) >= 10 else None


def today(now: float | None = None) -> str:
    return datetime.fromtimestamp(time.time() if now is None else now, tz=timezone.utc).strftime("%Y-%m-%d")


def settled_accesses(mem: dict, day: str) -> int:
    """The memory's accesses on days before `day`: the count the ranking reads (today's access, if any, was
    caused by a search of today and must not lift the next one)."""
    n = int(mem.get("access_count") or 0)
    return max(0, n - 1) if _day_of(mem.get("last_accessed_at")) == day else n


def new_accesses(memories: list[dict], day: str) -> list[str]:
    """The ids among `memories` not yet counted as accessed on `day`."""
    return [m["id"] for m in memories if _day_of(m.get("last_accessed_at")) != day]


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
        counts = _queue.setdefault(id(sql), (sql, Counter()))[1]
        counts.update(i for i in ids if i not in counts)  # once per batch: an access counts once a day
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
