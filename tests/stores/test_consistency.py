"""SQL first, then projections: a projection that fails or a process killed mid-write loses nothing.

Real engines only: SQLite, the embedded Qdrant engine and the offline MiniLM embeddings.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memoryx.core.scope import Scope
from memoryx.stores.projections import Projector
from memoryx.stores.sql import SQLStore
from memoryx.stores.vectors import EdgeVectorStore
from tests.support import make_services, shared_embeddings

ALICE = Scope(user_id="alice")


@pytest.fixture(scope="module")
def embeddings():
    return shared_embeddings()


def _stores(tmp_path: Path, embeddings):
    sql = SQLStore(f"sqlite:///{tmp_path / 'memoryx.db'}")
    vectors = EdgeVectorStore(tmp_path / "qdrant", 384)
    return sql, vectors, Projector(sql, vectors, None, embeddings)


def _vector_ids(vectors, embeddings, scope=ALICE) -> set[str]:
    hits = vectors.search_memories(embeddings.embed_query("anything"), scope, limit=100)
    return {h.id for h in hits}


def test_projection_down_then_retry_converges(tmp_path, embeddings):
    sql, vectors, projector = _stores(tmp_path, embeddings)
    first = sql.insert_memory(scope=ALICE, text="I live in Berlin")
    projector.sync_memories([first["id"]])
    assert _vector_ids(vectors, embeddings) == {first["id"]}

    vectors.close()  # the vector store goes down mid-session
    second = sql.insert_memory(scope=ALICE, text="我喜欢喝咖啡")
    projector.sync_memories([second["id"]])  # must not raise: SQL write stands, job queued
    deleted = sql.delete_memory(first["id"])
    projector.sync_memories([deleted["id"]])
    pending = {(j["kind"], j["target_id"]) for j in sql.pending_projections()}
    assert pending == {("memory", second["id"]), ("memory", first["id"])}

    vectors = EdgeVectorStore(tmp_path / "qdrant", 384)  # back up
    projector.vectors = vectors
    assert projector.retry_pending() == 2
    assert sql.pending_projections() == []
    assert _vector_ids(vectors, embeddings) == {second["id"]}
    vectors.close()
    sql.close()


def test_one_transaction_projected_from_the_rows_it_wrote(tmp_path, embeddings):
    """Projector.project_recorded: projects what one SQLStore.transaction() committed, from the rows and
    vectors the caller hands over, and clears exactly that transaction's jobs; a failure keeps them."""
    sql, vectors, projector = _stores(tmp_path, embeddings)
    older = sql.insert_memory(scope=ALICE, text="I live in Paris")  # queued by another writer: must stay queued
    with sql.transaction():
        kept = sql.insert_memory(scope=ALICE, text="I live in Berlin")
        gone = sql.insert_memory(scope=ALICE, text="I like jazz")
        gone = sql.delete_memory(gone["id"])
    intents = sql.recorded_intents()
    assert sorted(t for _, t, _ in intents) == sorted([kept["id"], gone["id"], gone["id"]])
    reads = []
    real = sql.get_memories_any
    sql.get_memories_any = lambda ids: reads.append(ids) or real(ids)
    projector.project_recorded(intents, memories={kept["id"]: kept, gone["id"]: gone},
                               memory_vectors={kept["id"]: embeddings.embed_query("I live in Berlin")})
    assert reads == []  # the rows were handed over: no read back
    assert _vector_ids(vectors, embeddings) == {kept["id"]}
    assert {j["target_id"] for j in sql.pending_projections()} == {older["id"]}

    with sql.transaction():
        again = sql.update_memory(kept["id"], text="I live in Munich")
    vectors.close()  # down: the job stays, with the error
    projector.project_recorded(sql.recorded_intents(), memories={again["id"]: again})
    pending = {j["target_id"]: j for j in sql.pending_projections()}
    assert set(pending) == {older["id"], kept["id"]} and pending[kept["id"]]["error"] != "pending"
    with pytest.raises(RuntimeError, match="after the transaction"):
        with sql.transaction():
            projector.project_recorded([], memories={again["id"]: again})
    sql.close()


