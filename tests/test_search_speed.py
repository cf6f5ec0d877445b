"""The shortcuts of the search path (issue 14) give what the long way gave: the embedded store's kept filters,
and the search's reads of stored times as the driver returns them (memoryx.search.reads)."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone

from memoryx.filters import parse_filters
from memoryx.scope import Scope
from memoryx.search.reads import context_rows, memory_dicts
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
