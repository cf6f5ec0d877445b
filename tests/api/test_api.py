"""The Python API (`Memory`, `AsyncMemory`) on the embedded defaults: SQLite, embedded Qdrant, embedded
FalkorDB, the offline model and the real MiniLM embeddings. Every method, result shapes, history order,
tenancy, review, context managers."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from memoryx import AsyncMemory, InvalidInputError, Memory, NotFoundError, ScopeError
from memoryx.api.mem0_config import settings_from_config


def _uid(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def mem(tmp_path_factory):
    data = tmp_path_factory.mktemp("api-data")
    with Memory(data_dir=data) as m:
        yield m


def _texts(result: dict) -> list[str]:
    return [r["memory"] for r in result["results"]]


def test_add_returns_mem0_shape(mem):
    user = _uid("alice")
    out = mem.add("Hi, I live in Berlin and I love sushi.", user_id=user)
    assert set(out) >= {"results", "trace_id"}
    assert out["results"], out
    for item in out["results"]:
        assert set(item) >= {"id", "memory", "event"}
        assert item["event"] == "ADD"
        assert uuid.UUID(item["id"]).version == 5  # derived from the trace id and the operation (docs/contracts.md)
    assert uuid.UUID(out["trace_id"]).version == 4
    assert isinstance(out.get("relations", {}), dict)
    # the same statement again changes nothing
    again = mem.add("Hi, I live in Berlin and I love sushi.", user_id=user)
    assert all(r["event"] == "NONE" for r in again["results"]) or not again["results"]


def test_add_messages_list_and_search(mem):
    user = _uid("bob")
    mem.add([{"role": "user", "content": "I work as a nurse at the city hospital."},
             {"role": "assistant", "content": "That sounds demanding!"}], user_id=user, metadata={"topic": "work"})
    found = mem.search("What is my job?", user_id=user, limit=5)
    assert set(found) >= {"results", "relations"}
    assert found["results"]
    top = found["results"][0]
    assert set(top) >= {"id", "memory", "score"}
    assert "nurse" in top["memory"].lower()
    assert isinstance(found["relations"], list)


def test_add_without_inference_stores_verbatim(mem):
    user = _uid("raw")
    out = mem.add("Remember the locker code is 4711", user_id=user, infer=False)
    assert [r["event"] for r in out["results"]] == ["ADD"]
    assert "4711" in out["results"][0]["memory"]


def test_get_get_all_update_history_delete(mem):
    user = _uid("carol")
    mem.add("I live in Paris.", user_id=user)
    mem.add("I love jazz music.", user_id=user)
    listed = mem.get_all(user_id=user)
    assert set(listed) == {"results"}
    assert len(listed["results"]) >= 2
    created = [r["created_at"] for r in listed["results"]]
    assert created == sorted(created, reverse=True)  # newest first
    assert len(mem.get_all(user_id=user, limit=1)["results"]) == 1

    target = next(r for r in listed["results"] if "jazz" in r["memory"].lower())
    got = mem.get(target["id"])
    for key in ("id", "memory", "hash", "user_id", "metadata", "created_at", "updated_at"):
        assert key in got
    assert got["user_id"] == user

    upd = mem.update(target["id"], "Loves blues music more than jazz", metadata={"source": "test"})
    assert upd["id"] == target["id"]
    assert "message" in upd
    assert mem.get(target["id"])["memory"] == "Loves blues music more than jazz"
    assert mem.get(target["id"])["metadata"] == {"source": "test"}
    found = mem.search("blues", user_id=user)
    assert found["results"][0]["id"] == target["id"]

    deleted = mem.delete(target["id"])
    assert deleted["id"] == target["id"]
    with pytest.raises(NotFoundError):
        mem.get(target["id"])
    assert target["id"] not in [r["id"] for r in mem.get_all(user_id=user)["results"]]
    assert target["id"] not in [r["id"] for r in mem.search("blues jazz music", user_id=user)["results"]]

    hist = mem.history(target["id"])
    assert [h["event"] for h in hist] == ["ADD", "UPDATE", "DELETE"]  # oldest first
    for h in hist:
        assert set(h) >= {"event", "old_memory", "new_memory", "trace_id", "created_at"}
    assert hist[1]["old_memory"] == target["memory"]
    assert hist[1]["new_memory"] == "Loves blues music more than jazz"
    assert [h["created_at"] for h in hist] == sorted(h["created_at"] for h in hist)
    assert hist[0]["trace_id"]


def test_get_all_filters(mem):
    user = _uid("dave")
    mem.add("I have a dog named Rex", user_id=user, metadata={"topic": "pets"}, infer=False)
    mem.add("I drive a red bicycle", user_id=user, metadata={"topic": "transport"}, infer=False)
    pets = mem.get_all(user_id=user, filters={"topic": "pets"})["results"]
    assert [r["metadata"]["topic"] for r in pets] == ["pets"]
    assert mem.search("dog", user_id=user, filters={"topic": "transport"})["results"][0]["metadata"]["topic"] == "transport"
    with pytest.raises(InvalidInputError):
        mem.get_all(user_id=user, filters={"topic": {"regex": "x"}})


def test_tenancy(mem):
    alice, bob = _uid("ten-a"), _uid("ten-b")
    a = mem.add("My secret hobby is falconry.", user_id=alice)
    assert a["results"]
    mid = a["results"][0]["id"]
    assert mem.search("falconry hobby", user_id=bob)["results"] == []
    assert mem.get_all(user_id=bob)["results"] == []
    with pytest.raises(NotFoundError):
        mem.get(mid, user_id=bob)
    assert mem.get(mid, user_id=alice)["id"] == mid
    # agent/run scopes narrow further
    mem.add("I prefer window seats", user_id=alice, run_id="trip-1")
    assert mem.get_all(user_id=alice, run_id="trip-2")["results"] == []
    assert len(mem.get_all(user_id=alice, run_id="trip-1")["results"]) == 1


def test_input_errors(mem):
    with pytest.raises(ScopeError):
        mem.add("I live in Rome")
    with pytest.raises(ScopeError):
        mem.search("rome")
    with pytest.raises(ScopeError):
        mem.get_all()
    with pytest.raises(ScopeError):
        mem.delete_all()
    with pytest.raises(InvalidInputError):
        mem.search("   ", user_id="x")
    assert mem.add("   ", user_id="x")["results"] == []  # nothing to remember is not an error
    with pytest.raises(InvalidInputError):
        mem.add([{"role": "robot", "content": "beep"}], user_id="x")
    with pytest.raises(InvalidInputError):
        mem.add("x" * (mem.settings.max_input_chars + 1), user_id="x")
    with pytest.raises(InvalidInputError):
        mem.add("hi", user_id="x", metadata="not a dict")
    with pytest.raises(InvalidInputError):
        mem.search("x", user_id="x", limit=0)
    with pytest.raises(NotFoundError):
        mem.get(str(uuid.uuid4()))
    with pytest.raises(NotFoundError):
        mem.history(str(uuid.uuid4()))
    with pytest.raises(NotFoundError):
        mem.update(str(uuid.uuid4()), "x")
    with pytest.raises(NotFoundError):
        mem.delete(str(uuid.uuid4()))
    with pytest.raises(InvalidInputError):
        mem.update(str(uuid.uuid4()), "   ")


def test_delete_all_pages_through_everything(mem, monkeypatch):
    import memoryx.api.memory_core as memory_module

    monkeypatch.setattr(memory_module, "_PAGE", 3)  # force several pages
    user, other = _uid("bulk"), _uid("keep")
    mem.add([{"role": "user", "content": f"note number {i}"} for i in range(8)], user_id=user, infer=False)
    mem.add("keep me", user_id=other, infer=False)
    assert len(mem.get_all(user_id=user)["results"]) == 8
    out = mem.delete_all(user_id=user)
    assert out["deleted"] == 8
    assert mem.get_all(user_id=user)["results"] == []
    assert mem.search("note number", user_id=user)["results"] == []
    assert len(mem.get_all(user_id=other)["results"]) == 1


def test_delete_cascades_to_the_graph(mem):
    if mem.services.graph is None:
        pytest.skip("graph backend disabled (MEMORYX_GRAPH_BACKEND=none)")
    from memoryx.core.scope import Scope

    user = _uid("graph")
    scope = Scope(user_id=user)
    out = mem.add("I work at Siemens.", user_id=user)
    mid = out["results"][0]["id"]
    sql = mem.services.sql
    relations = [r for r in sql.relations_for_memory(mid) if r["valid"]]
    assert relations, "the add graph linked no relation to the memory"
    mem.delete(mid)
    assert not [r for r in sql.relations_for_memory(mid) if r["valid"]]
    names = {e["normalized_name"] for e in sql.list_entities(scope)}
    assert "siemens" not in names  # the orphaned entity is gone
    mem.add("I live in Graz.", user_id=user)
    mem.delete_all(user_id=user)
    assert not [r for r in sql.list_relations(scope) if r["valid"]]


def test_judgments(mem):
    user = _uid("judge")
    out = mem.add("I live in Madrid.", user_id=user)
    trace = out["trace_id"]
    j = mem.judgments(trace)
    assert j["trace_id"] == trace
    assert j["user_id"] == user
    listed = mem.list_judgments(user_id=user)
    assert trace in [r["trace_id"] for r in listed]
    v = mem.verify(trace, "correct", "looks right")
    assert v["verification_result"] == "CORRECT"
    with pytest.raises(InvalidInputError):
        mem.verify(trace, "MAYBE")
    with pytest.raises(NotFoundError):
        mem.judgments(str(uuid.uuid4()))
    stats = mem.judgment_stats(user_id=user)
    assert stats["total"] >= 1 and stats["verified"] == 1 and stats["accuracy"] == 1.0
    assert set(stats["latency_ms"]) >= {"p50", "p90", "p99"}
    assert mem.judgment_stats()["total"] >= 1


def test_review_then_resume(mem):
    user = _uid("review")
    pending = mem.add("I live in Oslo.", user_id=user, review=True)
    assert pending["status"] == "awaiting_review"
    assert pending["results"] == []
    ops = pending["pending_operations"]
    assert ops and ops[0]["event"] == "ADD"
    assert mem.get_all(user_id=user)["results"] == []  # nothing written before approval
    edited = [{**ops[0], "text": "Lives in Oslo, Norway"}]
    done = mem.resume_add(pending["trace_id"], edited)
    assert [r["memory"] for r in done["results"]] == ["Lives in Oslo, Norway"]
    assert _texts(mem.get_all(user_id=user)) == ["Lives in Oslo, Norway"]
    with pytest.raises(NotFoundError):
        mem.resume_add(pending["trace_id"])  # nothing is waiting any more


def test_get_context_and_reindex(mem):
    user = _uid("ctx")
    mem.add("I am allergic to peanuts.", user_id=user)
    block = mem.get_context("what food should I avoid?", user_id=user, max_tokens=200)
    assert isinstance(block, dict)
    assert "peanut" in str(block).lower()
    report = mem.reindex(user_id=user)
    assert isinstance(report, dict)
    assert mem.search("peanuts", user_id=user)["results"]


def test_get_context_dates_a_fact_by_when_it_happened(mem):
    """A fact about an earlier day is shown with that day, not with the day it was stored."""
    user = _uid("ctx-date")
    mem.add([{"role": "user", "content": "I went to Paris yesterday.", "timestamp": "2026-05-08T10:00:00Z"}], user_id=user)
    mem.add("I live in Rome.", user_id=user)  # no date of its own: dated by when it was said (today)
    block = mem.get_context("where did I travel?", user_id=user, max_tokens=300)["context"]
    paris = next(line for line in block.splitlines() if "Paris" in line)
    assert paris.startswith("- [2026-05-07]"), block
    rome = next(line for line in block.splitlines() if "Rome" in line)
    assert not rome.startswith("- [2026-05-0"), block


def test_from_config_mem0_style(tmp_path):
    s = settings_from_config({
        "llm": {"provider": "openai", "config": {"model": "gpt-4o-mini", "temperature": 0.2}},
        "embedder": {"provider": "huggingface", "config": {}},
        "vector_store": {"provider": "qdrant", "config": {"collection_name": "mine", "path": str(tmp_path / "q")}},
        "graph_store": {"provider": "neo4j", "config": {"url": "bolt://localhost:7687", "username": "u", "password": "p"}},
        "data_dir": str(tmp_path),
    })
    assert s.llm == "openai:gpt-4o-mini" and s.llm_temperature == 0.2
    assert s.embedding_model == "local:all-MiniLM-L6-v2"
    assert s.vector_backend == "qdrant" and s.collection_prefix == "mine"
    assert s.graph_backend == "neo4j" and s.neo4j_url == "bolt://localhost:7687"
    with pytest.raises(InvalidInputError):
        settings_from_config({"no_such_setting": 1})


def test_context_manager_and_reset(tmp_path):
    with Memory.from_config({"data_dir": str(tmp_path / "cm"), "graph_backend": "falkordb"}) as m:
        m.add("I live in Lisbon.", user_id="u1")
        assert m.get_all(user_id="u1")["results"]
        falkordb = m.services.falkordb
        m.reset()
        assert m.get_all(user_id="u1")["results"] == []
    assert m.services._closed
    if falkordb is not None:  # the embedded graph server this instance started is stopped
        proc = getattr(falkordb, "_proc", None) or getattr(falkordb, "process", None)
        if proc is not None:
            assert proc.poll() is not None
    # the data dir is free again: a new instance opens it
    with Memory(data_dir=tmp_path / "cm") as again:
        assert again.get_all(user_id="u1")["results"] == []


def test_async_memory(mem, tmp_path):
    async def scenario(am: AsyncMemory):
        user = _uid("async")
        out = await am.add("I live in Kyoto and I love matcha.", user_id=user)
        assert out["results"] and out["trace_id"]
        found = await am.search("where do I live", user_id=user)
        assert found["results"]
        mid = out["results"][0]["id"]
        assert (await am.get(mid))["id"] == mid
        assert len((await am.get_all(user_id=user))["results"]) == len(out["results"])
        await am.update(mid, "Lives in Osaka")
        hist = await am.history(mid)
        assert [h["event"] for h in hist] == ["ADD", "UPDATE"]
        assert (await am.judgments(out["trace_id"]))["trace_id"] == out["trace_id"]
        await am.delete(mid)
        with pytest.raises(NotFoundError):
            await am.get(mid)
        # concurrent adds of different users
        users = [_uid("par") for _ in range(3)]
        results = await asyncio.gather(*(am.add(f"I live in city{i}.", user_id=u) for i, u in enumerate(users)))
        assert all(r["results"] for r in results)
        assert (await am.delete_all(user_id=users[0]))["deleted"] >= 1
        pending = await am.add("I live in Bergen.", user_id=user, review=True)
        assert pending["status"] == "awaiting_review"
        done = await am.resume_add(pending["trace_id"])
        assert done["results"] and done["results"][0]["event"] in ("ADD", "UPDATE")
        assert isinstance(await am.judgment_stats(), dict)

    # sharing the services of an open Memory (one process may hold a data dir once)
    async def shared():
        async with AsyncMemory(services=mem.services) as am:
            await scenario(am)
        assert not mem.services._closed  # borrowed services stay open

    asyncio.run(shared())

    async def own():
        async with await AsyncMemory.create(data_dir=tmp_path / "async") as am:
            out = await am.add("I like hiking.", user_id="solo")
            assert out["results"]
            services = am.services
        assert services._closed

    asyncio.run(own())


def _valid_triples(mem, user: str) -> set[tuple[str, str, str]]:
    from memoryx.core.scope import Scope

    return {(r["source"], r["relation"], r["target"]) for r in mem.services.sql.list_relations(Scope(user_id=user))
            if r["valid"]}


def test_update_extracts_relations_again(mem):
    """A direct update re-reads the memory's relations: the old one is no longer valid, the new one is."""
    user = _uid("mover")
    out = mem.add("I live in Lisbon", user_id=user)
    mid = out["results"][0]["id"]
    assert (user, "lives_in", "Lisbon") in _valid_triples(mem, user)
    updated = mem.update(mid, "I moved to Porto")
    triples = _valid_triples(mem, user)
    assert (user, "lives_in", "Porto") in triples
    assert (user, "lives_in", "Lisbon") not in triples
    assert {"source": user, "relationship": "lives_in", "destination": "Lisbon"} in updated["relations"]["deleted_entities"]
    assert all(r["memory_id"] == mid for r in mem.services.sql.relations_for_memory(mid))


