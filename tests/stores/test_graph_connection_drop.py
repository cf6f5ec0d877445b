"""A graph connection that drops under the store, against the real embedded FalkorDB.

What `transport.retry_after_connection_error` promises, checked on the wire: a statement whose connection
was killed (idle, or after the server ran it but before the reply arrived) is sent again on a fresh
connection; the store's writes are MERGE/SET by id, so the second delivery changes nothing; a connection
that keeps dropping ends in StoreUnavailableError that says what to check, after the rule's number of tries.

Faults are made on the real sockets: CLIENT KILL from a second connection, or the client's own socket shut
down after the request went out (redis-py's connection / the neo4j driver's socket), never by replacing
our store or transport.
"""

from __future__ import annotations

import socket
import threading
import time
import uuid

import pytest

from memoryx.core.scope import Scope
from memoryx.errors import StoreUnavailableError
from memoryx.stores.graph import GraphStore, NativeTransport

pytestmark = pytest.mark.integration


def ent(name: str) -> dict:
    return {"id": str(uuid.uuid4()), "name": name}


def rel(src: dict, name: str, dst: dict) -> dict:
    return {"id": str(uuid.uuid4()), "source_id": src["id"], "target_id": dst["id"], "relation": name,
            "memory_id": str(uuid.uuid4()), "valid": True, "created_at_ms": 1_700_000_000_000}


@pytest.fixture
def store(falkor):
    g = GraphStore(NativeTransport(falkor.url, falkor.password, reconnect=falkor.start))
    yield g
    g.close()


@pytest.fixture
def observer(falkor):
    """A second, independent connection to the same server (never the one being dropped)."""
    g = GraphStore(falkor.url, password=falkor.password)
    yield g
    g.close()


def count(g: GraphStore, query: str, **params) -> int:
    return g.transport.run("test count", f"{query} RETURN count(*) AS c", params)[0]["c"]


class DropAfterServerApplied:
    """Arm it, and the next reply to a Cypher statement (GRAPH.QUERY) the calling thread waits for is lost:
    once `applied()` (asked over the observer connection) is true — the server has run the statement — the
    client's socket is closed before the reply is read. `times` drops in a row, each counted in `attempts`;
    other replies (AUTH, PING of a reconnect, the observer's) pass."""

    def __init__(self, monkeypatch, applied, *, times: int = 1, timeout: float = 10.0):
        import redis.connection as rc

        self.original = rc.AbstractConnection.read_response
        send_command = rc.AbstractConnection.send_command
        self.applied, self.left, self.timeout = applied, times, timeout
        self.attempts = 0
        self.armed_thread: int | None = None
        drop = self

        def read_response(conn, *args, **kwargs):  # a plain function: bound to each connection as a method
            return drop._read_response(conn, *args, **kwargs)

        def record_command(conn, *args, **kwargs):
            conn.memoryx_test_command = str(args[0]).upper() if args else ""
            return send_command(conn, *args, **kwargs)

        monkeypatch.setattr(rc.AbstractConnection, "read_response", read_response)
        monkeypatch.setattr(rc.AbstractConnection, "send_command", record_command)

    def arm(self) -> None:
        self.armed_thread = threading.get_ident()

    def _read_response(self, conn, *args, **kwargs):
        if (self.armed_thread != threading.get_ident() or self.left <= 0 or getattr(self, "_inside", False)
                or getattr(conn, "memoryx_test_command", "") != "GRAPH.QUERY"):
            return self.original(conn, *args, **kwargs)
        self._inside = True  # the observer's own reads below pass through
        try:
            deadline = time.monotonic() + self.timeout
            while not self.applied():
                assert time.monotonic() < deadline, "the server never applied the statement"
                time.sleep(0.01)
        finally:
            self._inside = False
        self.attempts += 1
        self.left -= 1
        # the reply may already sit in the socket's buffer: closing the socket (not just shutting it down)
        # loses it, as a connection reset would
        conn._sock.shutdown(socket.SHUT_RDWR)
        conn._sock.close()
        return self.original(conn, *args, **kwargs)  # -> redis ConnectionError: connection closed


