"""Reasoned importance and confidence through the public API: the four factors stored with each memory, the
model's certainty used when it gives one (else the wording rule), and a much less confident statement that
does not replace a confident one."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from memoryx import Memory
from memoryx.knowledge.importance import WEIGHTS, evaluate, rule_certainty
from tests.support import ops_answer, scripted


def _facts(*items: dict) -> str:
    return json.dumps({"facts": [{"category": "fact", "memory_type": "semantic", "owner": "user", **i} for i in items]})


def test_the_wording_rule_reads_hedges_in_three_languages():
    assert rule_certainty("User is allergic to peanuts") == 0.9
    assert rule_certainty("User might move to Berlin") == 0.5
    assert rule_certainty("用户可能下个月去上海") == 0.5
    assert rule_certainty("ユーザーは来月引っ越すかもしれない") == 0.5
    assert rule_certainty("Does the user like tea?") == 0.3


def test_recency_falls_to_zero_at_thirty_days():
    now = datetime(2025, 3, 1, tzinfo=timezone.utc)
    fresh, f1 = evaluate("x", "fact", max_similarity=None, event_time=now, now=now)
    old, f2 = evaluate("x", "fact", max_similarity=None, event_time=now - timedelta(days=45), now=now)
    assert f1["recency"] == 1.0 and f2["recency"] == 0.0
    assert fresh - old == pytest.approx(WEIGHTS["recency"], abs=1e-3)


def test_add_stores_importance_with_its_four_factors(tmp_path):
    llm = scripted(_facts({"text": "User is allergic to peanuts", "memory_type": "fact", "certainty": 1.0}),
                   _facts({"text": "User is allergic to peanuts and shellfish", "memory_type": "fact"}),
                   ops_answer({"event": "ADD", "text": "User is allergic to peanuts and shellfish", "fact": 0}))
    with Memory(data_dir=tmp_path / "d", graph_backend="none", llm=llm) as m:
        first = m.add("I'm allergic to peanuts.", user_id="ann")["results"][0]
        row = m.get(first["id"])
        f = row["importance_factors"]
        assert f["scarcity"] == 1.0 and f["impact"] == 0.85 and f["impact_by"] == "rule:life" and f["recency"] == 1.0
        assert f["certainty"] == 1.0 and f["certainty_by"] == "model"
        assert row["importance"] == pytest.approx(0.25 + 0.35 * 0.85 + 0.2 + 0.2, abs=1e-3)
        assert row["confidence"] == 1.0
        # a near repeat is less scarce, so less important; no certainty from the model: the rule decides
        second = m.add("Peanuts and shellfish, both.", user_id="ann")["results"][0]
        row2 = m.get(second["id"])
        assert row2["importance_factors"]["scarcity"] < 0.3
        assert row2["importance_factors"]["certainty_by"] == "rule"
        assert row2["importance"] < row["importance"]


def test_a_much_less_confident_statement_does_not_replace_a_confident_one(tmp_path):
    llm = scripted(_facts({"text": "User lives in Paris", "certainty": 1.0}),
                   _facts({"text": "User maybe lives in Berlin now", "certainty": 0.4}),
                   ops_answer({"event": "UPDATE", "id": "0", "text": "User maybe lives in Berlin now", "fact": 0}),
                   _facts({"text": "User lives in Berlin now", "certainty": 0.95}),
                   ops_answer({"event": "UPDATE", "id": "0", "text": "User lives in Berlin now", "fact": 0}))
    with Memory(data_dir=tmp_path / "d", graph_backend="none", llm=llm) as m:
        paris = m.add("I live in Paris.", user_id="bo")["results"][0]["id"]
        unsure = m.add("Maybe I live in Berlin now, who knows.", user_id="bo")
        assert [r["event"] for r in unsure["results"]] == ["ADD"]  # beside Paris, not over it
        assert m.get(paris)["memory"] == "User lives in Paris"
        record = m.judgments(unsure["trace_id"])
        assert "much less sure" in json.dumps(record, ensure_ascii=False)
        sure = m.add("I moved to Berlin.", user_id="bo")
        assert sure["results"][0]["event"] == "UPDATE"  # newer and as sure: the newer wins