def test_participants_link_each_speakers_facts_to_their_user(mem):
    """participants= maps speaker names to user ids: a speaker's "I" facts belong to that user within the group,
    so a chatbot asks about each participant by their user id (search and list with user_id + group_id)."""
    group, caro, mel = _uid("club"), _uid("u-caro"), _uid("u-mel")
    chat = [{"role": "user", "name": "Caroline", "content": "I moved to Boston."},
            {"role": "user", "name": "melanie", "content": "I like painting."}]
    mem.add(chat, group_id=group, participants={"Caroline": caro, "Melanie": mel})
    found = mem.search("where do I live?", user_id=caro, group_id=group)["results"]
    assert found and "Boston" in found[0]["memory"], found
    # Caroline's facts only (her own episode of the chat, in her scope, retells what Melanie told her)
    assert not any("painting" in r["memory"] for r in found if r.get("category") != "episode")
    assert any("painting" in r["memory"] for r in mem.get_all(user_id=mel, group_id=group)["results"])
    assert not mem.get_all(user_id="Caroline", group_id=group)["results"]  # the name is not the participant id
    with pytest.raises(InvalidInputError, match="group_id"):
        mem.add(chat, user_id=caro, participants={"Caroline": caro})
    with pytest.raises(InvalidInputError, match="speaker names to user ids"):
        mem.add(chat, group_id=group, participants={"Caroline": 17})


def test_a_bad_setting_argument_names_the_setting(tmp_path):
    with pytest.raises(InvalidInputError, match=r"graph_backend='bogus' \(the setting MEMORYX_GRAPH_BACKEND\)"):
        Memory(data_dir=tmp_path, graph_backend="bogus")
