"""The shortcuts of the search path give what the long way gave: the embedded store's kept filters,
the search's reads of stored times as the driver returns them, and the context window taken from the scope's
timeline read before recall (memoryx.search.reads)."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

from memoryx.core.filters import parse_filters
from memoryx.core.scope import Scope
from memoryx.search import reads
from memoryx.search.access import flush_access
from memoryx.search.reads import context_rows, memory_dicts, scope_facts
from memoryx.stores.vectors import EdgeVectorStore
from tests.support import make_services

DIMS = 4


def test_kept_edge_filters_tell_true_from_one(tmp_path):
    """Filters are kept by (scope, filter); dataclass equality holds True == 1 == 1.0, which the engine matches
    apart (a boolean's shadow field, a number's range): asked in either order, each finds its own point."""
    store = EdgeVectorStore(tmp_path / "qdrant", DIMS)
    scope = Scope(user_id=f"u-{uuid.uuid4().hex[:6]}")
    flag, one = str(uuid.uuid4()), str(uuid.uuid4())
    store.upsert_memories([
        {"id": flag, "vector": [1.0, 0, 0, 0], "text": "flagged", "metadata": {"x": True}, **scope.as_dict()},
        {"id": one, "vector": [1.0, 0, 0, 0], "text": "numbered", "metadata": {"x": 1}, **scope.as_dict()},
    ])
    try:
        for _ in range(2):  # the second round is served from the kept filters
            for value, expected in ((True, flag), (1, one), (1.0, one), (False, None)):
                hits = store.search_memories([1.0, 0, 0, 0], scope, limit=5, filters=parse_filters({"x": value}))
                assert [h.id for h in hits] == ([expected] if expected else []), value
        other = Scope(user_id="someone-else")  # the scope is part of the key: no tenant sees another's points
        assert store.search_memories([1.0, 0, 0, 0], other, limit=5, filters=parse_filters({"x": True})) == []
    finally:
        store.close()


def test_search_reads_give_the_stores_times(tmp_path):
    """memory_dicts and context_rows read time columns as stored text: the same ISO strings as the store's own
    memory dicts (microseconds or none, +00:00) and the same epoch seconds."""
    services = make_services(tmp_path)
    try:
        sql, scope = services.sql, Scope(user_id="times")
        whole = datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc)
        fine = datetime(2024, 5, 1, 12, 10, 0, 123456, tzinfo=timezone.utc)
        a = sql.insert_memory(scope=scope, text="whole second", created_at=whole, valid_at=fine)
        b = sql.insert_memory(scope=scope, text="fine second", created_at=fine)
        read = memory_dicts(sql, [a["id"], b["id"]])
        for row in (a, b):
            stored = sql.get_memory(row["id"])
            for key in ("created_at", "updated_at", "valid_at", "last_accessed_at", "invalid_at"):
                assert read[row["id"]][key] == stored[key], key
        assert read[a["id"]]["created_at"] == "2024-05-01T12:00:00+00:00"
        assert read[b["id"]]["created_at"] == "2024-05-01T12:10:00.123456+00:00"
        rows = {r.id: r for r in context_rows(sql, scope, [a["id"], b["id"]], [], max_gap_s=60.0)}
        assert rows[a["id"]].created == whole.timestamp() and rows[a["id"]].event == fine.timestamp()
        assert rows[b["id"]].created == rows[b["id"]].event == fine.timestamp()
    finally:
        services.close()


def _facts(sql, scope):
    return scope_facts(sql, scope, profile_subject=None, entity_names=lambda own: [])


def test_timeline_window_is_what_context_rows_reads(tmp_path):
    """The context window taken from the timeline (scope_facts) is the rows context_rows reads - same ids, order
    and times - for windows whose bounds fall on a row's time to the microsecond, and the latest event is the
    latest statement's; deleted memories and other scopes stay out; an id the timeline lacks (written since)
    hands the window back to context_rows."""
    services = make_services(tmp_path)
    try:
        sql, scope = services.sql, Scope(user_id="timeline")
        start = datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc)
        rows = [sql.insert_memory(scope=scope, text=f"turn {i}", memory_type="episodic",
                                  created_at=start + timedelta(minutes=7 * i, microseconds=i * 37),
                                  valid_at=start - timedelta(days=30 - i) if i % 3 else None) for i in range(12)]
        # two rows at the very same time (ordered by id), a deleted row, another user's row in the middle
        twin = sql.insert_memory(scope=scope, text="twin", memory_type="episodic",
                                 created_at=start + timedelta(minutes=21, microseconds=3 * 37))
        gone = sql.insert_memory(scope=scope, text="gone", created_at=start + timedelta(minutes=22))
        sql.delete_memory(gone["id"])
        other = sql.insert_memory(scope=Scope(user_id="someone-else"), text="x", created_at=start + timedelta(minutes=8))
        facts = _facts(sql, scope)
        timeline = facts.timeline
        assert timeline is not None
        assert facts.latest_event == (start - timedelta(days=30 - 11), datetime.fromisoformat(rows[11]["created_at"]))
        epoch = [datetime.fromisoformat(r["created_at"]).timestamp() for r in rows]
        step = 7 * 60.0 + 37e-6  # from one row's time to the next
        cases = [([], [epoch[3]], step),  # the bounds fall on rows 2 and 4 (and the twin): all in
                 ([], [epoch[3]], step - 1e-6),  # a microsecond short: rows 2 and 4 out
                 ([], [epoch[3] + 1e-6], step), ([rows[0]["id"], twin["id"]], [], 60.0),
                 ([rows[5]["id"], gone["id"]], [epoch[1], epoch[9]], 600.0), ([rows[2]["id"]], [epoch[6]], 1e6),
                 ([other["id"]], [epoch[4]], 60.0)]
        for ids, seeds, gap in cases:
            window = timeline.window(ids, seeds, max_gap_s=gap)
            read = context_rows(sql, scope, ids, seeds, max_gap_s=gap)
            if gone["id"] in ids or other["id"] in ids:  # not in the timeline: context_rows decides
                assert window is None
                continue
            assert [(r.id, r.memory_type, r.created, r.event) for r in window] == \
                   [(r.id, r.memory_type, r.created, r.event) for r in read], (ids, seeds, gap)
        assert {r.id for r in timeline.window([], [epoch[3]], max_gap_s=step)} == \
               {rows[2]["id"], rows[3]["id"], twin["id"], rows[4]["id"]}
        assert {r.id for r in timeline.window([], [epoch[3]], max_gap_s=step - 1e-6)} == {rows[3]["id"], twin["id"]}
    finally:
        services.close()


def test_a_large_scope_reads_no_timeline(tmp_path, monkeypatch):
    """A scope over TIMELINE_MAX_ROWS is not read whole: its latest event is read alone, and expand_context reads
    the context window itself; a search finds the same memories either way."""
    from memoryx import Memory

    memory = Memory(data_dir=tmp_path, llm="offline")
    try:
        for text in ["I adopted a cat named Miso", "Miso likes tuna", "I work as a nurse in Lyon",
                     "My sister lives in Porto"]:
            memory.add(text, user_id="big", infer=False)
        small = memory.search("what does Miso eat", user_id="big")
        flush_access()  # every memory found counted once: the second search ranks them alike
        sql, scope = memory.services.sql, Scope(user_id="big")
        assert _facts(sql, scope).timeline is not None
        monkeypatch.setattr(reads, "TIMELINE_MAX_ROWS", 3)
        facts = _facts(sql, scope)
        assert facts.timeline is None and facts.latest_event is None  # no valid_at written: no event
        large = memory.search("what does Miso eat", user_id="big")
        assert small["results"]
        assert [(r["id"], r["sources"]) for r in large["results"]] == [(r["id"], r["sources"]) for r in small["results"]]
    finally:
        memory.close()


def test_filter_test_answers_as_matches():
    """expand_context's per-search filter test gives matches()' answer for every row: the answer kept per
    tuple of the values read, top-level fields and metadata paths alike (True and 1 apart, a missing path apart
    from None), values that are not scalars (lists, dicts) walked every time."""
    from memoryx.core.filters import matches, with_alive
    from memoryx.lifecycle.state import visible_filter
    from memoryx.nodes.expand_context import _filter_test

    rows = [{"status": s} for s in ("active", "merged", "archived", None, "staged")] + [{}]
    metadata = [{"metadata": m} for m in ({"topic": "home"}, {"topic": "work"}, {"topic": None}, {}, None,
                                         {"topic": ["home"]}, {"topic": {"home": 1}}, {"topic": True},
                                         {"topic": 1}, {"a": {"b": 2}}, {"a": {"b": 2.0}}, {"a": {"b": True}},
                                         {"a": 3}, {"expires_ts": 5.0}, {"expires_ts": 50.0}, {"expires_ts": "5"})]
    for node in (visible_filter(False, True), visible_filter(False, False), visible_filter(True, True),
                 parse_filters({"importance": {"gte": 1}}), parse_filters({"topic": "home"}),
                 parse_filters({"topic": True}), parse_filters({"a.b": {"gte": 2}}),
                 parse_filters(with_alive(None, now=10.0)), parse_filters(with_alive({"topic": "home"}, now=10.0)),
                 parse_filters({"category": {"in": ["a", "b"]}})):
        test = _filter_test(node)
        for row in rows + metadata + [{"importance": True}, {"importance": 1}, {"importance": 1.0},
                                      {"category": ["a"]}, {"category": "b"}]:
            for _ in range(2):  # the second answer comes from what the first one kept
                assert test(row) == matches(node, row), (node, row)
