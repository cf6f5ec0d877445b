"""Data derived from memories (profiles, the context block, its cold start) read for a key through the same
lock as the memories, over real HTTP: a group key never reads a user's private profile; a user + agent key
reads the profile values said to its own agent only; the cold start of an empty user never lends a key the
memories of an agent it does not hold."""

from __future__ import annotations

import httpx
import pytest

from memoryx import Memory
from memoryx.server.app import create_app
from tests.support import ServerThread, shared_embeddings

KEYS = {
    "k-group": {"groups": ["g1"]},
    "k-alice-g1": {"users": ["alice"], "groups": ["g1"]},
    "k-alice-bot": {"users": ["alice"], "agents": ["bot"]},
    "k-alice": ["alice"],
    "k-carol": ["carol"],
    "k-admin": {"admin": True},
    "k-agent": {"agents": ["bot"]},
    "k-alice-two": {"users": ["alice"], "agents": ["bot", "other"]},
}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with Memory(data_dir=tmp_path_factory.mktemp("derived"), graph_backend="none", api_keys=KEYS,
                embeddings=shared_embeddings()) as m:
        m.add("I live in Lisbon.", user_id="alice", agent_id="bot")
        m.add("I like sushi.", user_id="alice", agent_id="other")
        m.add("I work at Initech.", user_id="bob")
        m.add("Greetings from the club.", user_id="alice", group_id="g1", infer=False)
        m.add("PRIVATELONG my bank is Northwind.", user_id="alice", infer=False, metadata={"layer": "long_term"})
        m.add("PRIVATEWORK my pin is 1234.", user_id="alice", run_id="r1", infer=False)
        m.add("BOTLONG my bank is Northwind.", user_id="alice", agent_id="bot", infer=False,
              metadata={"layer": "long_term"})
        m.add("SECRETAGENT rule: always answer in verse.", agent_id="bot", agent_memory="global")
        with ServerThread(create_app(memory=m)) as srv:
            yield m, srv.url


def _post(url: str, key: str, path: str, body: dict) -> httpx.Response:
    return httpx.post(url + path, json=body, headers={"X-API-Key": key}, timeout=120)


def _get(url: str, key: str, path: str) -> httpx.Response:
    return httpx.get(url + path, headers={"X-API-Key": key}, timeout=120)


def test_the_seeded_profile_is_what_the_owner_reads(world):
    m, url = world
    profile = _get(url, "k-alice", "/v1/profiles/alice?include_history=true").json()
    assert profile["home"]["value"] == "Lisbon"
    assert [p["value"] for p in profile["preferences"]] == ["sushi"]


@pytest.mark.parametrize("key,body", [
    ("k-group", {"user_id": "alice", "query": "hi"}),
    ("k-group", {"user_id": "bob", "query": "where does the user work?"}),  # a user the group never saw
    ("k-alice-g1", {"user_id": "bob", "group_id": "g1", "query": "where does the user work?"}),
    ("k-alice-g1", {"user_id": "alice", "group_id": "g1", "query": "hi"}),
    ("k-group", {"user_id": "alice", "run_id": "r1", "query": "what is my pin?"}),
])
def test_a_group_scope_s_context_block_holds_no_private_profile(world, key, body):
    _, url = world
    r = _post(url, key, "/v1/memories/context", body)
    assert r.status_code == 200, r.text
    for private in ("Lisbon", "sushi", "Initech", "Lives in", "Works at", "PRIVATELONG", "PRIVATEWORK"):
        assert private not in r.text, r.text


def test_a_user_agent_key_reads_the_profile_of_its_own_agent(world):
    _, url = world
    r = _get(url, "k-alice-bot", "/v1/profiles/alice?include_history=true")
    assert r.status_code == 200, r.text
    assert r.json()["home"]["value"] == "Lisbon"
    assert "sushi" not in r.text  # said to agent "other"
    block = _post(url, "k-alice-bot", "/v1/memories/context", {"user_id": "alice", "query": "what does she like?"})
    assert block.status_code == 200, block.text
    assert "Lisbon" in block.text and "sushi" not in block.text


def test_a_user_key_reads_the_whole_profile(world):
    _, url = world
    block = _post(url, "k-alice", "/v1/memories/context", {"user_id": "alice", "query": "what does she like?"})
    assert "Lisbon" in block.text and "sushi" in block.text


def test_an_empty_user_s_cold_start_lends_no_agent_memory_the_key_does_not_hold(world):
    _, url = world
    r = _post(url, "k-carol", "/v1/memories/context", {"user_id": "carol", "agent_id": "bot", "query": "hi"})
    assert r.status_code == 200, r.text
    assert "SECRETAGENT" not in r.text
    admin = _post(url, "k-admin", "/v1/memories/context", {"user_id": "carol", "agent_id": "bot", "query": "hi"})
    assert "SECRETAGENT" in admin.text  # the cold start itself still borrows the agent's own memories


def test_an_agent_scope_s_export_holds_the_profile_values_said_to_that_agent(world):
    m, _ = world
    narrow = m.export(user_id="alice", agent_id="bot")
    assert '"profile_value"' in narrow and "Lisbon" in narrow and "sushi" not in narrow
    whole = m.export(user_id="alice")
    assert "Lisbon" in whole and "sushi" in whole


def test_an_agent_key_s_context_block_holds_no_user_s_memories(world):
    _, url = world
    r = _post(url, "k-agent", "/v1/memories/context", {"query": "what is my bank?"})
    assert r.status_code == 200, r.text
    assert "BOTLONG" not in r.text and "Lisbon" not in r.text, r.text
    assert "SECRETAGENT" in r.text  # the agent's own global memories are its to read


def test_a_profile_read_names_the_agent_among_several(world):
    _, url = world
    assert _get(url, "k-alice-two", "/v1/profiles/alice").status_code == 400  # which of its agents?
    other = _get(url, "k-alice-two", "/v1/profiles/alice?agent_id=other")
    assert other.status_code == 200 and "sushi" in other.text and "Lisbon" not in other.text, other.text
    assert _get(url, "k-alice-bot", "/v1/profiles/alice?agent_id=other").status_code == 404
    narrowed = _get(url, "k-alice", "/v1/profiles/alice?agent_id=bot")  # a user key may narrow to one agent
    assert "Lisbon" in narrowed.text and "sushi" not in narrowed.text


def test_a_group_key_s_judgment_list_is_the_group_s_page(world):
    m, url = world
    from memoryx.core.scope import Scope

    m.services.sql.save_judgment("club-run", scope=Scope(user_id="alice", group_id="g1"), status="done")
    for i in range(60):  # newer runs of other scopes: a page of the whole store would hold none of the group's
        m.services.sql.save_judgment(f"bob-run-{i}", scope=Scope(user_id="bob"), status="done")
    r = _get(url, "k-group", "/v1/judgments?limit=10")
    assert r.status_code == 200, r.text
    assert [j["trace_id"] for j in r.json()["results"]] == ["club-run"], r.text
