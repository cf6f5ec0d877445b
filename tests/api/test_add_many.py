"""Memory.add_many / AsyncMemory.add_many and POST /v1/memories/batch: results in order, per-item
errors, dedup by content hash, tenancy per item, and the same memories as single adds."""

from __future__ import annotations

import asyncio

import pytest

from memoryx.api.async_memory import AsyncMemory
from memoryx.api.memory import Memory
from memoryx.core.scope import Scope
from tests.support import make_services, texts


@pytest.fixture
def services(tmp_path):
    s = make_services(tmp_path, bulk_chunk_size=3)  # small chunks: several transactions in one call
    yield s
    s.close()


@pytest.fixture
def memory(services):
    m = Memory(services.settings, services=services)
    yield m
    m.close()


def _item(text, user="alice", **extra):
    return {"messages": [{"role": "user", "content": text}], "user_id": user, **extra}


def test_results_in_order_with_per_item_errors(memory):
    items = [_item("I live in Berlin"), {"messages": "no scope here"}, _item("I like tea", user="bob"),
             _item("x", bogus=1), "not a dict", _item("I play chess"), _item("   ")]
    results = memory.add_many(items, infer=False)
    assert len(results) == len(items)
    assert [r["results"][0]["memory"] for r in (results[0], results[2], results[5])] == \
        ["I live in Berlin", "I like tea", "I play chess"]
    assert results[1]["error"]["type"] == "ScopeError"
    assert results[3]["error"]["type"] == "InvalidInputError" and "bogus" in results[3]["error"]["message"]
    assert results[4]["error"]["type"] == "InvalidInputError"
    assert results[6] == {"results": [], "relations": {"added_entities": [], "deleted_entities": []},
                          "trace_id": results[6]["trace_id"]}  # blank input: nothing written, no error
    assert texts(memory.services, "alice") == ["I live in Berlin", "I play chess"]


def test_dedup_history_outbox_and_replay(memory, services):
    first = memory.add_many([_item("I live in Berlin"), _item("I live in Berlin"), _item("I live in Berlin", user="bob")],
                            infer=False)
    assert [len(r["results"]) for r in first] == [1, 0, 1]  # the same text twice in one scope: once
    again = memory.add_many([_item("I live in Berlin")], infer=False)
    assert again[0]["results"] == []  # already a live memory of alice
    mid = first[0]["results"][0]["id"]
    history = memory.history(mid)
    assert [h["event"] for h in history] == ["ADD"] and history[0]["trace_id"] == first[0]["trace_id"]
    assert services.sql.get_raw_input(first[0]["trace_id"])["messages"][0]["content"] == "I live in Berlin"
    assert services.sql.count_pending_projections() == 0
    assert services.vectors.count_memories(Scope(user_id="alice")) == 1
    replay = memory.add_many([_item("I live in Berlin", trace_id=first[0]["trace_id"])], infer=False)
    assert [r["id"] for r in replay[0]["results"]] == [mid]  # same trace id: same id, nothing twice
    assert memory.get_all(user_id="alice")["results"][0]["id"] == mid and len(memory.get_all(user_id="alice")["results"]) == 1


def test_equivalent_to_single_adds(tmp_path):
    convo = [[{"role": "user", "content": "My dog is called Rex", "name": "Ann"},
              {"role": "assistant", "content": "Rex is a nice name"}],
             [{"role": "system", "content": "be brief"}, {"role": "user", "content": "I work at a bakery"}]]
    bulk_s, single_s = make_services(tmp_path / "a"), make_services(tmp_path / "b")
    try:
        bulk_m, single_m = Memory(bulk_s.settings, services=bulk_s), Memory(single_s.settings, services=single_s)
        bulk_m.add_many([{"messages": c, "user_id": "ann", "metadata": {"src": "t"}} for c in convo], infer=False)
        for c in convo:
            single_m.add(c, user_id="ann", metadata={"src": "t"}, infer=False)
        strip = lambda rows: sorted((r["memory"], r["memory_type"], tuple(sorted(r["metadata"].items()))) for r in rows)
        assert strip(bulk_m.get_all(user_id="ann")["results"]) == strip(single_m.get_all(user_id="ann")["results"])
        for m in (bulk_m, single_m):
            assert m.search("what is the dog's name?", user_id="ann", limit=1)["results"][0]["memory"] == "My dog is called Rex"
    finally:
        bulk_s.close()
        single_s.close()


def test_inferred_items_keep_scope_order(memory):
    results = memory.add_many([_item("I live in Berlin"), _item("I like green tea", user="bob"),
                               {"messages": "hi", "agent_id": None}], infer=True)
    assert len(results) == 3 and "error" in results[2]
    assert all("error" not in r for r in results[:2])


def test_async_add_many(services):
    async def go():
        m = AsyncMemory(services.settings, services=services)
        return await m.add_many([_item("I live in Paris"), {"messages": "x"}], infer=False)

    results = asyncio.run(go())
    assert results[0]["results"][0]["memory"] == "I live in Paris" and results[1]["error"]["type"] == "ScopeError"


def test_rest_batch_checks_tenancy_per_item(memory):
    from fastapi.testclient import TestClient

    from memoryx.server.app import create_app

    memory.settings.api_keys.update({"k-alice": ["alice"]})
    app = create_app(memory, settings=memory.settings)
    with TestClient(app) as client:
        body = {"infer": False, "items": [{"messages": "I live in Rome", "user_id": "alice"},
                                          {"messages": "I live in Oslo", "user_id": "bob"},
                                          {"messages": "I like jazz"}]}
        resp = client.post("/v1/memories/batch", json=body, headers={"X-API-Key": "k-alice"})
        assert resp.status_code == 200, resp.text
        out = resp.json()
        assert out["results"][0]["results"][0]["memory"] == "I live in Rome"
        assert out["results"][1]["error"]["type"] == "forbidden"
        assert out["results"][2]["results"][0]["memory"] == "I like jazz"  # a one-user key: alice's
        assert out["summary"]["failed"] == 1
        assert client.post("/v1/memories/batch", json=body).status_code == 401
    assert texts(memory.services, "bob") == []
    assert texts(memory.services, "alice") == ["I like jazz", "I live in Rome"]


def test_a_chunk_of_many_users_on_postgresql_takes_one_lock_connection(tmp_path, pg_url):
    """A bulk chunk spanning 150 users holds its 150 advisory locks on ONE connection: one connection per user
    exceeded PostgreSQL's max_connections (100 here) and failed with 'too many clients'."""
    import sqlalchemy as sa

    s = make_services(tmp_path, sql_url=pg_url, bulk_chunk_size=200)
    try:
        s.sql.reset()
        m = Memory(s.settings, services=s)
        out = m.add_many([_item(f"I collect stamp number {i}", user=f"u{i}") for i in range(150)], infer=False)
        assert all(r.get("results") for r in out), [r for r in out if not r.get("results")][:3]
        with s.sql.engine.connect() as conn:
            assert conn.execute(sa.text("SELECT count(*) FROM memories")).scalar() == 150
    finally:
        s.close()
