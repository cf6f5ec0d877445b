"""The judgment log's audit rules over records saved in a real store (SQLite and PostgreSQL): each kind found
when it should be and not otherwise, findings stored once across overlapping scans, scopes kept apart, the
daily report kept for finished days and dropped when a verification changes it; AsyncMemory's door."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from types import SimpleNamespace

import pytest

from memoryx import AsyncMemory, Memory
from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError
from memoryx.lifecycle.audit import scan
from memoryx.lifecycle.daily import daily_report
from memoryx.lifecycle.schedule import start_daily_loop, stop_background_task
from memoryx.settings import Settings
from memoryx.stores.sql import SQLStore
from memoryx.stores.sql.schema import JudgmentRow
from memoryx.stores.sql.values import utc_now


@pytest.fixture(params=["sqlite", "postgres"])
def services(request):
    url = request.getfixturevalue("sqlite_url" if request.param == "sqlite" else "pg_url")
    store = SQLStore(url)
    yield SimpleNamespace(sql=store, settings=Settings(audit_slow_ms=500, audit_churn_changes=3,
                                                       audit_unverified_age_hours=1, audit_unverified_sample=2))
    store.close()


def _run(store, scope, at, parsed, executed, *, latency=10, status="done", success=True, error=None) -> str:
    trace = str(uuid.uuid4())
    store.save_judgment(trace, scope=scope, parsed_operations=parsed, executed_operations=executed, latency_ms=latency,
                        status=status, execution_success=success, error_message=error)
    with store._tx(write=True) as s:  # the record's time: the rules are about when things happened
        s.query(JudgmentRow).filter(JudgmentRow.trace_id == trace).update({"created_at": at})
    return trace


def _op(event, mid=None, text="x", i=0, **extra):
    return {"event": event, "id": mid, "memory": text, "text": text, "op": i, **extra}


def test_each_kind_and_stored_once(services):
    store, now = services.sql, utc_now()
    me, other = Scope(user_id=f"u-{uuid.uuid4().hex[:6]}"), Scope(user_id=f"o-{uuid.uuid4().hex[:6]}")
    t = now - timedelta(hours=30)
    add = _run(store, me, t, [_op("ADD", text="likes jazz")], [_op("ADD", "m1", "likes jazz")])
    delete = _run(store, me, t + timedelta(minutes=5), [_op("DELETE", "m1")], [_op("DELETE", "m1")])
    # an ADD deleted after the window is not a finding
    late_add = _run(store, me, t, [_op("ADD")], [_op("ADD", "m2")])
    _run(store, me, t + timedelta(hours=25), [_op("DELETE", "m2")], [_op("DELETE", "m2")])
    # an UPDATE that negates the text it replaces counts as undoing the ADD
    neg_add = _run(store, me, t, [_op("ADD")], [_op("ADD", "m3", "User likes tea")])
    _run(store, me, t + timedelta(hours=1), [_op("UPDATE", "m3")],
         [_op("UPDATE", "m3", "User no longer likes tea", previous_memory="User likes tea")])
    churned = [_run(store, me, t + timedelta(hours=2, minutes=k), [_op("UPDATE", "m4", i=0)],
                    [_op("UPDATE", "m4", f"v{k}")]) for k in range(3)]
    skipped = _run(store, me, t, [_op("ADD"), _op("DELETE", "m9")], [_op("ADD", "m5")])
    renamed = _run(store, me, t, [_op("ADD")], [_op("NONE", "m6", reason="exact duplicate")])
    slow = _run(store, me, t, [], [], latency=900)
    failed = _run(store, me, t, [_op("ADD")], None, status="failed", success=False, error="model timed out")
    _run(store, other, t, [_op("ADD")], [_op("ADD", "m7")])
    _run(store, other, t + timedelta(minutes=1), [_op("DELETE", "m7")], [_op("DELETE", "m7")])

    out = scan(services, me, since=now - timedelta(days=2), now=now)
    by_kind = {}
    for f in out["findings"]:
        by_kind.setdefault(f["kind"], []).append(f)
        assert f["user_id"] == me.user_id and f["new"]
    assert {tuple(f["trace_ids"][:1]) for f in by_kind["add_then_delete"]} == {(add,), (neg_add,)}
    assert [f for f in by_kind["add_then_delete"] if f["trace_ids"][0] == add][0]["trace_ids"] == [add, delete]
    assert late_add not in {f["trace_ids"][0] for f in by_kind["add_then_delete"]}
    assert by_kind["churn"][0]["memory_id"] == "m4" and by_kind["churn"][0]["trace_ids"] == churned
    pve = {f["trace_ids"][0]: f["detail"] for f in by_kind["parsed_vs_executed"]}
    assert set(pve) == {skipped, renamed}
    assert "DELETE #1 was not executed" in pve[skipped] and "executed as NONE (exact duplicate)" in pve[renamed]
    assert [f["trace_ids"] for f in by_kind["slow"]] == [[slow]]
    assert [f["trace_ids"] for f in by_kind["failed"]] == [[failed]] and "timed out" in by_kind["failed"][0]["detail"]
    assert len(by_kind["unverified"]) == 2  # sampled
    assert out["stored"] == len(out["findings"])

    again = scan(services, me, since=now - timedelta(days=2), now=now + timedelta(minutes=1))
    assert again["stored"] == 0 and {f["id"] for f in again["findings"]} == {f["id"] for f in out["findings"]}
    assert {f["trace_ids"][0] for f in again["findings"] if f["kind"] == "unverified"} == \
           {f["trace_ids"][0] for f in by_kind["unverified"]}  # the same sample until reviewed
    assert len(store.list_findings(me, limit=1000)) == len(out["findings"])
    assert store.list_findings(me, kinds=["slow"])[0]["trace_ids"] == [slow]
    assert not any(f["user_id"] == other.user_id for f in store.list_findings(me, limit=1000))
    assert store.list_findings(other, kinds=["add_then_delete"]) == []  # other's log was not scanned

    only = scan(services, other, since="3d", kinds="add_then_delete", store=False, now=now)
    assert len(only["findings"]) == 1 and only["stored"] == 0
    with pytest.raises(InvalidInputError):
        scan(services, me, kinds=["nope"])
    with pytest.raises(InvalidInputError):
        scan(services, me, since=now + timedelta(days=1), now=now)
    assert scan(services, other, since="3d", kinds="add_then_delete", now=now)["stored"] == 1
    assert store.purge_scope(me)["counts"]["findings"] == len(out["findings"])  # details quote memories: purged
    assert store.list_findings(me) == [] and store.list_findings(other, dismissed=None)


def test_daily_report_kept_and_refreshed(services):
    store, now = services.sql, utc_now()
    me = Scope(user_id=f"r-{uuid.uuid4().hex[:6]}")
    yesterday = now - timedelta(days=1)
    a = _run(store, me, yesterday, [_op("ADD")], [_op("ADD", "m1")], latency=100)
    _run(store, me, yesterday, [_op("ADD")], [_op("ADD", "m2")], latency=300)
    _run(store, me, now, [_op("ADD")], [_op("ADD", "m3")], latency=50)
    report = daily_report(services, me, days=2, now=now)["days"]
    assert [d["total"] for d in report] == [2, 1]
    assert report[0]["latency_ms"] == {"p50": 100.0, "p95": 300.0} and report[0]["accuracy"] is None
    key = me.key()
    day = report[0]["day"]
    assert set(store.daily_reports(key, [day, report[1]["day"]])) == {day}  # a finished day is kept, today not
    store.verify_judgment(a, "INCORRECT")
    assert daily_report(services, me, days=2, now=now)["days"][0]["verified"] == 0  # kept report read back
    store.forget_daily_reports(store.judgment_days([a]))  # what a verification through the API does
    fresh = daily_report(services, me, days=2, now=now)["days"][0]
    assert fresh["verified"] == 1 and fresh["accuracy"] == 0.0 and fresh["by_result"]["INCORRECT"] == 1
    with pytest.raises(InvalidInputError):
        daily_report(services, me, days=0)


def test_async_memory_audit(tmp_path):
    async def go():
        m = AsyncMemory(data_dir=tmp_path / "async")
        try:
            await m.add("I like jazz.", user_id="ana")
            await m.add("I don't like jazz anymore.", user_id="ana")
            found = await m.audit(user_id="ana", kinds=["add_then_delete"])
            listed = await m.findings(user_id="ana")
            traces = [j["trace_id"] for j in await m.list_judgments(user_id="ana")]
            verified = await m.verify_many(traces, "CORRECT")
            report = await m.judgment_report(days=1, user_id="ana")
            return found, listed, verified, report
        finally:
            await m.close()

    found, listed, verified, report = asyncio.run(go())
    assert [f["kind"] for f in found["findings"]] == ["add_then_delete"]
    assert [f["id"] for f in listed] == [found["findings"][0]["id"]]
    assert verified["verified"] == 2
    assert report["days"][0]["accuracy"] == 1.0


def test_daily_loop_of_serve_runs_the_job(tmp_path):
    with Memory(data_dir=tmp_path / "daily", daily_job_interval_s=0.2, consolidate_on_daily_job=True) as m:
        m.add("I like jazz.", user_id="dana")
        m.add("I don't like jazz anymore.", user_id="dana")
        seen: list[dict] = []
        m.on("schedule.daily", seen.append)

        async def go():
            task = start_daily_loop(m)
            for _ in range(300):
                if seen:
                    break
                await asyncio.sleep(0.1)
            await stop_background_task(task)

        asyncio.run(go())
        assert seen and seen[0]["new_findings"] >= 1 and seen[0]["consolidated_scopes"] >= 1
        assert [f["kind"] for f in m.findings(user_id="dana", kinds=["add_then_delete"])] == ["add_then_delete"]
    with Memory(data_dir=tmp_path / "off", daily_job_interval_s=0) as m:
        async def off():
            return start_daily_loop(m)
        assert asyncio.run(off()) is None
