"""What the client is told is what happened, when an add fails after its first write: the memories were
committed by execute_ops, then a later step (the graph model's extraction, its conflict check, the graph's
linking) raised. The caller gets the error (naming the trace id and saying to retry) and nothing of the
add is left: not in get_all / search, not in the vector store or the graph, not in the profile, episodes or
raw inputs; its judgment shows failed; re-opening the Memory (recovery) does not bring it back. Real
stores (SQLite, embedded Qdrant, embedded FalkorDB); only the models are fakes."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest
from fastapi.testclient import TestClient
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from memoryx import AsyncMemory, Memory
from memoryx.core.scope import Scope
from memoryx.errors import MemoryXError
from tests.support import shared_embeddings

pytestmark = pytest.mark.integration

TEXT = "I live in Berlin and I love sushi"


def garbage() -> FakeListChatModel:
    """A graph model whose every answer is unreadable: extraction fails after the memories are written."""
    return FakeListChatModel(responses=["I am not JSON at all"])


def _memory(data, **overrides) -> Memory:
    settings = dict(data_dir=data, graph_backend="falkordb", checkpointer="sqlite", embeddings=shared_embeddings(),
                    profiles=True, episodes=True, add_time_budget_s=3600)
    return Memory(**{**settings, **overrides})


def stored(m, user: str = "alice") -> dict:
    """Everything the stores hold for the user: SQL rows (deleted ones too), vector and graph counts."""
    services, scope = m.services, Scope(user_id=user)
    return {
        "memories": sorted((r["id"], r["memory"], r["deleted_at"] is None, json.dumps(r.get("metadata"), sort_keys=True),
                            r.get("category"), r.get("importance"), r.get("memory_type"), r.get("confidence"))
                           for r in services.sql.list_memories(scope, limit=None, include_deleted=True)),
        "history": sorted((h["memory_id"], h["event"], h["new_memory"])
                          for r in services.sql.list_memories(scope, limit=None, include_deleted=True)
                          for h in services.sql.history(r["id"])),
        "relations": sorted((r["id"], r["valid"]) for r in services.sql.list_relations(scope, include_invalid=True)),
        "entities": sorted(e["id"] for e in services.sql.list_entities(scope)),
        "vectors": (services.vectors.count_memories(scope), services.vectors.count_entities(scope)),
        "graph": services.graph.counts(scope),
        "profile": _values(m.get_profile(user_id=user, include_history=True)),
    }


def _values(profile: dict) -> dict:
    """The profile's values and the memories behind them (a value the failed run ended and the undo opened
    again keeps its later change time)."""
    def plain(v):
        if isinstance(v, dict) and "value" in v:
            return (v.get("field"), v["value"], tuple(v["memory_ids"]), v.get("ended_at") is not None)
        if isinstance(v, list):
            return sorted(map(plain, v), key=repr)
        return v
    return {k: plain(v) for k, v in profile.items() if k != "updated_at"}


def _assert_nothing_of_it(m, trace: str, before: dict, new_word: str = "Berlin", user: str = "alice") -> None:
    after = stored(m, user)
    for key in before:
        assert after[key] == before[key], (key, before[key], after[key])
    assert all(new_word not in r["memory"] for r in m.get_all(user_id=user)["results"])
    assert all(new_word not in r["memory"] for r in m.search(f"{new_word}?", user_id=user)["results"])
    assert m.services.sql.trace_history(trace) == []
    record = m.judgments(trace)
    assert record["status"] == "failed" and record["execution_success"] is False, record
    with pytest.raises(Exception):
        m.services.sql.get_raw_input(trace)


# the graph model's answers: a readable extraction of the Berlin fact, then unreadable conflict checks
EXTRACTION = json.dumps({"entities": [{"name": "alice", "entity_type": "person"}, {"name": "Berlin", "entity_type": "city"}],
                         "relations": [{"source": "alice", "relation": "lives_in", "destination": "Berlin", "memory": 0}]})


@pytest.mark.parametrize("step", ["extract_relations", "resolve_graph_conflicts"])
def test_an_add_whose_graph_step_fails_is_undone(tmp_path, step):
    """Memories, profile and episode were written; then the graph model's extraction fails (nothing in the
    graph yet), or its conflict check fails after linking wrote the new entity to SQL, vectors and graph."""
    data = tmp_path / "data"
    trace = str(uuid.uuid4())
    with _memory(data) as m:
        if step == "resolve_graph_conflicts":  # an earlier relation of alice: the conflict check has a candidate
            assert m.add("I work at Acme", user_id="alice")["relations"]["added_entities"]
        before = stored(m)
    graph_llm = garbage() if step == "extract_relations" else FakeListChatModel(responses=[EXTRACTION, "no", "no", "no"])
    with _memory(data, graph_llm=graph_llm) as m:
        with pytest.raises(MemoryXError) as caught:
            m.add(TEXT, user_id="alice", trace_id=trace)
        message = str(caught.value)
        assert trace in message and "Retry" in message and "undone" in message and step in message, message
        _assert_nothing_of_it(m, trace, before)
    with _memory(data) as m:  # the graph model is back; recovery must not apply the failed run
        assert trace not in (m._core.recovered_runs.get("resumed") or [])
        _assert_nothing_of_it(m, trace, before)


def test_a_failed_add_puts_back_what_it_changed(tmp_path):
    """Earlier memories and relations the failed run updated or invalidated are as they were: text, metadata
    and the other fields the update changed."""
    data = tmp_path / "data"
    with _memory(data) as m:
        assert m.add("I live in Oslo", user_id="alice", metadata={"channel": "email"})["results"]
        before = stored(m)
    trace = str(uuid.uuid4())
    with _memory(data, graph_llm=garbage()) as m:
        with pytest.raises(MemoryXError):
            m.add("I moved from Oslo, now I live in Berlin", user_id="alice", trace_id=trace,
                  metadata={"channel": "chat", "mood": "happy"})
        _assert_nothing_of_it(m, trace, before)


def test_a_failed_async_add_is_undone(tmp_path):
    data = tmp_path / "data"
    trace = str(uuid.uuid4())

    async def failing_add():
        async with AsyncMemory(data_dir=data, graph_backend="falkordb", checkpointer="sqlite",
                               embeddings=shared_embeddings(), graph_llm=garbage(),
                               profiles=True, episodes=True, add_time_budget_s=3600) as m:
            with pytest.raises(MemoryXError) as caught:
                await m.add(TEXT, user_id="alice", trace_id=trace)
            assert trace in str(caught.value) and "Retry" in str(caught.value)

    with _memory(data) as m:
        before = stored(m)
    asyncio.run(failing_add())
    with _memory(data) as m:
        assert trace not in (m._core.recovered_runs.get("resumed") or [])
        _assert_nothing_of_it(m, trace, before)


def test_a_failed_rest_add_is_undone(tmp_path):
    from memoryx.server.app import create_app

    data = tmp_path / "data"
    m = _memory(data, graph_llm=garbage())
    before = stored(m)
    try:
        with TestClient(create_app(memory=m)) as client:
            reply = client.post("/v1/memories", json={"messages": [{"role": "user", "content": TEXT}],
                                                      "user_id": "alice"})
            assert reply.status_code >= 500, reply.text
            error = reply.json()["error"]
            assert error.get("trace_id") and "Retry" in error["message"] and "undone" in error["message"], error
            trace = error["trace_id"]
            assert client.get("/v1/memories", params={"user_id": "alice"}).json()["results"] == []
        _assert_nothing_of_it(m, trace, before)
    finally:
        m.close()
