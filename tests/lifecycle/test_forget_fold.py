"""Forgetting folds fading short-term memories into a long-term note before archiving them: the note keeps
every fact, the archived memories point to it and stay restorable. SQLite + embedded Qdrant edge + MiniLM;
the offline model."""

from __future__ import annotations

from datetime import timedelta

from memoryx.core.scope import Scope
from tests.lifecycle.test_consolidate_owners import T0, make_memory, put

FADING = ["Ann had ramen at Ichiran on Monday", "Ann's cousin visited from Osaka", "Ann fixed her bike's chain"]


def test_fading_short_term_memories_are_folded_into_a_long_term_note(tmp_path):
    ann = Scope(user_id="ann")
    with make_memory(tmp_path) as m:
        ids = [put(m, text, ann, memory_type="episodic", importance=0.2) for text in FADING]
        kept = put(m, "Ann is allergic to penicillin", ann, memory_type="fact", importance=0.9)
        report = m.consolidate(user_id="ann", now=T0 + timedelta(days=200))
        assert report["archived"] == 3 and report["compressed"] == 1
        [note] = [m.services.sql.get_memory(i) for i in report["summary_ids"]]
        assert note["metadata"]["layer"] == "long_term" and sorted(note["metadata"]["sources"]) == sorted(ids)
        for text in FADING:  # every fact survives in the note
            assert text in note["memory"]
        for i in ids:
            row = m.services.sql.get_memory(i)
            assert row["status"] == "archived" and row["metadata"]["summary_id"] == note["id"]
        assert m.services.sql.get_memory(kept)["status"] == "active"
        found = m.search("where is Ann's cousin from", user_id="ann")["results"]
        assert found and found[0]["id"] == note["id"]
        why = m.explain(ids[0])["judgments"][-1]
        assert why["event"] == "CONSOLIDATE" and "folded into a long-term note" in why["reason"]
        assert "R = exp" in why["reason"]  # and the forgetting curve's reading
        assert m.restore(ids[0])["status"] == "active"  # archived, never deleted


def test_a_single_fading_memory_is_archived_alone_and_the_fold_can_be_turned_off(tmp_path):
    ann = Scope(user_id="ann")
    with make_memory(tmp_path) as m:
        put(m, FADING[0], ann, memory_type="episodic", importance=0.2)
        report = m.consolidate(user_id="ann", now=T0 + timedelta(days=200))
        assert report["archived"] == 1 and report["compressed"] == 0
    with make_memory(tmp_path / "off", forget_fold=False) as m:
        for text in FADING:
            put(m, text, ann, memory_type="episodic", importance=0.2)
        report = m.consolidate(user_id="ann", now=T0 + timedelta(days=200))
        assert report["archived"] == 3 and report["compressed"] == 0
