"""mem0's add options through the Python API: expiration_date (UTC, inclusive) and immutable (enforced in code
after the judge, whatever the model answers)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from memoryx import Memory
from memoryx.ingest.add_options import alive_filter, guard_immutable, option_metadata
from tests.support import facts_answer, ops_answer, scripted


def _day(offset: int) -> str:
    return (datetime.now(timezone.utc).date() + timedelta(days=offset)).isoformat()


def test_expiration_date_hides_from_search_and_list_not_from_get(tmp_path):
    with Memory(data_dir=tmp_path / "d", graph_backend="none") as m:
        gone = m.add("User's trial ends soon", user_id="u", infer=False, expiration_date=_day(-1))["results"][0]["id"]
        today = m.add("User is on a trial today", user_id="u", infer=False, expiration_date=_day(0))["results"][0]["id"]
        keep = m.add("User likes tea", user_id="u", infer=False)["results"][0]["id"]

        listed = {r["id"] for r in m.get_all(user_id="u")["results"]}
        assert listed == {today, keep}  # the date itself is inclusive
        assert gone not in {r["id"] for r in m.search("trial", user_id="u")["results"]}
        assert today in {r["id"] for r in m.search("trial", user_id="u")["results"]}
        assert m.get(gone)["metadata"]["expiration_date"] == _day(-1)  # by id: still there

        m.update(gone, "User's trial ends soon", metadata={"expiration_date": None})  # clearing brings it back
        assert "expires_ts" not in m.get(gone)["metadata"]
        assert gone in {r["id"] for r in m.get_all(user_id="u")["results"]}
        assert gone in {r["id"] for r in m.search("trial", user_id="u")["results"]}


def test_expiry_boundary_is_the_end_of_the_utc_day():
    meta = option_metadata(None, "2030-01-31")
    end = datetime(2030, 2, 1, tzinfo=timezone.utc).timestamp()
    assert meta == {"expiration_date": "2030-01-31", "expires_ts": end}
    assert alive_filter(end - 1) == {"NOT": [{"metadata.expires_ts": {"lte": end - 1}}]}


def test_immutable_memory_is_never_updated_or_deleted_by_the_judge(tmp_path):
    extraction = scripted(facts_answer("User lives in Berlin"), facts_answer("User lives in Hamburg"),
                          facts_answer("User does not live in Berlin"))
    judge = scripted(
        ops_answer({"fact": 0, "reason": "Moved.", "event": "UPDATE", "id": "0", "text": "User lives in Hamburg"}),
        ops_answer({"fact": 0, "reason": "Withdrawn.", "event": "DELETE", "id": "0"}))
    with Memory(data_dir=tmp_path / "d", graph_backend="none", extraction_llm=extraction, judgment_llm=judge) as m:
        first = m.add("I live in Berlin", user_id="u", immutable=True)["results"][0]
        assert m.get(first["id"])["metadata"]["immutable"] is True

        second = m.add("I moved to Hamburg", user_id="u")
        assert [r["event"] for r in second["results"]] == ["ADD"] and second["results"][0]["id"] != first["id"]
        assert m.get(first["id"])["memory"] == "User lives in Berlin"
        record = json.dumps(m.judgments(second["trace_id"]))
        assert "is immutable" in record and "added beside it" in record

        third = m.add("Forget that I live in Berlin", user_id="u")
        assert all(r["event"] != "DELETE" for r in third["results"])
        assert m.get(first["id"])["memory"] == "User lives in Berlin"
        assert "not deleted" in json.dumps(m.judgments(third["trace_id"]))


def test_guard_immutable_leaves_other_operations_alone():
    ops = [{"event": "UPDATE", "id": "a", "text": "x", "reason": "r"}, {"event": "UPDATE", "id": "b", "text": "y"},
           {"event": "DELETE", "id": "a"}, {"event": "ADD", "id": None, "text": "z"}]
    out, notes = guard_immutable(ops, {"a"})
    assert [o["event"] for o in out] == ["ADD", "UPDATE", "NONE", "ADD"]
    assert out[0]["id"] is None and out[1] == ops[1] and len(notes) == 2
