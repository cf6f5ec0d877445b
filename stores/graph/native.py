"""Native transport: FalkorDB's own protocol through the official `falkordb` client (over redis-py).

The embedded server is reached over its private unix socket (``unix:///…/falkordb.sock`` plus the password
of its data dir); a FalkorDB server elsewhere over ``redis://[:password@]host:port`` (``rediss://`` for
TLS). Parameters travel as the client's query parameters (``graph.query(q, params)``): the client writes
them into FalkorDB's parameter header with its own escaping and the server parses them as values, so a
parameter never becomes Cypher and has no size limit. A dropped connection is retried once on a fresh one,
then (with a `reconnect` callback, which may restart the embedded server) once more.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any, Callable
from urllib.parse import unquote, urlparse

from memoryx.errors import StoreUnavailableError
from memoryx.stores.graph.dialect import FalkorDBNativeDialect
from memoryx.stores.graph.transport import GraphTransport, retry_after_connection_error

log = logging.getLogger(__name__)

#: the graph (redis key) MemoryX keeps its projection in; the same one FalkorDB's Bolt endpoint uses
GRAPH_NAME = "falkordb"
ADVICE = (
    "Check MEMORYX_GRAPH_BACKEND: 'falkordb' (embedded server under MEMORYX_DATA_DIR/falkordb, reached over "
    "its private socket), 'neo4j' (server at MEMORYX_NEO4J_URL) or 'none' (no graph)."
)
NATIVE_SCHEMES = ("unix", "redis", "rediss", "falkor", "falkors")


class NativeTransport(GraphTransport):
    """Statements over FalkorDB's native protocol. Thread-safe (redis-py's connection pool)."""

    def __init__(self, url: str, password: str | None = None, *, username: str | None = None,
                 graph: str = GRAPH_NAME, reconnect: Callable[[], str] | None = None,
                 connect_timeout: float = 5.0, read_timeout: float = 60.0):
        """`url`: ``unix:///path/to.sock`` or ``redis://[user:password@]host:port``; `password` (and
        `username`) override the URL's. `reconnect`: called when the server is unreachable; it may
        restart the server and returns its URL, after which the failed statement is retried once."""
        self.url = url
        self.dialect = FalkorDBNativeDialect()
        self._password = password
        self._username = username
        self._graph_name = graph
        self._reconnect = reconnect
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._lock = threading.RLock()
        self._closed = False
        self._db = None
        self._graph = None
        self._connect(url)

    # --- connection ---------------------------------------------------------------------------------
    def _connect(self, url: str) -> None:
        from falkordb import FalkorDB
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        parsed = urlparse(url)
        if parsed.scheme not in NATIVE_SCHEMES:
            raise StoreUnavailableError(f"Not a FalkorDB URL: {url!r} (use unix:///path.sock or "
                                        f"redis://host:port). {ADVICE}")
        where: dict[str, Any] = ({"unix_socket_path": unquote(parsed.path)} if parsed.scheme == "unix" else
                                 {"host": parsed.hostname or "localhost", "port": parsed.port or 6379,
                                  "ssl": parsed.scheme in ("rediss", "falkors")})
        password = self._password if self._password is not None else (unquote(parsed.password or "") or None)
        username = self._username if self._username is not None else (unquote(parsed.username or "") or None)
        try:
            db = FalkorDB(**where, password=password, username=username, socket_timeout=self._read_timeout,
                          socket_connect_timeout=self._connect_timeout, retry=Retry(NoBackoff(), 0))
            db.connection.ping()
        except Exception as exc:  # unreachable, wrong password, not a FalkorDB
            raise StoreUnavailableError(f"Cannot connect to the graph store at {url!r}: {exc}. {ADVICE}") from exc
        old, self._db, self._graph, self.url = self._db, db, db.select_graph(self._graph_name), url
        if old is not None:
            _close_quietly(old)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            db, self._db, self._graph = self._db, None, None
        if db is not None:
            _close_quietly(db)

    # --- statements ---------------------------------------------------------------------------------
    def run(self, op: str, query: str, params: dict[str, Any] | None = None) -> list[dict]:
        """Connection failures are retried (then `reconnect`); server-side errors are not."""
        import redis.exceptions as rx

        params = self.dialect.check(params or {})
        last: Exception | None = None
        for attempt in range(3):
            graph = self._graph
            if self._closed or graph is None:
                raise StoreUnavailableError(f"The graph store at {self.url} is closed ({op}).")
            try:
                result = graph.query(query, params or None)
            except (rx.ConnectionError, rx.TimeoutError, OSError) as exc:
                last = exc
                if isinstance(exc, rx.TimeoutError):
                    break  # a read that timed out: retrying would only wait again
                retry, failure = retry_after_connection_error(
                    attempt, self._reconnect_now if self._reconnect is not None else None)
                last = failure or last
                if retry:
                    continue
                break
            except rx.RedisError as exc:  # the server answered with an error (syntax, auth, ...)
                raise StoreUnavailableError(f"Graph statement '{op}' failed on {self.url}: {exc}") from exc
            keys = [column[1] for column in result.header]
            return [dict(zip(keys, row)) for row in result.result_set]
        raise StoreUnavailableError(
            f"The graph store at {self.url} is unreachable ({op}: {type(last).__name__}: {last}). {ADVICE}"
        ) from last

    def rewrite_aof(self, timeout: float = 120.0) -> bool:
        """Rewrite the server's append-only file from the graph as it is now (BGREWRITEAOF) and wait until
        the rewrite is done: the old file still holds every statement ever run, deleted text included. The
        query telemetry and slow logs, which hold recent statements too, are dropped first.
        False when the server keeps no AOF. Raises StoreUnavailableError when the rewrite fails or times out."""
        import redis.exceptions as rx

        db = self._db
        if self._closed or db is None:
            raise StoreUnavailableError(f"The graph store at {self.url} is closed (rewrite_aof).")
        conn = db.connection
        try:
            # FalkorDB keeps the text of recent queries, parameters included, in a stream persisted with the
            # data (telemetry{graph}) and in its slow logs (memory only): drop them, they are statistics
            conn.delete(f"telemetry{{{self._graph_name}}}")
            try:
                conn.execute_command("GRAPH.SLOWLOG", self._graph_name, "RESET")
            except rx.ResponseError:  # no graph key yet: no slow log either
                pass
            conn.slowlog_reset()
            info = conn.info("persistence")
            if not int(info.get("aof_enabled", 0)):
                return False
            before = int(info.get("aof_rewrites", 0))
            deadline = time.monotonic() + timeout
            while True:  # a rewrite already running would make ours "scheduled": either way we wait for ours
                try:
                    conn.bgrewriteaof()
                    break
                except Exception as exc:  # "already in progress" on older servers
                    if "progress" not in str(exc) or time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            while True:
                info = conn.info("persistence")
                if (int(info.get("aof_rewrites", 0)) > before and not int(info.get("aof_rewrite_in_progress", 0))
                        and not int(info.get("aof_rewrite_scheduled", 0))):
                    break
                if time.monotonic() > deadline:
                    raise TimeoutError(f"AOF rewrite still running after {timeout:.0f} s")
                time.sleep(0.05)
        except Exception as exc:
            raise StoreUnavailableError(f"Rewriting the graph's append-only file on {self.url} failed: {exc}") from exc
        if info.get("aof_last_bgrewrite_status") != "ok":
            raise StoreUnavailableError(f"Rewriting the graph's append-only file on {self.url} failed "
                                        f"(status {info.get('aof_last_bgrewrite_status')}); see the server log.")
        _wait_history_unlinked(conn, deadline)
        return True

    def _reconnect_now(self) -> None:
        with self._lock:
            if self._closed:
                return
            url = self._reconnect() if self._reconnect else self.url
            log.warning("graph store unreachable; reconnecting to %s", url)
            self._connect(url)


def _wait_history_unlinked(conn: Any, deadline: float) -> None:
    """Wait until the AOF directory holds only the files its manifest lists. Redis 7+ (multi-part AOF) marks
    the pre-rewrite base and increment files as history when the rewrite finishes and unlinks them on a
    background thread: for a moment after `aof_rewrites` moved, the old files, deleted text included, are
    still on disk. A server on another machine (its directory not ours to read) is not waited for."""
    try:
        folder = Path(conn.config_get("dir")["dir"]) / conn.config_get("appenddirname")["appenddirname"]
        manifest = folder / (conn.config_get("appendfilename")["appendfilename"] + ".manifest")
    except Exception:  # noqa: BLE001 - an older server (one AOF file, rewritten in place) or no CONFIG access
        return
    while manifest.is_file():
        try:
            listed = {line.split()[1] for line in manifest.read_text().splitlines() if line.startswith("file ")}
            extra = [f.name for f in folder.iterdir() if f != manifest and f.name not in listed
                     and not f.name.startswith("temp-")]
        except (OSError, IndexError):
            extra = ["(manifest being replaced)"]
        if not extra:
            return
        if time.monotonic() > deadline:
            raise StoreUnavailableError(f"The graph's old append-only files {extra} were not removed after the "
                                        "rewrite; see the server log.")
        time.sleep(0.01)


def _close_quietly(db: Any) -> None:
    try:
        db.close()
    except Exception:  # pragma: no cover - closing a dead connection
        pass