#: a statement that runs for about a second on the embedded server (long enough to be killed in flight),
#: then counts its own deliveries: it is deliberately NOT idempotent, to show how often it ran
SLOW_COUNTER = ("UNWIND range(1, $n) AS x WITH count(x) AS n "
                "MERGE (p:Probe {k: $k}) ON CREATE SET p.c = 1 ON MATCH SET p.c = p.c + 1 RETURN p.c AS c, n")
SLOW_N = 2_000_000


def pooled_client_id(g: GraphStore) -> int:
    """The server-side id (CLIENT ID) of the one connection `g`'s pool holds."""
    conns = list(g.transport._db.connection.connection_pool._available_connections)
    assert len(conns) == 1
    conns[0].send_command("CLIENT", "ID")
    return int(conns[0].read_response())


def test_connection_killed_mid_statement_is_resent(store, observer):
    """CLIENT KILL from a second connection while the statement runs: FalkorDB finishes the statement (the
    kill does not abort it), the client loses the reply and the connection, the transport sends the
    statement again on a fresh connection and returns its result. The counter says it ran twice, or once when the
    kill came before the server began the statement."""
    key = uuid.uuid4().hex
    store.transport.run("warm", "RETURN 1")
    victim = pooled_client_id(store)
    admin = observer.transport._db.connection
    killed: list[int] = []

    def kill_when_running():
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # the server shows the victim blocked (b) in its statement
            line = str(admin.execute_command("CLIENT", "LIST", "ID", victim))
            if "cmd=graph.query" in line.lower() and " flags=b" in line:
                killed.append(admin.execute_command("CLIENT", "KILL", "ID", victim))
                return
            time.sleep(0.005)

    killer = threading.Thread(target=kill_when_running)
    killer.start()
    rows = store.transport.run("slow write", SLOW_COUNTER, {"n": SLOW_N, "k": key})
    killer.join()
    assert killed == [1]
    # the answer of the second delivery: 2 when the killed statement had started (FalkorDB finishes it), 1 when the
    # kill landed while it still waited for the graph's worker thread (the server drops it; seen under CI load)
    assert len(rows) == 1 and rows[0]["n"] == SLOW_N and rows[0]["c"] in (1, 2)
    assert pooled_client_id(store) != victim
    observer.transport.run("cleanup", "MATCH (p:Probe {k: $k}) DELETE p", {"k": key})


def test_killed_idle_connection_is_replaced(store, observer):
    """A pooled connection killed while idle: the next statements run on a new one (redis-py's pool sees the
    dead socket before sending; nothing is sent twice)."""
    sc = Scope(user_id=f"kill-{uuid.uuid4().hex[:8]}")
    a, b = ent("Ada"), ent("Berlin")
    store.upsert_entities(sc, [a])
    victim = pooled_client_id(store)
    assert observer.transport._db.connection.execute_command("CLIENT", "KILL", "ID", victim) == 1
    store.upsert_entities(sc, [a, b])
    store.upsert_relations(sc, [rel(a, "lives_in", b)])
    assert pooled_client_id(store) != victim
    assert count(observer, "MATCH (n:Entity) WHERE n.user_id = $u", u=sc.user_id) == 2
    assert {(r["source"], r["relation"], r["target"]) for r in store.neighbourhood(sc, [a["id"]])} == \
        {("Ada", "lives_in", "Berlin")}


def test_store_writes_survive_a_lost_reply_without_applying_twice(store, observer, monkeypatch):
    sc = Scope(user_id=f"lost-{uuid.uuid4().hex[:8]}")
    a, b, c = ent("Ada"), ent("Acme"), ent("Berlin")
    r1, r2 = rel(a, "works_at", b), rel(a, "lives_in", c)

    drop = DropAfterServerApplied(
        monkeypatch, lambda: count(observer, "MATCH (n:Entity) WHERE n.user_id = $u", u=sc.user_id) == 3)
    drop.arm()
    store.upsert_entities(sc, [a, b, c])  # no ScopeError: the resent MERGE found its own nodes
    assert drop.attempts == 1

    drop.left = 1
    drop.applied = lambda: count(observer, "MATCH ()-[r:RELATES]->() WHERE r.user_id = $u", u=sc.user_id) == 2
    store.upsert_relations(sc, [r1, r2])
    assert drop.attempts == 2

    drop.left = 1
    drop.applied = lambda: count(observer, "MATCH ()-[r:RELATES {valid: false}]->() WHERE r.user_id = $u",
                                 u=sc.user_id) == 1
    store.invalidate_relations([r2["id"]], trace_id="t-1")
    assert drop.attempts == 3

    assert count(observer, "MATCH (n:Entity) WHERE n.user_id = $u", u=sc.user_id) == 3
    assert count(observer, "MATCH ()-[r:RELATES]->() WHERE r.user_id = $u", u=sc.user_id) == 2
    valid = {(r["relation"], r["valid"], r["invalidated_by"])
             for r in store.neighbourhood(sc, [a["id"]], include_invalid=True)}
    assert valid == {("works_at", True, None), ("lives_in", False, "t-1")}


