"""`participants` on REST (POST /v1/memories), over real HTTP: a group chat's speakers mapped to user ids, each
speaker's own facts found by that user id; a key may map speakers only to users it holds (403 otherwise,
nothing written); a malformed map or one without group_id is a 4xx that says what to pass."""

from __future__ import annotations

import httpx
import pytest

from memoryx import Memory
from memoryx.server.app import create_app
from tests.support import ServerThread, shared_embeddings

KEYS = {
    "k-club": {"users": ["u-17", "u-42"], "groups": ["club"]},
    "k-group": {"groups": ["club"]},
    "k-admin": {"admin": True},
}
CHAT = [{"role": "user", "name": "Caroline", "content": "I moved to Boston last year."},
        {"role": "user", "name": "Melanie", "content": "I love pottery."}]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with Memory(data_dir=tmp_path_factory.mktemp("participants"), graph_backend="none", api_keys=KEYS,
                embeddings=shared_embeddings()) as m:
        with ServerThread(create_app(memory=m)) as srv:
            yield m, srv.url


def _post(url: str, key: str, path: str, body: dict) -> httpx.Response:
    return httpx.post(url + path, json=body, headers={"X-API-Key": key}, timeout=120)


def _texts(m: Memory, **scope) -> list[str]:
    return [r["memory"] for r in m.get_all(**scope)["results"]]


def test_each_speaker_s_facts_go_to_the_mapped_user(world):
    m, url = world
    r = _post(url, "k-club", "/v1/memories", {"messages": CHAT, "group_id": "club",
                                               "participants": {"caroline": "u-17", "Melanie": "u-42"}})
    assert r.status_code == 200, r.text
    found = _post(url, "k-club", "/v1/memories/search",
                  {"query": "where does she live?", "group_id": "club", "user_id": "u-17"}).json()["results"]
    assert any("Boston" in x["memory"] for x in found), found
    # Melanie's fact is Melanie's (Caroline's own episode of the chat, in her scope, retells what Melanie said)
    assert not any("pottery" in x["memory"] for x in found if x.get("category") != "episode")
    assert any("pottery" in t for t in _texts(m, user_id="u-42", group_id="club"))
    assert all(x["user_id"] == "u-17" and x["group_id"] == "club" for x in found)


@pytest.mark.parametrize("key,participants", [("k-group", {"Caroline": "u-17"}),     # a group key holds no user
                                              ("k-club", {"Caroline": "u-99"})])    # a user the key does not hold
def test_a_key_maps_speakers_only_to_users_it_holds(world, key, participants):
    m, url = world
    before = _texts(m, group_id="club")
    r = _post(url, key, "/v1/memories", {"messages": [{"role": "user", "name": "Caroline",
                                                       "content": "I adopted a cat named Miso."}],
                                          "group_id": "club", "participants": participants})
    assert r.status_code == 403, r.text
    assert list(participants.values())[0] in r.text and "participants" in r.text
    assert _texts(m, group_id="club") == before  # nothing written


def test_a_bad_map_or_no_group_is_a_4xx_that_says_what_to_pass(world):
    _, url = world
    r = _post(url, "k-admin", "/v1/memories", {"messages": CHAT, "user_id": "u-17",
                                                "participants": {"Caroline": "u-17"}})
    assert r.status_code == 422 and "group_id" in r.text, r.text
    r = _post(url, "k-admin", "/v1/memories", {"messages": CHAT, "group_id": "club", "participants": {"Caroline": 17}})
    assert r.status_code == 422, r.text
    r = _post(url, "k-admin", "/v1/memories", {"messages": "I moved to Boston.", "group_id": "club",
                                                "participants": {"Caroline": "u-17"}})
    assert r.status_code == 422 and "list" in r.text, r.text
