"""Importance calibrated: recency is read again at each decision from the event time (not frozen at its
ingest value of 1.0), impact reads the seed's wording rules, and a consolidation pass the day after promotes
the facts the user states about their life while small talk and trivia stay short-term."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from memoryx import Memory
from memoryx.knowledge.importance import evaluate, importance_at, impact_of
from memoryx.lifecycle.layers import layer_of
from tests.support import shared_embeddings

LIFE = ["My daughter Emma was born today.", "I'm allergic to peanuts.", "I work as a nurse at the city hospital.",
        "My mother passed away in March.", "I love hiking in the Alps."]
TRIVIA = ["I had a sandwich for lunch.", "I drank a coffee at 10.", "I watched a movie yesterday.",
          "The traffic was terrible this morning.", "Nice weather today, huh?", "lol ok"]


def test_the_wording_rules_weigh_life_above_trivia():
    assert impact_of("fact", "User's daughter Emma was born today") == (0.85, "rule:life")
    assert impact_of("episodic", "User had a sandwich for lunch") == (0.2, "rule:casual")
    assert impact_of("fact", "用户今天午饭吃了面条")[1] == "rule:casual"
    assert impact_of("fact", "用户的女儿出生了")[1] == "rule:life"
    assert impact_of("fact", "大丈夫です")[1] == "type"  # not 丈夫 (husband)
    assert impact_of("preference", "User likes coffee") == (0.9, "type")  # a preference stays one
    assert impact_of("fact", "I ate cake at my wedding")[1] == "rule:life"  # the event wins over the cake


def test_recency_is_read_again_from_the_event_time():
    said = datetime(2025, 3, 1, tzinfo=timezone.utc)
    score, factors = evaluate("User's daughter was born", "fact", max_similarity=None, event_time=said, now=said)
    memory = {"importance": score, "importance_factors": factors, "created_at": "2025-03-01T00:00:00+00:00"}
    assert factors["recency"] == 1.0 and factors["event_at"].startswith("2025-03-01")
    assert importance_at(memory, said) == score
    assert importance_at(memory, said + timedelta(days=15)) == pytest.approx(score - 0.1, abs=1e-3)
    assert importance_at(memory, said + timedelta(days=90)) == pytest.approx(score - 0.2, abs=1e-3)
    # a score someone set (a tool, update_importance) is not the factors' any more: it stands
    assert importance_at({**memory, "importance": 0.3}, said + timedelta(days=90)) == 0.3


def test_life_facts_promote_while_small_talk_and_trivia_stay_short_term(tmp_path):
    with Memory(data_dir=tmp_path / "d", graph_backend="none", embeddings=shared_embeddings()) as m:
        written: dict[str, list[str]] = {}
        for text in LIFE + TRIVIA:
            written[text] = [r["id"] for r in m.add(text, user_id="pat")["results"] if r["event"] == "ADD"]
        assert all(written[t] for t in LIFE)
        tomorrow = datetime.now(timezone.utc) + timedelta(days=1)
        m.consolidate(user_id="pat", now=tomorrow)
        layers = {t: {layer_of(m.get(i)) for i in ids} for t, ids in written.items()}
        for text in LIFE:
            assert layers[text] == {"long_term"}, (text, [m.get(i)["importance_factors"] for i in written[text]])
        for text in TRIVIA:
            assert layers[text] <= {"short_term"}, (text, [m.get(i)["importance_factors"] for i in written[text]])