def test_connection_that_keeps_dropping_ends_in_an_error_that_says_what_to_check(falkor, observer, monkeypatch):
    """The rule: a fresh pooled connection, then the reconnect hook, then give up — three deliveries with a
    hook, two without — and the error names the store, the statement and the settings to check."""
    key = uuid.uuid4().hex
    reconnects = []

    def reconnect():
        reconnects.append(1)
        return falkor.start()

    for hook, tries in ((None, 2), (reconnect, 3)):
        g = GraphStore(NativeTransport(falkor.url, falkor.password, reconnect=hook))
        try:
            drop = DropAfterServerApplied(monkeypatch, lambda: True, times=10)
            drop.arm()
            with pytest.raises(StoreUnavailableError) as err:
                g.transport.run("probe write", "MERGE (p:Probe {k: $k})", {"k": key})
            assert drop.attempts == tries
            message = str(err.value)
            assert "unreachable" in message and "probe write" in message and falkor.url in message
            assert "MEMORYX_GRAPH_BACKEND" in message
            monkeypatch.undo()
            g.transport.run("probe write", "MERGE (p:Probe {k: $k})", {"k": key})  # works once the wire does
            assert count(observer, "MATCH (p:Probe {k: $k})", k=key) == 1  # however often it was delivered
        finally:
            g.close()
    assert len(reconnects) == 1
    observer.transport.run("cleanup", "MATCH (p:Probe {k: $k}) DELETE p", {"k": key})


# --- Bolt (the Neo4j path), against FalkorDB's Bolt endpoint: a pooled connection whose socket died --------

def test_bolt_connection_dropped_mid_statement_is_resent(bolt_falkor):
    """The neo4j driver's socket shut down while a statement runs: the driver marks the connection defunct,
    the transport sends the statement again on a new one and returns its result; store writes sent twice
    leave one node and one edge."""
    g = GraphStore(bolt_falkor.bolt_url, flavor="falkordb")
    try:
        sc = Scope(user_id=f"bolt-{uuid.uuid4().hex[:8]}")
        a, b = ent("Ada"), ent("Berlin")
        g.upsert_entities(sc, [a, b])
        pool = g.transport._driver._pool
        dropped: list[int] = []

        def drop_in_flight():
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not dropped:
                for conns in list(pool.connections.values()):
                    for c in list(conns):
                        if c.in_use:
                            time.sleep(0.2)  # the statement is on the wire and running (about a second)
                            c.socket._socket.shutdown(socket.SHUT_RDWR)
                            dropped.append(1)
                            return
                time.sleep(0.005)

        dropper = threading.Thread(target=drop_in_flight)
        dropper.start()
        key = uuid.uuid4().hex
        rows = g.transport.run("slow write", SLOW_COUNTER, {"n": SLOW_N, "k": key})
        dropper.join()
        assert dropped and rows and rows[0]["n"] == SLOW_N
        assert rows[0]["c"] in (1, 2)  # 2 when the first delivery had run before the drop
        g.transport.run("cleanup", "MATCH (p:Probe {k: $k}) DELETE p", {"k": key})

        for c in [c for conns in pool.connections.values() for c in conns]:  # idle ones die too
            c.socket._socket.shutdown(socket.SHUT_RDWR)
        g.upsert_relations(sc, [rel(a, "lives_in", b)])
        g.upsert_entities(sc, [a])
        assert {(r["source"], r["relation"], r["target"]) for r in g.neighbourhood(sc, [a["id"]])} == \
            {("Ada", "lives_in", "Berlin")}
        assert g.counts(sc)["entities"] == 2
    finally:
        g.close()
