"""Every scope field of an add's messages is authorised like `participants`, on every door that adds: a group
key (which holds no user) may not file a message under a user through the message's own user_id, the way it
may not through participants; a key holding the user may. Refused means 403 (or the batch's per-item error)
and nothing written."""

from __future__ import annotations

import httpx
import pytest

from memoryx import Memory
from memoryx.server.app import create_app
from tests.support import ServerThread, shared_embeddings

KEYS = {"k-group": {"groups": ["g1"]}, "k-alice-g1": {"users": ["alice"], "groups": ["g1"]},
        "k-bot": {"users": ["alice"], "agents": ["bot"]}}
SAID = {"role": "user", "name": "X", "user_id": "alice", "content": "I moved to Atlantis."}


def _doors(message: dict) -> dict[str, tuple[str, dict]]:
    return {
        "rest": ("/v1/memories", {"messages": [message], "group_id": "g1", "infer": False}),
        "rest participants": ("/v1/memories", {"messages": [{k: v for k, v in message.items() if k != "user_id"}],
                                               "group_id": "g1", "participants": {"X": "alice"}, "infer": False}),
        "batch": ("/v1/memories/batch", {"items": [{"messages": [message], "group_id": "g1"}], "infer": False}),
        "mem0": ("/v1/memories/", {"messages": [message], "infer": False}),
        "graph add": ("/graphs/add/invoke", {"input": {"messages": [message], "group_id": "g1"}}),
        "graph add stream": ("/graphs/add/stream", {"input": {"messages": [message], "group_id": "g1"}}),
    }


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with Memory(data_dir=tmp_path_factory.mktemp("msgscope"), graph_backend="none", api_keys=KEYS,
                embeddings=shared_embeddings()) as m:
        with ServerThread(create_app(memory=m)) as srv:
            yield m, srv.url


def _atlantis(m: Memory) -> list[str]:
    rows = (m.get_all(user_id="alice", group_id="g1", limit=1000)["results"]
            + m.get_all(group_id="g1", limit=1000)["results"])
    return [r["id"] for r in rows if "Atlantis" in r["memory"]]


@pytest.mark.parametrize("door", list(_doors(SAID)))
def test_a_group_key_may_not_file_a_message_under_a_user(world, door):
    m, url = world
    path, body = _doors(SAID)[door]
    r = httpx.post(url + path, json=body, headers={"X-API-Key": "k-group"}, timeout=120)
    if door == "batch":
        assert r.status_code == 200 and r.json()["results"][0]["error"]["type"] == "forbidden", r.text
    else:
        assert r.status_code == 403, (door, r.status_code, r.text[:300])
    assert "alice" in r.text
    assert _atlantis(m) == []


def test_a_message_s_agent_id_never_leaves_the_key_s_agents(world):
    m, url = world
    said = [{"role": "user", "content": "I moved to Atlantis.", "agent_id": "other"}]
    r = httpx.post(url + "/graphs/add/invoke", json={"input": {"user_id": "alice", "messages": said}},
                   headers={"X-API-Key": "k-bot"}, timeout=120)
    assert r.status_code == 403 and "other" in r.text, r.text
    # REST's message model has no agent_id (it is dropped): what is written lies in the key's agent
    r = httpx.post(url + "/v1/memories", json={"user_id": "alice", "infer": False, "messages": said},
                   headers={"X-API-Key": "k-bot"}, timeout=120)
    assert r.status_code == 200, r.text
    rows = [x for x in m.get_all(user_id="alice", limit=1000)["results"] if "Atlantis" in x["memory"]]
    assert rows and all(x["agent_id"] == "bot" for x in rows), rows
    for row in rows:
        m.delete(row["id"])


def test_a_key_holding_the_user_may(world):
    m, url = world
    r = httpx.post(url + "/v1/memories", json={"messages": [SAID], "group_id": "g1", "infer": False},
                   headers={"X-API-Key": "k-alice-g1"}, timeout=120)
    assert r.status_code == 200, r.text
    assert _atlantis(m)
