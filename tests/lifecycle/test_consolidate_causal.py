"""Causal memory links by rule (memoryx.lifecycle.causal): only where a memory's own words state the cause
and another memory of the owner restates it (sharing an entity or next to it in time), or where a memory
opens with a consequence right after another in its run. English, Chinese, Japanese; ambiguous words left
out. The last test runs a consolidation pass (SQLite + embedded Qdrant edge + MiniLM, no model asked)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from memoryx.api.memory import Memory
from memoryx.core.scope import Scope
from memoryx.lifecycle.causal import causal_clauses, causal_links, opens_with_consequence, restates
from tests.support import shared_embeddings

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)


@pytest.mark.unit
@pytest.mark.parametrize("text, cause, effect", [
    ("I skipped work because I was exhausted", "I was exhausted", "I skipped work"),
    ("It rained all day, so we stayed home", "It rained all day", "we stayed home"),
    ("我没去上班，因为下大雨", "下大雨", "我没去上班"),
    ("因为下大雨，所以我没去上班", "下大雨", "我没去上班"),
    ("雨が降ったので会社を休んだ", "雨が降った", "会社を休んだ"),
])
def test_clauses_of_a_stated_cause(text, cause, effect):
    found = causal_clauses(text)
    assert found is not None and found[0].strip(" ,，") == cause and found[1].strip(" ,，") == effect


@pytest.mark.unit
@pytest.mark.parametrize("text", ["I am so tired", "I have lived in Lisbon since 2020", "東京から来た",
                                  "健康のために走る", "I think so"])
def test_ambiguous_words_state_no_cause(text):
    assert causal_clauses(text) is None


@pytest.mark.unit
def test_links_only_where_the_cause_is_restated_by_a_related_memory():
    mems = [{"id": "a", "memory": "I was exhausted", "created_at": "2025-01-01"},
            {"id": "b", "memory": "I skipped work because I was exhausted", "created_at": "2025-01-02"},
            {"id": "c", "memory": "I was tired", "created_at": "2025-01-03"},
            {"id": "d", "memory": "I left early because I was tired of waiting for the bus", "created_at": "2025-01-04"},
            {"id": "e", "memory": "We talked about the trip", "created_at": "2025-01-05"},
            {"id": "f", "memory": "So we booked the train", "created_at": "2025-01-06"}]
    near = {"b": {"a"}, "d": {"c"}, "a": {"b"}, "c": {"d"}}
    links = causal_links(mems, near, predecessor={"f": "e"})
    assert {(x["source_id"], x["target_id"]) for x in links} == {("a", "b"), ("e", "f")}
    assert all(x["relation"] == "causes" and x["reason"] for x in links)
    assert causal_links(mems, {}, {}) == []  # unrelated memories: no link even when the words match
    assert restates("I was tired", "I was tired of waiting for the bus") is None  # the clause says much more
    assert opens_with_consequence("所以我请了假") == "所以" and opens_with_consequence("Sophie called") is None


def test_a_pass_writes_cause_links_and_its_rollback_removes_them(tmp_path):
    alice = Scope(user_id="alice")
    # the offline model: the rule stands alone (no model check of cause links), and the report says so
    with Memory(data_dir=tmp_path / "data", graph_backend="none", checkpointer="sqlite",
                embeddings=shared_embeddings()) as m:
        ids = []
        # no graph here: the cause and its statement are related by being next to each other in time
        for i, text in enumerate(["My flight to Oslo was cancelled",
                                  "I missed the conference because my flight to Oslo was cancelled",
                                  "I stayed two more nights in Rome because the hotel was cheap"]):
            row = m.services.sql.insert_memory(scope=alice, text=text, created_at=T0 + timedelta(hours=i))
            m.services.projector.sync_memories([row["id"]])
            ids.append(row["id"])
        report = m.consolidate(user_id="alice", now=T0 + timedelta(days=1))
        links = [x for x in m.services.sql.memory_links([ids[0]]) if x["relation"] == "causes"]
        assert [(x["source_id"], x["target_id"]) for x in links] == [(ids[0], ids[1])], links
        assert report["links_found"] >= 1 and report["cause_check"].startswith("rule (offline model")
        why = [x for x in m.judgments(report["trace_id"])["parsed_operations"]["links"] if x["relation"] == "causes"]
        assert "because" in why[0]["reason"]
        undone = m.rollback(report["trace_id"])
        assert not [x for x in m.services.sql.memory_links([ids[0]]) if x["relation"] == "causes"] and undone
