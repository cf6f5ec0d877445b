"""Episodes per participant: a group conversation with two or more participants gives each participant an
episode from their own point of view, in their own scope (never in another participant's results), linked
to the facts they stated, noted in the judgment record; on by default, off with participant_episodes=False."""

from __future__ import annotations

import json

from memoryx.api.memory import Memory
from tests.support import scripted, shared_embeddings

CHAT = [{"role": "user", "name": "Caroline", "content": "I moved to Boston last week. I start at the hospital on Monday.",
         "timestamp": "2023-05-08T13:56:00Z"},
        {"role": "user", "name": "Melanie", "content": "Congrats! I adopted a puppy named Max.",
         "timestamp": "2023-05-08T13:57:00Z"},
        {"role": "assistant", "content": "Max sounds lovely.", "timestamp": "2023-05-08T13:57:30Z"},
        {"role": "user", "name": "Caroline", "content": "Let's walk Max together on Saturday.",
         "timestamp": "2023-05-08T13:58:00Z"}]
WHO = {"Caroline": "u-c", "Melanie": "u-m"}


def _own(m, **scope):
    return [e for e in m.get_all(**scope, filters={"category": "episode"})["results"] if e["metadata"].get("perspective")]


def _memory(tmp_path, **kw):
    return Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings(), **kw)


def test_each_participant_gets_their_own_episode_offline(tmp_path):
    with _memory(tmp_path, llm="offline") as m:
        out = m.add(CHAT, group_id="club", participants=WHO)
        mine = {e["user_id"]: e for e in out["episodes"] if e.get("user_id")}
        assert set(mine) == {"u-c", "u-m"}  # the assistant is no participant
        caroline, melanie = _own(m, user_id="u-c", group_id="club"), _own(m, user_id="u-m", group_id="club")
        assert [e["id"] for e in caroline] == [mine["u-c"]["id"]] and [e["id"] for e in melanie] == [mine["u-m"]["id"]]
        # each from their own point of view: their words first and whole, the others' after
        assert caroline[0]["memory"].startswith("[2023-05-08 13:56 – 13:58] Caroline: I moved to Boston last week. "
                                                "I start at the hospital on Monday.")
        assert melanie[0]["memory"].startswith("[2023-05-08 13:56 – 13:58] Melanie: Congrats! I adopted a puppy named Max.")
        assert "(Caroline:" in melanie[0]["memory"] and "hospital" not in melanie[0]["memory"]
        meta = melanie[0]["metadata"]
        assert meta["speaker"] == "Melanie" and meta["participants"] == ["Caroline", "Melanie", "Assistant"]
        assert melanie[0]["memory_type"] == "episodic" and meta["start"].startswith("2023-05-08")
        # the semantic memories derived from the episode: the facts Melanie stated, in her scope
        facts = {f["id"]: f for f in m.get_all(user_id="u-m", group_id="club")["results"]}
        assert meta["fact_ids"] and all(facts[i]["user_id"] == "u-m" for i in meta["fact_ids"])
        assert any("puppy" in facts[i]["memory"] for i in meta["fact_ids"])
        # the conversation unit is the group's own: the whole group sees it, neither participant's scope holds it
        unit = [e for e in m.get_all(group_id="club", filters={"category": "episode"})["results"]
                if not e["metadata"].get("perspective")]
        assert len(unit) == 1 and unit[0]["user_id"] is None and meta["unit_id"] == unit[0]["id"]
        # the judgment record names each participant's episode
        reasoning = m.judgments(out["trace_id"])["reasoning"]
        assert f"Caroline -> {mine['u-c']['id']} (ADD, user u-c)" in reasoning
        assert f"Melanie -> {mine['u-m']['id']} (ADD, user u-m)" in reasoning


