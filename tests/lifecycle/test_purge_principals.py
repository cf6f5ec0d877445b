"""POST /v1/purge removes exactly the scope the key may write, profiles included, one test per principal kind
(over real HTTP): a group key purging a participant never touches that user's private profile or memories (an
ended value's empty memory list is not "read only from purged memories"); a user + agent key removes the values
said to its agent only; a user key its user's whole profile; an agent key is refused; an admin key purges
everything of the user."""

from __future__ import annotations

import httpx
import pytest

from memoryx import Memory
from memoryx.server.app import create_app
from tests.support import ServerThread, shared_embeddings

KEYS = {
    "k-group": {"groups": ["g1"]},
    "k-alice-bot": {"users": ["alice"], "agents": ["bot"]},
    "k-alice": ["alice"],
    "k-agent": {"agents": ["bot"]},
    "k-admin": {"admin": True},
}


def _value(m: Memory, user: str, text: str, value: str, agent: str | None = None, *, ended: bool = False) -> str:
    """A memory of `user` (private, with `agent`) backing a profile preference `value`; `ended`: the memory
    is then forgotten, which ends the value with an empty memory list."""
    mid = m.add(text, user_id=user, agent_id=agent, infer=False)["results"][0]["id"]
    sql = m.services.sql
    sql.apply_profile_changes(f"user:{user}", [{"op": "add", "field": "preference", "value": value,
                                                "key": value.lower(), "memory_id": mid}])
    if ended:
        sql.forget_profile_memories(f"user:{user}", [mid])
    return mid


def _profile_values(m: Memory, user: str) -> set[str]:
    rows = m.services.sql.profile_values(f"user:{user}", include_ended=True)
    return {r["value"] for r in rows}


@pytest.fixture
def world(tmp_path):
    with Memory(data_dir=tmp_path, graph_backend="none", api_keys=KEYS, embeddings=shared_embeddings()) as m:
        for user in ("alice", "bob"):
            _value(m, user, f"{user} likes tea", "tea", "bot")
            _value(m, user, f"{user} likes sake", "sake", "other")
            _value(m, user, f"{user} liked jazz", "jazz", ended=True)
        m.add("bob says hi to the club", user_id="bob", group_id="g1", infer=False)
        with ServerThread(create_app(memory=m)) as srv:
            yield m, srv.url


def _purge(url: str, key: str, body: dict) -> httpx.Response:
    return httpx.post(url + "/v1/purge", json={**body, "compact": False}, headers={"X-API-Key": key}, timeout=120)


def test_a_group_key_purges_the_participant_in_its_group_only(world):
    m, url = world
    private = sorted(r["id"] for r in m.get_all(user_id="bob")["results"])
    r = _purge(url, "k-group", {"user_id": "bob"})
    assert r.status_code == 200, r.text
    assert _profile_values(m, "bob") == {"tea", "sake", "jazz"}  # the private profile, ended values too
    assert sorted(r["id"] for r in m.get_all(user_id="bob")["results"]) == private
    assert m.get_all(user_id="bob", group_id="g1")["results"] == []


def test_a_user_agent_key_purges_the_values_said_to_its_agent(world):
    m, url = world
    r = _purge(url, "k-alice-bot", {"user_id": "alice"})
    assert r.status_code == 200, r.text
    assert _profile_values(m, "alice") == {"sake", "jazz"}
    assert _profile_values(m, "bob") == {"tea", "sake", "jazz"}


def test_a_user_key_purges_its_user_s_whole_profile(world):
    m, url = world
    r = _purge(url, "k-alice", {"user_id": "alice"})
    assert r.status_code == 200, r.text
    assert _profile_values(m, "alice") == set()
    assert _profile_values(m, "bob") == {"tea", "sake", "jazz"}


def test_an_agent_key_may_not_purge(world):
    m, url = world
    r = _purge(url, "k-agent", {"agent_id": "bot"})
    assert r.status_code == 403, r.text
    assert _profile_values(m, "alice") == {"tea", "sake", "jazz"}


def test_an_admin_key_purges_the_user_everywhere(world):
    m, url = world
    r = _purge(url, "k-admin", {"user_id": "bob"})
    assert r.status_code == 200, r.text
    assert _profile_values(m, "bob") == set()
    assert m.get_all(user_id="bob", group_id="g1")["results"] == []
    assert _profile_values(m, "alice") == {"tea", "sake", "jazz"}
