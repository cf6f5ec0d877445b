"""MemUnits and episodes (issue 13): cutting by time gaps, markers and similarity drops; episode memories
(offline narrative, a scripted real-model narrative, fact links, replay safety), search and get_context."""

from __future__ import annotations

import json

from memoryx.episodes import cut_units, episode_text, offline_narratives, parse_transcript, unit_transcript
from memoryx.memory import Memory
from tests.support import facts_answer, scripted, shared_embeddings


def _msg(content, ts=None, role="user", name=None):
    m = {"role": role, "content": content}
    if ts:
        m["timestamp"] = ts
    if name:
        m["name"] = name
    return m


def test_units_cut_at_time_gaps_and_markers():
    msgs = [_msg("I went hiking in the Alps.", "2024-05-01T10:00:00Z"),
            _msg("It was beautiful up there.", "2024-05-01T10:02:00Z"),
            _msg("Now I am at home again.", "2024-05-01T15:00:00Z"),
            _msg("By the way, my sister visits next week.", "2024-05-01T15:01:00Z")]
    units = cut_units(msgs, None, gap_s=1800, threshold=-1)
    assert [len(u.messages) for u in units] == [2, 1, 1]
    assert units[0].start.startswith("2024-05-01T10:00") and units[0].end.startswith("2024-05-01T10:02")


def test_units_cut_at_a_topic_shift():
    msgs = [_msg("I adopted a puppy named Max."), _msg("Max is a golden retriever puppy."),
            _msg("My puppy Max loves the park."), _msg("The quarterly tax filing deadline is in April.")]
    vectors = shared_embeddings().embed_documents([m["content"] for m in msgs])
    units = cut_units(msgs, vectors, gap_s=1800, threshold=0.12)
    assert [len(u.messages) for u in units] == [3, 1]
    assert len(cut_units(msgs, vectors, gap_s=1800, threshold=-1)) == 1  # the similarity rule off


def test_offline_narrative_round_trip():
    units = cut_units([_msg("I moved to Boston. It is cold.", "2024-05-01T10:00:00Z", name="Caroline"),
                       _msg("How is the new job?", "2024-05-01T10:01:00Z", role="assistant"),
                       _msg("Great so far. I love my team.", "2024-05-01T10:03:00Z", name="Caroline")], None)
    narratives = offline_narratives(parse_transcript(unit_transcript(units[0])))
    assert narratives == {"Caroline": "I moved to Boston. … Great so far.", "Assistant": "How is the new job?"}
    text = episode_text(narratives, units[0].start, units[0].end)
    assert text.startswith("[2024-05-01 10:00 – 10:03] Caroline: I moved to Boston.")


def test_episode_memories_offline(tmp_path):
    with Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings(), episodes=True) as m:
        out = m.add([_msg("I live in Berlin. I like techno.", "2024-05-01T10:00:00Z"),
                     _msg("Berlin has great clubs!", "2024-05-01T10:00:30Z", role="assistant"),
                     _msg("Anyway, I work at Siemens.", "2024-05-01T18:00:00Z")], user_id="eve")
        assert len(out["episodes"]) == 2
        eps = {e["id"]: e for e in m.get_all(user_id="eve", filters={"category": "episode"})["results"]}
        assert len(eps) == 2 and all(e["memory_type"] == "episodic" for e in eps.values())
        facts = {r["memory"]: r["id"] for r in out["results"]}
        first, second = (eps[e["id"]] for e in out["episodes"])
        assert set(first["metadata"]["fact_ids"]) == {facts["User lives in Berlin"], facts["User likes techno"]}
        assert second["metadata"]["fact_ids"] == [facts["User works at Siemens"]]
        assert first["metadata"]["participants"] == ["User", "Assistant"]
        assert first["memory"] == "[2024-05-01 10:00] User: I live in Berlin. Assistant: Berlin has great clubs!"
        found = m.search("Berlin clubs conversation", user_id="eve", filters={"category": "episode"})["results"]
        assert found and found[0]["id"] == first["id"]
        ctx = m.get_context("Where does Eve work?", user_id="eve", max_tokens=400)
        assert "## About the user" in ctx["context"] and "## Recent conversations" in ctx["context"]
        assert set(ctx["episodes"]) == set(eps) and ctx["tokens"] <= 400
        assert not set(ctx["memories"]) & set(eps)  # an episode is shown once
        small = m.get_context("Where does Eve work?", user_id="eve", max_tokens=60)
        assert small["tokens"] <= 60


def test_episode_narrative_from_a_model_and_raw_adds(tmp_path):
    answer = json.dumps({"title": "Moving plans", "narratives": {"User": "The user plans to move to Lisbon in June."}})
    # no similar memory yet: the judge is not asked, the fact is added
    llm = scripted(facts_answer("User plans to move to Lisbon in June"), answer, answer)
    with Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings(), episodes=True, llm=llm) as m:
        out = m.add("I plan to move to Lisbon in June.", user_id="pat")
        assert out["episodes"][0]["memory"] == "Moving plans. User: The user plans to move to Lisbon in June."
        raw = m.add([_msg("Just a note to self.")], user_id="pat", infer=False)
        assert len(raw["episodes"]) == 1 and raw["episodes"][0]["memory"].endswith("The user plans to move to Lisbon in June.")
        ep = m.get(raw["episodes"][0]["id"])
        assert ep["metadata"]["fact_ids"] == []  # a raw add has no facts to link


def test_episodes_off_by_default(tmp_path):
    with Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings()) as m:
        out = m.add("I live in Rome.", user_id="q")
        assert "episodes" not in out and m.get_all(user_id="q", filters={"category": "episode"})["results"] == []
