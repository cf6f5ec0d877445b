"""Group chats and speakers: the group_id scope and its tenancy, facts attributed to the participant
who stated them (offline model, English and Chinese), search over the group or one participant, the event
time of a replayed chat log, and REST / LangServe with API keys bound to groups."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from memoryx import Memory
from memoryx.core.scope import Scope
from memoryx.errors import ScopeError
from memoryx.server.app import create_app
from tests.support import shared_embeddings

KEYS = {"k-g1": {"groups": ["g1"]}, "k-caroline": ["Caroline"], "k-admin": {"admin": True}}
H = {k: {"X-API-Key": k} for k in KEYS}

CHAT = [
    {"role": "user", "content": "I moved to Boston last year.", "name": "Caroline", "timestamp": "2023-05-08T13:56:00Z"},
    {"role": "assistant", "content": "I have two kids.", "name": "Melanie", "timestamp": "2023-05-08T13:57:00Z"},
    {"role": "user", "content": "我喜欢打篮球。", "name": "小李", "user_id": "u-li", "timestamp": "2023-05-08T13:58:00Z"},
]


@pytest.fixture(scope="module")
def m(tmp_path_factory):
    # the statements alone: each participant's episode of a group chat is tested in test_participant_episodes
    mem = Memory(data_dir=tmp_path_factory.mktemp("group"), graph_backend="none", llm="offline",
                 api_keys=KEYS, embeddings=shared_embeddings(), participant_episodes=False)
    mem.add(CHAT, group_id="g1")
    mem.add("I live in Paris", user_id="Caroline")  # Caroline's private memory, outside the group
    try:
        yield mem
    finally:
        mem.close()


def _by_text(rows: list[dict]) -> dict[str, dict]:
    return {r["memory"]: r for r in rows}


def test_scope_group_id_is_exact_and_valid():
    assert Scope(group_id="g1").as_dict() == {"group_id": "g1"}
    assert Scope(user_id="a").match() == {"user_id": "a", "group_id": None}
    assert not Scope(user_id="a").contains({"user_id": "a", "group_id": "g1"})
    assert Scope(group_id="g1").contains({"user_id": "a", "group_id": "g1"})
    assert Scope(user_id="a").key() == "user_id=a|agent_id=-|run_id=-"  # lock keys of older scopes unchanged
    with pytest.raises(ScopeError):
        Scope(group_id="  ")


def test_facts_land_on_the_speaker_offline_model(m):
    rows = _by_text(m.get_all(group_id="g1")["results"])
    boston = next(r for t, r in rows.items() if t.startswith("Caroline") and "Boston" in t)
    kids = rows["Melanie has two kids"]
    li = rows["小李喜欢打篮球"]
    assert (boston["user_id"], boston["group_id"], boston["metadata"]["speaker"]) == ("Caroline", "g1", "Caroline")
    assert (kids["user_id"], kids["metadata"]["speaker"]) == ("Melanie", "Melanie")
    assert (li["user_id"], li["metadata"]["speaker"], li["metadata"]["participant_id"]) == ("u-li", "小李", "u-li")


def test_group_and_user_scopes_never_mix(m):
    private = [r["memory"] for r in m.get_all(user_id="Caroline")["results"]]
    assert private == ["User lives in Paris"]
    in_group = [r["memory"] for r in m.get_all(user_id="Caroline", group_id="g1")["results"]]
    assert in_group and all(t.startswith("Caroline") for t in in_group)
    assert all("Paris" not in r["memory"] for r in m.search("Where does Caroline live?", group_id="g1")["results"])
    assert all(r["group_id"] is None for r in m.search("Boston", user_id="Caroline")["results"])
    # Caroline's dated move is two memories: where she lives now, and the move with its date
    assert len(m.get_all(group_id="g1")["results"]) == 4 and m.get_all(group_id="g2")["results"] == []


def test_search_the_group_or_one_participant(m):
    everyone = [r["memory"] for r in m.search("kids", group_id="g1")["results"]]
    assert "Melanie has two kids" in everyone and len(everyone) == 4
    only = m.search("kids", group_id="g1", speaker="Caroline")["results"]
    assert only and all(r["metadata"]["speaker"] == "Caroline" for r in only)
    melanie = m.search("kids", group_id="g1", user_id="Melanie")["results"]
    assert [r["memory"] for r in melanie] == ["Melanie has two kids"]


def test_raw_turns_keep_their_speaker_and_event_time(m):
    turns = [{"role": "user", "content": "Caroline: I went to a support group.", "name": "Caroline",
              "timestamp": "2023-05-07T10:00:00Z"},
             {"role": "assistant", "content": "Melanie: That sounds great!", "name": "Melanie",
              "timestamp": "2023-05-07T10:01:00Z"}]
    m.add_many([{"messages": [t], "group_id": "g-raw"} for t in turns], infer=False)
    m.add(turns[:1], group_id="g-raw", infer=False)  # the same turn again: an exact duplicate, skipped
    rows = _by_text(m.get_all(group_id="g-raw")["results"])
    assert len(rows) == 2
    first = rows["Caroline: I went to a support group."]
    assert (first["user_id"], first["metadata"]["speaker"]) == ("Caroline", "Caroline")
    assert first["valid_at"].startswith("2023-05-07T10:00")  # the event time; created_at is the write time
    assert not first["created_at"].startswith("2023")
    hit = m.search("support group", group_id="g-raw")["results"][0]
    assert hit["valid_at"].startswith("2023-05-07") and hit["group_id"] == "g-raw"


def test_group_rest_with_keys(m):
    with TestClient(create_app(memory=m, settings=m.settings)) as c:
        r = c.post("/v1/memories/search", json={"query": "kids", "group_id": "g1"}, headers=H["k-g1"])
        assert r.status_code == 200 and "Melanie has two kids" in [x["memory"] for x in r.json()["results"]]
        r = c.post("/v1/memories/search", json={"query": "kids"}, headers=H["k-g1"])  # the key's one group
        assert r.status_code == 200 and r.json()["results"]
        r = c.post("/v1/memories/search", json={"query": "x", "group_id": "g1", "speaker": "Melanie"}, headers=H["k-g1"])
        assert [x["metadata"]["speaker"] for x in r.json()["results"]] == ["Melanie"]
        # a user key never reaches the group, even for its own user; a group key never a user's memories
        assert c.get("/v1/memories?group_id=g1&user_id=Caroline", headers=H["k-caroline"]).status_code == 403
        # a group key acts in its group: user_id names a participant there, never the user's private memories
        seen = c.get("/v1/memories?user_id=Caroline", headers=H["k-g1"]).json()["results"]
        assert seen and all(x["group_id"] == "g1" and x["user_id"] == "Caroline" for x in seen)
        mine = c.get("/v1/memories?user_id=Caroline", headers=H["k-caroline"]).json()["results"]
        assert [x["memory"] for x in mine] == ["User lives in Paris"]
        group_row = m.get_all(group_id="g1")["results"][0]
        assert c.get(f"/v1/memories/{group_row['id']}", headers=H["k-caroline"]).status_code == 404
        assert c.get(f"/v1/memories/{group_row['id']}", headers=H["k-g1"]).status_code == 200
        r = c.post("/v1/memories", json={"messages": [{"role": "user", "content": "I am a painter.", "name": "Melanie"}],
                                         "group_id": "g1"}, headers=H["k-g1"])
        assert r.status_code == 200, r.text
        assert [x["memory"] for x in r.json()["results"]] == ["Melanie is a painter"]
        r = c.post("/v1/memories", json={"messages": "hi", "group_id": "g2"}, headers=H["k-g1"])
        assert r.status_code == 403
        # LangServe: the search graph with the key's group
        r = c.post("/graphs/search/invoke", json={"input": {"query": "painter", "group_id": "g1"}}, headers=H["k-g1"])
        assert r.status_code == 200, r.text
        assert "Melanie is a painter" in json.dumps(r.json(), ensure_ascii=False)
        r = c.post("/graphs/search/invoke", json={"input": {"query": "painter", "group_id": "g1"}},
                   headers=H["k-caroline"])
        assert r.status_code in (403, 422)


def test_key_spec_accepts_groups():
    from memoryx.server.auth import parse_key_spec

    p = parse_key_spec("k", {"groups": ["g1"]})
    assert p.can(None, None, "g1") and not p.can("Caroline") and not p.can("Caroline", None, "g2")
    with pytest.raises(ValueError):
        parse_key_spec("k", {"groups": []})


def test_the_judge_sees_the_group_and_dedupes(m):
    again = m.add([{"role": "user", "content": "I have two kids.", "name": "Melanie"}], group_id="g1")
    assert [r["event"] for r in again["results"]] in ([], ["NONE"])  # already known: nothing new is written
    assert [r["memory"] for r in m.get_all(group_id="g1", user_id="Melanie")["results"]].count("Melanie has two kids") == 1


def test_query_periods_read_from_a_replayed_logs_present(m, monkeypatch):
    # the hand-weighted ranking's period bonus: between two near-identical turns the fitted order puts the later first
    settings = m.services.settings
    monkeypatch.setattr(settings, "search_tuning", {**settings.search_tuning, "ranker": "hand"})
    log = [("2023-07-14T10:00:00Z", "Caroline: We had a picnic by the lake."),
           ("2023-08-20T10:00:00Z", "Caroline: We had a picnic in the park.")]
    m.add_many([{"messages": [{"role": "user", "content": text, "name": "Caroline", "timestamp": ts}],
                 "group_id": "g-july"} for ts, text in log], infer=False)
    from memoryx.nodes.analyze_query import scope_present

    assert scope_present(m.services, Scope(group_id="g-july")).isoformat().startswith("2023-08-20")
    assert scope_present(m.services, Scope(user_id="Caroline")).year > 2023  # no event times: the wall clock
    top = m.search("Where did Caroline have a picnic in July?", group_id="g-july")["results"][0]
    assert "lake" in top["memory"] and "time" in top["sources"]


def test_rest_batch_items_take_the_keys_groups(m):
    with TestClient(create_app(memory=m, settings=m.settings)) as c:
        item = {"messages": [{"role": "user", "content": "Caroline: batch turn", "name": "Caroline"}], "group_id": "g1"}
        r = c.post("/v1/memories/batch", json={"items": [item, {**item, "group_id": "g2"}], "infer": False},
                   headers=H["k-g1"])
        assert r.status_code == 200, r.text
        ok, denied = r.json()["results"]
        assert ok["results"] and not ok.get("error") and denied.get("error")


def test_each_fact_is_dated_from_its_own_message(tmp_path):
    """One add of a chat said over several days dates each fact from the message it came from
    (the offline model names the message; a model that does not is matched by speaker and words)."""
    from memoryx.nodes.extract_facts import date_facts
    from memoryx.prompts.facts import format_conversation

    chat = [{"role": "user", "content": "I went to Paris yesterday.", "name": "Caroline", "timestamp": "2023-05-08T10:00:00Z"},
            {"role": "user", "content": "I went to Rome yesterday.", "name": "Melanie", "timestamp": "2023-06-20T10:00:00Z"}]
    assert format_conversation(chat, number=True).splitlines()[1].startswith("#0 [2023-05-08T10:00:00Z] user (Caroline): ")
    with Memory(data_dir=tmp_path, graph_backend="none", llm="offline", embeddings=shared_embeddings()) as mem:
        mem.add(chat, group_id="g2")
        rows = {r["user_id"]: r for r in mem.get_all(group_id="g2")["results"]}
    assert rows["Caroline"]["valid_at"].startswith("2023-05-07") and "(2023-05-07)" in rows["Caroline"]["memory"]
    assert rows["Melanie"]["valid_at"].startswith("2023-06-19") and "(2023-06-19)" in rows["Melanie"]["memory"]
    # without the model's message number: the speaker's message, then the words shared with the fact
    unnumbered = date_facts([{"text": "Caroline went to Paris yesterday", "speaker": "Caroline"},
                             {"text": "User went to Rome yesterday"}], chat)
    assert "(2023-05-07)" in unnumbered[0]["text"] and "(2023-06-19)" in unnumbered[1]["text"]
