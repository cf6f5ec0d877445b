"""Rollback by trace id (memoryx.lifecycle.rollback): ADD / UPDATE / DELETE undone with the graph on (offline model,
embedded FalkorDB), refusal when a later run changed the memory, force, the REST route with keys, the CLI."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from memoryx.api.memory import Memory
from memoryx.errors import InvalidInputError, NotFoundError, RollbackConflictError
from tests.support import make_services


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    services = make_services(tmp_path_factory.mktemp("rollback"), graph=True,
                             api_keys={"k-alice": ["alice"], "k-bob": ["bob"]})
    m = Memory(services=services)
    yield m
    m.close()
    services.close()


def _valid(m, user="alice") -> set[tuple]:
    return {(r["source"], r["relation"], r["target"]) for r in m.services.sql.list_relations(None)
            if r["user_id"] == user}


def _texts(m, user="alice") -> list[str]:
    return sorted(x["memory"] for x in m.get_all(user_id=user)["results"])


def test_update_rolled_back_restores_berlin_and_its_relation(world):
    m = world
    t1 = m.add("I live in Berlin", user_id="alice")
    t2 = m.add("I moved to Munich", user_id="alice")
    mid = t2["results"][0]["id"]
    assert t2["results"][0]["event"] == "UPDATE" and _valid(m) == {("alice", "lives_in", "Munich")}

    with pytest.raises(RollbackConflictError) as err:  # t2 changed t1's memory afterwards
        m.rollback(t1["trace_id"])
    assert err.value.later_traces == [t2["trace_id"]] and t2["trace_id"] in str(err.value)

    out = m.rollback(t2["trace_id"])
    assert out["rolled_back_trace_id"] == t2["trace_id"] and out["trace_id"] != t2["trace_id"]
    assert m.get(mid)["memory"] == "User lives in Berlin"
    assert _valid(m) == {("alice", "lives_in", "Berlin")}
    assert "Munich" not in {e["name"] for e in m.services.sql.list_entities(None)}  # orphan removed
    hist = m.history(mid)
    assert [h["event"] for h in hist] == ["ADD", "UPDATE", "ROLLBACK"]
    assert hist[-1]["trace_id"] == out["trace_id"] and hist[-1]["new_memory"] == "User lives in Berlin"
    record = m.judgments(out["trace_id"])
    assert record["operation_type"] == "ROLLBACK" and record["input_content"] == t2["trace_id"]
    assert record["user_id"] == "alice"
    # the vector projection follows: search finds Berlin again
    assert m.search("where do I live", user_id="alice")["results"][0]["memory"] == "User lives in Berlin"

    with pytest.raises(InvalidInputError, match="already rolled back"):
        m.rollback(t2["trace_id"])
    # t2 is undone, so t1 (the ADD) can go now: the memory is soft-deleted, its relation invalidated
    out1 = m.rollback(t1["trace_id"])
    assert out1["results"][0]["memory"] is None and _texts(m) == [] and _valid(m) == set()
    assert m.services.sql.get_memory(mid, include_deleted=True)["deleted_at"]


def test_delete_rolled_back_undeletes(world):
    m = world
    added = m.add("I love sushi", user_id="bob")
    mid = added["results"][0]["id"]
    deleted = m.delete(mid)
    assert _texts(m, "bob") == []
    out = m.rollback(deleted["trace_id"])
    assert [r["id"] for r in out["results"]] == [mid] and _texts(m, "bob") == [added["results"][0]["memory"]]
    assert m.search("sushi", user_id="bob")["results"][0]["id"] == mid


def test_force_rolls_back_later_runs_first(world):
    m = world
    t1 = m.add("I live in Paris", user_id="carol")
    mid = t1["results"][0]["id"]
    t2 = m.update(mid, "User lives in Rome")
    t3 = m.update(mid, "User lives in Oslo")
    with pytest.raises(RollbackConflictError) as err:
        m.rollback(t1["trace_id"])
    assert err.value.later_traces == [t3["trace_id"], t2["trace_id"]]  # newest first
    out = m.rollback(t1["trace_id"], force=True)
    assert [d["trace_id"] for d in out["also_rolled_back"]] == [t3["trace_id"], t2["trace_id"]]
    assert _texts(m, "carol") == [] and _valid(m, "carol") == set()
    events = [h["event"] for h in m.history(mid)]
    assert events == ["ADD", "UPDATE", "UPDATE", "ROLLBACK", "ROLLBACK", "ROLLBACK"]


def test_unknown_trace_and_rest_route_with_keys(world):
    m = world
    with pytest.raises(NotFoundError):
        m.rollback("no-such-trace")
    t = m.add("I play the violin", user_id="alice")
    from memoryx.server.app import create_app

    with TestClient(create_app(memory=m, settings=m.services.settings)) as client:
        url = f"/v1/judgments/{t['trace_id']}/rollback"
        assert client.post(url, headers={"X-API-Key": "k-bob"}).status_code == 404  # another tenant's run
        assert client.post(url).status_code == 401
        r = client.post(url, headers={"X-API-Key": "k-alice"})
        assert r.status_code == 200, r.text
        assert r.json()["rolled_back_trace_id"] == t["trace_id"]
        assert client.post(url, headers={"X-API-Key": "k-alice"}).status_code == 422  # already rolled back
        # a later run on the same memory: 409 naming it
        t1 = m.add("I work at Siemens", user_id="alice")
        t2 = m.update(t1["results"][0]["id"], "User works at Bosch")
        r = client.post(f"/v1/judgments/{t1['trace_id']}/rollback", headers={"X-API-Key": "k-alice"})
        assert r.status_code == 409 and r.json()["error"]["later_traces"] == [t2["trace_id"]]
        r = client.post(f"/v1/judgments/{t1['trace_id']}/rollback?force=true", headers={"X-API-Key": "k-alice"})
        assert r.status_code == 200 and len(r.json()["also_rolled_back"]) == 1


def test_cli_rollback(tmp_path, capsys, monkeypatch):
    from memoryx.cli import main

    data = str(tmp_path / "cli")
    monkeypatch.setenv("MEMORYX_GRAPH_BACKEND", "none")
    monkeypatch.setenv("MEMORYX_LLM", "offline")
    assert main(["add", "I drink green tea", "--user-id", "dan", "--data-dir", data, "--json"]) == 0
    trace = json.loads(capsys.readouterr().out)["trace_id"]
    assert main(["rollback", trace, "--data-dir", data, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rolled_back_trace_id"] == trace and out["results"][0]["memory"] is None
