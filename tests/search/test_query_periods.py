"""Query periods as filters: which words are a confident period, and what a search does with one.

A confident period the query names ("in July 2023", "last summer", "去年", "先月") filters every recall path on
event time (valid_at, else created_at); a short in-period result is topped up below from the unfiltered
ranking ("auto"), or only replaced by it when nothing is in the period ("strict"); "off" keeps today's
ranking signal. Ambiguous words never filter. The result's `time_filter` says what was applied.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import pytest

from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError
from memoryx.graphs.search import graph as search_graph
from memoryx.runtime.context import Context
from memoryx.search.dates import query_period

UTC = timezone.utc
NOW = datetime(2023, 9, 1, 12, tzinfo=UTC)


# ------------------------------------------------------------------------------------ what is confident


@pytest.mark.unit
@pytest.mark.parametrize("query, text", [
    ("where did I go in May", "in May"),
    ("What did Melanie do in July 2023?", "July 2023"),
    ("what did I do last summer", "last summer"),
    ("what happened in 2023", "in 2023"),
    ("What did I eat on 9 November, 2022?", "9 November, 2022"),
    ("what did we do during March", "during March"),
    ("what did I do yesterday", "yesterday"),
    ("去年我去了哪里", "去年"),
    ("上个月做了什么", "上个月"),
    ("2023年5月我做了什么", "2023年5月"),
    ("先月何をした", "先月"),
    ("5月に何をした", "5月"),
])
def test_confident_periods(query, text):
    p = query_period(query, NOW)
    assert p is not None and p.confident and p.text == text and p.start < p.end


@pytest.mark.unit
@pytest.mark.parametrize("query", [
    "I may go there", "Did you march in the parade?", "May I ask where Alice lives?", "March on!",
    "When did Caroline go to the support group?", "What did Melanie paint recently?", "what is my name",
])
def test_no_period_in_ambiguous_words(query):
    assert query_period(query, NOW) is None


@pytest.mark.unit
@pytest.mark.parametrize("query", [
    "since 2020 what changed", "what happened before 9 May 2023", "2023年以前住在哪里", "去年から何をした",
    "What do I have today?", "the ides of March",
])
def test_periods_that_only_rank(query):
    """Bounded on one side, "today" (a question about now) or a month that may be a name: read, not filtered."""
    p = query_period(query, NOW)
    assert p is not None and not p.confident


# ------------------------------------------------------------------------------------------ the search


@pytest.fixture(scope="module")
def svc(graph_services):
    return graph_services


def _user() -> str:
    return f"p-{uuid.uuid4().hex[:8]}"


def add(svc, user: str, text: str, when: datetime) -> str:
    row = svc.sql.insert_memory(scope=Scope(user_id=user), text=text, metadata={}, memory_type="fact",
                                category=None, created_at=when, importance=0.5)
    svc.projector.sync_memories([row["id"]])
    return row["id"]


def search(svc, query: str, user: str, **kw) -> dict:
    return search_graph.invoke({"query": query, "user_id": user, "limit": kw.pop("limit", 10), **kw},
                               context=Context(services=svc))["result"]


@pytest.fixture(scope="module")
def trips(svc):
    """Three trips in July 2023, two in May 2023, one in 2021; the user's present is the wall clock."""
    user = _user()
    july = [add(svc, user, f"I went hiking in the mountains, trip {i}", datetime(2023, 7, 3 + 7 * i, tzinfo=UTC))
            for i in range(3)]
    may = [add(svc, user, f"I went hiking by the sea, trip {i}", datetime(2023, 5, 10 + i, tzinfo=UTC))
           for i in range(2)]
    old = add(svc, user, "I went hiking in the mountains long ago", datetime(2021, 7, 10, tzinfo=UTC))
    return user, july, may, old


def test_a_confident_period_filters_and_tops_up_below(svc, trips):
    user, july, may, old = trips
    res = search(svc, "Where did I go hiking in July 2023?", user)
    got = [r["id"] for r in res["results"]]
    assert set(got[:3]) == set(july)  # every in-period memory first, whatever its similarity
    assert all(r["in_period"] for r in res["results"][:3]) and not any(r["in_period"] for r in res["results"][3:])
    assert set(got[3:]) == set(may) | {old}  # topped up from the unfiltered ranking
    scores = [r["score"] for r in res["results"]]
    assert scores == sorted(scores, reverse=True)  # a caller sorting by score keeps the order
    tf = res["time_filter"]
    assert tf["applied"] and tf["from"] == "query" and tf["text"] == "July 2023" and tf["mode"] == "auto"
    assert tf["start"].startswith("2023-07-01") and tf["in_period"] == 3 and tf["topped_up"] == 3


