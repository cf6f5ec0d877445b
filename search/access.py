"""Access recording after a search: the returned memories' access counts, written on a background thread.

A search never waits for this write (a chatbot's reply is not delayed by bookkeeping); `flush_access` waits
for the queued writes (tests, shutdown - it is registered with atexit).
"""

from __future__ import annotations

import atexit
import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

log = logging.getLogger(__name__)

_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()
_pending: list[Future] = []


def _access_executor() -> ThreadPoolExecutor:
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memoryx-access")
            atexit.register(flush_access)
        return _executor


def _record(sql: Any, ids: list[str]) -> None:
    try:
        sql.record_access(ids)
    except Exception as exc:  # a closed store at shutdown, a locked database: never the caller's problem
        log.debug("recording access of %d memories failed: %s", len(ids), exc)


def record_access_later(sql: Any, ids: list[str]) -> Future | None:
    """Queue `sql.record_access(ids)` on a background thread; returns at once."""
    if not ids:
        return None
    fut = _access_executor().submit(_record, sql, list(ids))
    with _executor_lock:
        _pending[:] = [f for f in _pending if not f.done()]
        _pending.append(fut)
    return fut


def flush_access(timeout: float | None = 10.0) -> None:
    """Wait until the queued access records are written (tests, shutdown)."""
    with _executor_lock:
        pending = list(_pending)
    for f in pending:
        try:
            f.result(timeout=timeout)
        except Exception:  # already logged by _record; a timeout leaves the write to finish on its own
            pass