def test_reindex_rebuilds_vectors_from_sql(tmp_path, embeddings):
    sql, vectors, projector = _stores(tmp_path, embeddings)
    bob = Scope(user_id="bob")
    ids = [sql.insert_memory(scope=ALICE, text=t)["id"] for t in ("I work at Acme", "私は東京に住んでいます")]
    bob_id = sql.insert_memory(scope=bob, text="I like tea")["id"]
    projector.sync_memories(ids + [bob_id])
    vectors.delete_scope(ALICE)  # the projection loses alice's points
    assert _vector_ids(vectors, embeddings) == set()

    report = projector.reindex(ALICE)
    assert report["memories"] == 2
    assert _vector_ids(vectors, embeddings) == set(ids)
    assert _vector_ids(vectors, embeddings, bob) == {bob_id}  # other scopes untouched
    vectors.close()
    sql.close()


WRITER = textwrap.dedent(
    """
    import sys, time
    from langchain_core.embeddings import Embeddings
    from memoryx.core.scope import Scope
    from memoryx.stores.projections import Projector
    from memoryx.stores.sql import SQLStore
    from memoryx.stores.vectors import EdgeVectorStore

    class StallingEmbeddings(Embeddings):
        # the process is killed while the projection is being computed
        def embed_documents(self, texts):
            print("READY", flush=True)
            time.sleep(60)
        def embed_query(self, text):
            return self.embed_documents([text])[0]

    sql = SQLStore(sys.argv[1])
    vectors = EdgeVectorStore(sys.argv[2], 384)
    ids = [sql.insert_memory(scope=Scope(user_id="alice"), text=f"fact number {i}")["id"] for i in range(5)]
    Projector(sql, vectors, None, StallingEmbeddings()).sync_memories(ids)
    """
)


def test_process_killed_between_sql_and_projection(tmp_path, embeddings):
    url = f"sqlite:///{tmp_path / 'memoryx.db'}"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, url, str(tmp_path / "qdrant")], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "READY"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    sql, vectors, projector = _stores(tmp_path, embeddings)
    assert len(sql.pending_projections()) == 5
    assert projector.retry_pending() == 5
    assert len(_vector_ids(vectors, embeddings)) == 5
    assert sql.pending_projections() == []
    vectors.close()
    sql.close()


def test_graph_rebuilt_from_sql_after_the_graph_server_is_killed(tmp_path, embeddings):
    """The embedded FalkorDB snapshots every second; SQL holds the truth. A SIGKILLed graph server loses
    its newest writes, and the projection is rebuilt from SQL when services start again."""
    services = make_services(tmp_path, graph=True)
    try:
        sql, projector = services.sql, services.projector
        zhang = sql.upsert_entity(scope=ALICE, name="张三", entity_type="person")
        beijing = sql.upsert_entity(scope=ALICE, name="北京", entity_type="city")
        rel = sql.add_relation(scope=ALICE, source_id=zhang["id"], relation="工作于", target_id=beijing["id"],
                               memory_id="m1", trace_id="t1")
        projector.sync_entities([zhang["id"], beijing["id"]])
        projector.sync_relations([rel])
        services.graph.delete_scope(ALICE)  # the writes the crash loses
        os.kill(services.falkordb.pid, signal.SIGKILL)
        services.falkordb._proc.wait(5)
    finally:
        services.vectors.close()
        services.sql.close()
    again = make_services(tmp_path, graph=True)
    try:
        assert again.falkordb.recovered_unclean
        rows = again.graph.neighbourhood(ALICE, [zhang["id"]], depth=1)
        assert [(r["source"], r["relation"], r["target"]) for r in rows] == [("张三", "工作于", "北京")]
    finally:
        again.close()