def test_strict_returns_only_the_period_unless_empty(svc, trips):
    user, july, may, old = trips
    res = search(svc, "Where did I go hiking in July 2023?", user, query_time_filter="strict")
    assert {r["id"] for r in res["results"]} == set(july) and res["time_filter"]["topped_up"] == 0
    empty = search(svc, "Where did I go hiking in December 2022?", user, query_time_filter="strict")
    assert empty["results"] and not any(r["in_period"] for r in empty["results"])  # nothing in it: unfiltered
    assert empty["time_filter"]["in_period"] == 0


def test_off_and_ambiguous_words_keep_the_ranking_signal(svc, trips, monkeypatch):
    monkeypatch.setattr(svc.settings, "search_tuning", {**svc.settings.search_tuning, "ranker": "hand"})
    user, july, may, old = trips
    # asked at NOW: without a period filter recency is what puts the July trips above the 2021 one, and from the
    # wall clock years later it has decayed to about nothing for all of them
    off = search(svc, "Where did I go hiking in July 2023?", user, query_time_filter="off", now=NOW.isoformat())
    assert off["time_filter"]["applied"] is False and "mode" not in off["time_filter"]
    assert "in_period" not in off["results"][0] and set(r["id"] for r in off["results"][:3]) == set(july)
    plain = search(svc, "I may go hiking by the sea", user)
    assert "time_filter" not in plain and set(r["id"] for r in plain["results"][:2]) == set(may)


def test_the_callers_range_wins_and_is_reported(svc, trips):
    user, july, may, old = trips
    res = search(svc, "Where did I go hiking in July 2023?", user, time_range=("2023-05-01", None))
    assert {r["id"] for r in res["results"]} == set(july) | set(may)  # the caller's range, not the query's
    tf = res["time_filter"]
    assert tf == {"applied": True, "from": "time_range", "text": None, "start": tf["start"], "end": None}
    assert tf["start"].startswith("2023-05-01")


def test_chinese_and_japanese_periods_filter(svc):
    now = datetime.now(UTC)
    long_ago = datetime(now.year - 3, 6, 15, tzinfo=UTC)
    user = _user()
    last_year = add(svc, user, "我们去了海边", datetime(now.year - 1, 6, 15, tzinfo=UTC))
    add(svc, user, "我们去了海边玩", long_ago)
    res = search(svc, "去年我们去了哪里", user, limit=1)
    assert [r["id"] for r in res["results"]] == [last_year] and res["time_filter"]["text"] == "去年"
    user = _user()
    last_month = add(svc, user, "京都に行った", (now.replace(day=1) - timedelta(days=1)).replace(day=15))
    add(svc, user, "京都に行きました", long_ago)
    res = search(svc, "先月どこに行った", user, limit=1)
    assert [r["id"] for r in res["results"]] == [last_month] and res["time_filter"]["applied"]


def test_bad_mode_is_refused(svc, trips):
    with pytest.raises(InvalidInputError, match="query_time_filter"):
        search(svc, "hiking in July 2023", trips[0], query_time_filter="sometimes")


def test_the_public_api_and_rest_take_query_time_filter(tmp_path):
    """Memory.search(query_time_filter=...) and POST /v1/memories/search {"query_time_filter"} reach the plan."""
    from fastapi.testclient import TestClient

    from memoryx.api.memory import Memory
    from memoryx.server.app import create_app
    from tests.support import shared_embeddings

    with Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings()) as m:
        svc = m._core.services
        user = _user()
        july = add(svc, user, "I went hiking in the mountains", datetime(2023, 7, 3, tzinfo=UTC))
        add(svc, user, "I went hiking by the sea", datetime(2023, 5, 10, tzinfo=UTC))
        strict = m.search("Where did I go hiking in July 2023?", user_id=user, query_time_filter="strict")
        assert [r["id"] for r in strict["results"]] == [july] and strict["time_filter"]["mode"] == "strict"
        auto = m.search("Where did I go hiking in July 2023?", user_id=user)
        assert len(auto["results"]) == 2 and auto["time_filter"]["mode"] == "auto"
        client = TestClient(create_app(memory=m, settings=m.settings))
        body = {"query": "Where did I go hiking in July 2023?", "user_id": user, "query_time_filter": "strict"}
        res = client.post("/v1/memories/search", json=body)
        assert res.status_code == 200 and [r["id"] for r in res.json()["results"]] == [july]
        bad = client.post("/v1/memories/search", json={**body, "query_time_filter": "sometimes"})
        assert bad.status_code == 422
