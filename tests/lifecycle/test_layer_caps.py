"""The layers' windows and caps: long-term holds at most long_term_cap (the least important go back to
short-term), short-term holds the last short_term_window_days and at most short_term_cap; what leaves
short-term is folded into a long-term note and archived, never dropped. SQLite + embedded Qdrant edge +
MiniLM; the offline model."""

from __future__ import annotations

from datetime import timedelta

from memoryx.core.scope import Scope
from memoryx.lifecycle.layers import LONG_TERM, SHORT_TERM, layer_of
from tests.lifecycle.test_consolidate_owners import T0, make_memory, put

ANN = Scope(user_id="ann")
FACTS = ["Ann's favourite colour is teal", "Ann plays the cello", "Ann grew up in Porto", "Ann has two cats",
         "Ann drives a red Fiat"]


def test_long_term_keeps_its_cap_and_the_least_important_go_back(tmp_path):
    with make_memory(tmp_path, long_term_cap=2, short_term_window_days=0) as m:
        ids = [put(m, text, ANN, importance=0.8 + i * 0.03) for i, text in enumerate(FACTS[:4])]
        report = m.consolidate(user_id="ann", now=T0 + timedelta(days=1))
        layers = [layer_of(m.services.sql.get_memory(i)) for i in ids]
        assert layers == [SHORT_TERM, SHORT_TERM, LONG_TERM, LONG_TERM] and report["promoted"] == 2
        # a more important newcomer takes a place: the least important long-term memory goes back
        new = put(m, FACTS[4], ANN, days=2, importance=0.99)
        m.consolidate(user_id="ann", now=T0 + timedelta(days=3))
        assert layer_of(m.services.sql.get_memory(new)) == LONG_TERM
        assert layer_of(m.services.sql.get_memory(ids[2])) == SHORT_TERM
        assert layer_of(m.services.sql.get_memory(ids[3])) == LONG_TERM


def test_short_term_past_its_window_or_cap_is_folded_into_a_note(tmp_path):
    with make_memory(tmp_path, promote_importance=1.0, short_term_cap=2) as m:
        old = [put(m, text, ANN, importance=0.5) for text in FACTS[:2]]  # unused for 10 days at the pass
        recent = [put(m, text, ANN, days=9, importance=0.4 + i * 0.1) for i, text in enumerate(FACTS[2:])]
        report = m.consolidate(user_id="ann", now=T0 + timedelta(days=10))
        [note] = [m.services.sql.get_memory(i) for i in report["summary_ids"]]
        folded = set(note["metadata"]["sources"])
        # past the window: both old ones; over the cap of 2: the least important recent one
        assert folded == set(old) | {recent[0]}
        assert layer_of(note) == LONG_TERM and all(FACTS[i] in note["memory"] for i in (0, 1, 2))
        assert {m.services.sql.get_memory(i)["status"] for i in folded} == {"archived"}
        assert {m.services.sql.get_memory(i)["status"] for i in recent[1:]} == {"active"}


def test_a_lone_memory_past_the_window_waits_for_company(tmp_path):
    with make_memory(tmp_path, promote_importance=1.0) as m:
        lone = put(m, FACTS[0], ANN, importance=0.5)
        report = m.consolidate(user_id="ann", now=T0 + timedelta(days=10))
        assert report["archived"] == 0 and m.services.sql.get_memory(lone)["status"] == "active"