def test_one_participants_episode_never_reaches_another(tmp_path):
    with _memory(tmp_path, llm="offline") as m:
        m.add(CHAT, group_id="club", participants=WHO)
        melanies = {e["id"] for e in _own(m, user_id="u-m", group_id="club")}
        assert melanies
        hits = m.search("walk Max together on Saturday", user_id="u-c", group_id="club", limit=50)["results"]
        assert hits and all(h["user_id"] == "u-c" for h in hits) and not melanies & {h["id"] for h in hits}
        for scope in ({"user_id": "u-c", "group_id": "club"}, {"user_id": "u-c"}):
            assert not melanies & {r["id"] for r in m.get_all(**scope, limit=1000)["results"]}
        # the group as a whole sees every participant's episode
        assert melanies <= {r["id"] for r in m.get_all(group_id="club", limit=1000)["results"]}
        context = m.get_context("What did we plan with Max?", user_id="u-c", group_id="club")
        assert context["episodes"] and not melanies & set(context["episodes"])


def test_the_closed_unit_gets_the_models_episodes(tmp_path):
    unit = json.dumps({"title": "Boston and Max", "narratives": {"Caroline": "Caroline moved.", "Melanie": "Melanie has Max."}})
    views = json.dumps({"title": "Boston and Max", "episodes": {
        "caroline": "Caroline told Melanie she moved to Boston; Melanie invited her to walk the puppy Max on Saturday.",
        "Melanie": "Melanie heard Caroline moved to Boston and told her about Max; they will walk Max on Saturday."}})
    with _memory(tmp_path, llm=scripted(unit, views)) as m:
        m.add(CHAT, group_id="club", run_id="r1", participants=WHO, infer=False)
        open_views = _own(m, user_id="u-c", group_id="club")
        assert open_views[0]["metadata"]["unit_open"] is True
        m.end_run("r1", group_id="club")  # the conversation is over: the model writes the final episodes
        caroline = _own(m, user_id="u-c", group_id="club")
        melanie = _own(m, user_id="u-m", group_id="club")
        assert [e["id"] for e in caroline] == [open_views[0]["id"]]  # rewritten, not a second one
        assert caroline[0]["memory"] == ("[2023-05-08 13:56 – 13:58] Boston and Max. Caroline told Melanie she moved "
                                         "to Boston; Melanie invited her to walk the puppy Max on Saturday.")
        assert melanie[0]["memory"].startswith("[2023-05-08 13:56 – 13:58] Boston and Max. Melanie heard")
        assert caroline[0]["metadata"]["unit_open"] is False and caroline[0]["run_id"] == "r1"


def test_a_chat_replayed_one_turn_per_add_gets_episodes_once_two_have_spoken(tmp_path):
    with _memory(tmp_path, llm="offline", episode_topic_threshold=-1) as m:  # one unit: no similarity cut
        first = m.add([CHAT[0]], group_id="club", participants=WHO)
        assert not [e for e in first["episodes"] if e.get("user_id")]  # one participant so far: the unit only
        m.add([CHAT[1]], group_id="club", participants=WHO)
        m.add([CHAT[3]], group_id="club", participants=WHO)
        caroline = _own(m, user_id="u-c", group_id="club")
        assert len(caroline) == 1 and caroline[0]["metadata"]["messages"] == 3
        assert "walk Max together" in caroline[0]["memory"]


def test_off_or_outside_a_group_no_participant_episodes(tmp_path):
    with _memory(tmp_path / "off", llm="offline", participant_episodes=False) as m:
        out = m.add(CHAT, group_id="club", participants=WHO)
        assert "episodes" not in out and m.get_all(group_id="club", filters={"category": "episode"})["results"] == []
    with _memory(tmp_path / "user", llm="offline") as m:  # a user's own chat: unchanged, no episodes by default
        out = m.add([{"role": "user", "content": "I moved to Boston last week."}], user_id="u-c")
        assert "episodes" not in out and m.get_all(user_id="u-c", filters={"category": "episode"})["results"] == []
