"""Dated facts: relative dates made absolute from the message time (EN / ZH / JA),
valid_at stored apart from created_at, invalid_at on the old version, caller time ranges and query periods."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from memoryx.api.memory import Memory
from memoryx.core.timeparse import annotate, base_time, find_times, resolve
from memoryx.errors import InvalidInputError
from memoryx.models.offline import extract_user_facts
from memoryx.search.dates import checked_time_range, time_window
from tests.support import make_services

# Monday 8 May 2023, 13:56 UTC (a LoCoMo-style session time)
BASE = "2023-05-08T13:56:00Z"


def _day(s: str) -> datetime:
    return datetime.fromisoformat(s).replace(tzinfo=timezone.utc)


@pytest.mark.parametrize("expression, start, granularity", [
    ("yesterday", "2023-05-07", "day"), ("the day before yesterday", "2023-05-06", "day"),
    ("last week", "2023-05-01", "week"), ("next month", "2023-06-01", "month"),
    ("two years ago", "2021-01-01", "year"), ("3 days ago", "2023-05-05", "day"),
    ("a few days ago", "2023-05-05", "day"), ("last weekend", "2023-05-06", "weekend"),
    ("last summer", "2022-06-01", "season"), ("in 3 weeks", "2023-05-29", "week"),
    ("昨天", "2023-05-07", "day"), ("前天", "2023-05-06", "day"), ("上周", "2023-05-01", "week"),
    ("上星期", "2023-05-01", "week"), ("下个月", "2023-06-01", "month"), ("三天前", "2023-05-05", "day"),
    ("十五天前", "2023-04-23", "day"), ("两个月前", "2023-03-01", "month"), ("去年", "2022-01-01", "year"),
    ("前年", "2021-01-01", "year"), ("上周一", "2023-05-01", "day"), ("昨晚", "2023-05-07", "day"),
    ("去年夏天", "2022-06-01", "season"),
    ("先週", "2023-05-01", "week"), ("昨日", "2023-05-07", "day"), ("一昨日", "2023-05-06", "day"),
    ("来月", "2023-06-01", "month"), ("二年前", "2021-01-01", "year"), ("先月", "2023-04-01", "month"),
])
def test_relative_dates_resolve_from_the_message_time(expression, start, granularity):
    ref = resolve(expression, BASE)
    assert ref is not None, expression
    assert (ref.start, ref.granularity) == (_day(start), granularity)


def test_annotation_keeps_the_words_and_adds_the_date():
    assert annotate("User went to Paris yesterday", BASE)[0] == "User went to Paris yesterday (2023-05-07)"
    assert annotate("用户昨天去了北京", BASE)[0] == "用户昨天（2023-05-07）去了北京"
    assert annotate("ユーザーは先週京都に行った", BASE)[0] == "ユーザーは先週（week of 2023-05-01）京都に行った"
    # already dated by the model: left as it is; no date words: nothing found ("may" is not May)
    assert annotate("User went to Paris yesterday (2023-05-07)", BASE)[0] == "User went to Paris yesterday (2023-05-07)"
    assert find_times("I may go to the gym", BASE) == []


def test_message_timestamps_in_the_usual_shapes():
    for stamp in (BASE, "2023-05-08 13:56 UTC (Monday)", "1:56 pm on 8 May, 2023", 1683554160):
        assert base_time(stamp).date().isoformat() == "2023-05-08", stamp


def test_offline_model_learns_relative_dates():
    said = {"I went to Paris yesterday.": "User went to Paris yesterday",
            "Yesterday I went to Paris.": "User went to Paris yesterday",
            "Last week, I joined a chess club.": "User joined a chess club last week",
            "我昨天去了北京。": "用户昨天去了北京", "昨天我去了北京": "用户昨天去了北京",
            "先週、京都に行きました。": "ユーザーは先週京都に行きました"}
    for text, fact in said.items():
        assert [f["text"] for f in extract_user_facts(text)] == [fact], text


def test_query_periods_and_caller_ranges():
    now = datetime(2023, 8, 20, tzinfo=timezone.utc)
    may = time_window("where did I go in May", now)
    assert may[0] == _day("2023-05-01").timestamp()
    last_month = time_window("上个月做了什么", now)
    assert last_month[0] <= _day("2023-07-01").timestamp() < _day("2023-08-01").timestamp() <= last_month[1]
    assert time_window("先月何をした", now) == last_month
    last_year = time_window("去年我去了哪里", now)
    assert last_year[0] <= _day("2022-01-01").timestamp() and last_year[1] >= _day("2023-01-01").timestamp()
    assert time_window("I may go there", now) is None
    # "take part in" + "a month ago": the past month, not "in a month"
    ago = time_window("What charity event did I participate in a month ago?", now)
    assert ago[0] <= _day("2023-07-20").timestamp() < ago[1] <= now.timestamp()
    assert time_window("I will move in a month", now)[0] > now.timestamp()
    assert checked_time_range(("2023-05-01", "2023-06-01")) == (_day("2023-05-01").timestamp(),
                                                                _day("2023-06-01").timestamp())
    with pytest.raises(InvalidInputError):
        checked_time_range(("2023-06-01", "2023-05-01"))
    with pytest.raises(InvalidInputError):
        checked_time_range("whenever")


@pytest.fixture(scope="module")
def mem(tmp_path_factory):
    services = make_services(tmp_path_factory.mktemp("time"))
    m = Memory(services.settings, services=services)
    yield m
    m.close()
    services.close()


def test_dated_facts_are_stored_with_valid_at_and_filtered_by_range(mem):
    said = [("I went to Paris yesterday", "2023-05-08T13:56:00Z"), ("我三天前去了北京", "2023-05-08T13:56:00Z"),
            ("I have a cat named Milo", "2023-07-02T09:00:00Z")]
    for text, stamp in said:
        mem.add([{"role": "user", "content": text, "timestamp": stamp}], user_id="tina")
    rows = {r["memory"]: r for r in mem.get_all(user_id="tina")["results"]}
    paris = rows["User went to Paris yesterday (2023-05-07)"]
    assert paris["valid_at"].startswith("2023-05-07") and not paris["created_at"].startswith("2023")
    assert paris["metadata"]["event_time"] == "2023-05-07" and paris["metadata"]["time_expression"] == "yesterday"
    assert rows["用户三天前（2023-05-05）去了北京"]["valid_at"].startswith("2023-05-05")
    # no date words: the fact holds from its message's time
    assert rows["User has a cat named Milo"]["valid_at"].startswith("2023-07-02")

    in_may = mem.search("where did the user travel", user_id="tina", time_range=("2023-05-01", "2023-06-01"))
    assert {r["memory"] for r in in_may["results"]} == {"User went to Paris yesterday (2023-05-07)",
                                                         "用户三天前（2023-05-05）去了北京"}
    july = mem.search("cat", user_id="tina", time_range={"start": "2023-07-01"}, mode="keyword")
    assert [r["memory"] for r in july["results"]] == ["User has a cat named Milo"]
    with pytest.raises(InvalidInputError):
        mem.search("cat", user_id="tina", time_range=("2023-07-01", "2023-01-01"))


def test_update_and_delete_close_the_old_version(mem):
    sql = mem.services.sql
    from memoryx.core.scope import Scope

    row = sql.insert_memory(scope=Scope(user_id="ulf"), text="User lives in Berlin", valid_at="2020-01-01T00:00:00Z")
    sql.update_memory(row["id"], text="User lives in Shanghai", valid_at="2023-03-01T00:00:00Z")
    history = mem.history(row["id"])
    update = next(h for h in history if h["event"] == "UPDATE")
    assert update["valid_at"].startswith("2020-01-01") and update["invalid_at"].startswith("2023-03-01")
    assert sql.get_memory(row["id"])["valid_at"].startswith("2023-03-01")
    gone = sql.delete_memory(row["id"], invalid_at="2024-01-01T00:00:00Z")
    assert gone["invalid_at"].startswith("2024-01-01")
    delete = next(h for h in mem.history(row["id"]) if h["event"] == "DELETE")
    assert delete["valid_at"].startswith("2023-03-01") and delete["invalid_at"].startswith("2024-01-01")


def test_relations_carry_event_times(mem):
    sql = mem.services.sql
    from memoryx.core.scope import Scope

    scope = Scope(user_id="rita")
    memory = sql.insert_memory(scope=scope, text="User works at Acme", valid_at="2022-02-01T00:00:00Z")
    a = sql.upsert_entity(scope=scope, name="user")
    b = sql.upsert_entity(scope=scope, name="Acme")
    rel = sql.add_relation(scope=scope, source_id=a["id"], relation="works_at", target_id=b["id"],
                           memory_id=memory["id"], trace_id=None)
    assert rel["valid_at"].startswith("2022-02-01") and rel["invalid_at"] is None
    [ended] = sql.invalidate_relations([rel["id"]], trace_id="t1", invalid_at="2023-06-30T00:00:00Z")
    assert ended["invalid_at"].startswith("2023-06-30") and not ended["valid"]
    [back] = sql.revalidate_relations([rel["id"]])
    assert back["invalid_at"] is None


def test_rest_search_takes_a_range_and_a_mode(mem):
    from fastapi.testclient import TestClient

    from memoryx.server.app import create_app
    from memoryx.settings import Settings

    mem.add([{"role": "user", "content": "I went to Rome last week", "timestamp": "2023-05-08T13:56:00Z"}],
            user_id="ron")
    app = create_app(memory=mem, settings=Settings(data_dir=mem.settings.data_dir, api_keys={}))
    client = TestClient(app)
    body = {"query": "Rome", "user_id": "ron", "mode": "keyword", "threshold": 0.0}
    hit = client.post("/v1/memories/search", json={**body, "start": "2023-05-01", "end": "2023-05-08"})
    assert [r["memory"] for r in hit.json()["results"]] == ["User went to Rome last week (week of 2023-05-01)"]
    miss = client.post("/v1/memories/search", json={**body, "start": "2024-01-01"})
    assert miss.status_code == 200 and miss.json()["results"] == []
    assert client.post("/v1/memories/search", json={**body, "start": "2024-01-01", "end": "2023-01-01"}).status_code == 422


def test_a_replayed_move_closes_the_old_home_at_the_message_time(mem):
    mem.add([{"role": "user", "content": "I live in Berlin", "timestamp": "2021-03-01T10:00:00Z"}], user_id="max")
    result = mem.add([{"role": "user", "content": "I moved to Shanghai", "timestamp": "2023-09-01T10:00:00Z"}],
                     user_id="max")
    [update] = [r for r in result["results"] if r["event"] == "UPDATE"]
    assert mem.get(update["id"])["valid_at"].startswith("2023-09-01")
    [closed] = [h for h in mem.history(update["id"]) if h["event"] == "UPDATE"]
    assert closed["valid_at"].startswith("2021-03-01") and closed["invalid_at"].startswith("2023-09-01")


def test_facts_the_model_dated_itself():
    from memoryx.nodes.extract_facts import date_facts

    turns = [{"role": "user", "content": "...", "timestamp": BASE}]
    [fact] = date_facts([{"text": "User moved to Berlin on 2023-04-02", "category": "experience", "importance": 0.7,
                          "memory_type": "episodic"}], turns)
    assert fact["valid_at"].startswith("2023-04-02") and fact["text"] == "User moved to Berlin on 2023-04-02"
    [fact] = date_facts([{"text": "User flew home yesterday (2023-05-07)", "category": "experience",
                          "importance": 0.7, "memory_type": "episodic"}], turns)
    assert fact["text"] == "User flew home yesterday (2023-05-07)" and fact["valid_at"].startswith("2023-05-07")
