"""MemUnits and episodes: cutting by time gaps, markers and similarity drops; episode memories
(offline narrative, a scripted real-model narrative, fact links, replay safety), search and get_context."""

from __future__ import annotations

import json

from memoryx.api.memory import Memory
from memoryx.knowledge.episodes import cut_units, episode_text, offline_narratives, parse_transcript, unit_transcript
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


def test_episode_narrative_from_a_model_when_the_unit_closes(tmp_path):
    answer = json.dumps({"title": "Moving plans", "narratives": {"User": "The user plans to move to Lisbon in June."}})
    # no similar memory yet: the judge is not asked, the fact is added
    llm = scripted(facts_answer("User plans to move to Lisbon in June"), answer, answer)
    with Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings(), episodes=True, llm=llm) as m:
        out = m.add([_msg("I plan to move to Lisbon in June.", "2024-05-01T10:00:00Z")], user_id="pat")
        first = out["episodes"][0]
        # open: the deterministic summary, rewritten as the unit grows (no model call per turn)
        assert first["open"] and first["memory"] == "[2024-05-01 10:00] User: I plan to move to Lisbon in June."
        assert out["episodes"][0]["event"] == "ADD"
        raw = m.add([_msg("Just a note to self.", "2024-05-03T09:00:00Z")], user_id="pat", infer=False)
        # a gap: the first unit closes (the model's narrative, once) and a new one opens
        closed, opened = raw["episodes"]
        assert closed["id"] == first["id"] and not closed["open"] and closed["event"] == "UPDATE"
        assert closed["memory"] == "[2024-05-01 10:00] Moving plans. User: The user plans to move to Lisbon in June."
        assert opened["open"] and opened["event"] == "ADD" and m.get(opened["id"])["metadata"]["fact_ids"] == []
        ep = m.get(first["id"])
        assert ep["metadata"]["open"] is False and len(ep["metadata"]["fact_ids"]) == 1


def test_a_chat_replayed_one_turn_per_add_is_one_episode_per_unit(tmp_path):
    """Units are cut across add calls: a turn-per-add replay gets one episode per unit (not per turn),
    updated as the unit grows, closed at the next time gap or topic marker, or by flush_episodes (end_run)."""
    from memoryx.core.scope import Scope
    from memoryx.knowledge.episode_memories import close_idle_episodes, flush_episodes

    day1 = [("Caroline", "I moved to Boston last week.", "2023-05-08T13:56:00Z"),
            ("Melanie", "How do you like Boston so far?", "2023-05-08T13:57:00Z"),
            ("Caroline", "I love the harbour and the seafood.", "2023-05-08T13:58:00Z")]
    day2 = [("Melanie", "I adopted a puppy named Max.", "2023-05-20T09:00:00Z"),
            ("Caroline", "By the way, I start my new job on Monday.", "2023-05-20T09:01:00Z")]
    with Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings(), episodes=True,
                participant_episodes=False) as m:  # the units alone (each participant's: test_participant_episodes)
        outs = [m.add([_msg(text, ts, name=who)], group_id="chat") for who, text, ts in day1 + day2]
        eps = m.get_all(group_id="chat", filters={"category": "episode"})["results"]
        assert len(eps) == 3  # day 1; day 2 until the marker; the marker's unit
        by_start = sorted(eps, key=lambda e: e["metadata"]["start"])
        first, second, third = by_start
        assert first["metadata"]["messages"] == 3 and not first["metadata"]["open"]
        assert first["metadata"]["participants"] == ["Caroline", "Melanie"]
        assert first["memory"].startswith("[2023-05-08 13:56 – 13:58] Caroline: I moved to Boston last week.")
        assert first["valid_at"].startswith("2023-05-08")
        facts = [r["id"] for o in outs[:3] for r in o["results"] if r["event"] == "ADD"]
        assert facts and set(first["metadata"]["fact_ids"]) == set(facts)
        assert all(o["episodes"][-1]["id"] == first["id"] for o in outs[1:3])  # rewritten, not one per turn
        assert second["metadata"]["messages"] == 1 and not second["metadata"]["open"]
        assert third["metadata"]["open"] and "new job" in third["memory"]
        assert close_idle_episodes(m._core.services, now=0) == []  # not idle yet
        assert flush_episodes(m._core.services, Scope(group_id="chat")) == [third["id"]]
        assert m.get(third["id"])["metadata"]["open"] is False


def test_end_run_closes_the_runs_open_episode(tmp_path):
    """Memory.end_run flushes the run's open episode (its final narrative), and only that run's."""
    with Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings(), episodes=True) as m:
        m.add([_msg("I adopted a puppy named Max.", "2023-05-20T09:00:00Z")], user_id="u", run_id="r1")
        m.add([_msg("I adopted a kitten named Tom.", "2023-05-20T09:00:00Z")], user_id="u", run_id="r2")
        eps = {e["run_id"]: e for e in m.get_all(user_id="u", filters={"category": "episode"})["results"]}
        assert eps["r1"]["metadata"]["open"] and eps["r2"]["metadata"]["open"]
        out = m.end_run("r1", user_id="u")
        assert out["episodes_closed"] == [eps["r1"]["id"]]
        assert m.get(eps["r1"]["id"])["metadata"]["open"] is False
        assert m.get(eps["r2"]["id"])["metadata"]["open"] is True


def test_episodes_off_by_default(tmp_path):
    with Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings()) as m:
        out = m.add("I live in Rome.", user_id="q")
        assert "episodes" not in out and m.get_all(user_id="q", filters={"category": "episode"})["results"] == []
