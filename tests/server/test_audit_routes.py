"""The judgment log's audit over real HTTP: an ADD undone by a DELETE found through GET /v1/judgments/findings,
scoped per key; a scan run now; findings settled; batch verification per trace; the daily report; the
design's metrics on /metrics; the alert rules file naming only exported metrics; the daily job's and a run's
events reaching a webhook receiver."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import httpx
import pytest
import yaml

from memoryx import Memory
from memoryx.lifecycle.daily import run_daily_job
from memoryx.server.app import create_app
from tests.support import ServerThread, free_port

KEYS = {"key-alice": ["alice"], "key-bob": ["bob"], "key-admin": {"users": [], "admin": True}}
A, B, ADMIN = ({"X-API-Key": k} for k in KEYS)
RULES = Path(__file__).resolve().parents[2] / "deploy" / "prometheus" / "memoryx-rules.yml"


class _Hooks(BaseHTTPRequestHandler):
    received: list[dict] = []

    def do_POST(self):  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        _Hooks.received.append(json.loads(body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def hooks():
    srv = HTTPServer(("127.0.0.1", free_port()), _Hooks)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_port}/hook"
    srv.shutdown()


@pytest.fixture(scope="module")
def memory(tmp_path_factory, hooks):
    with Memory(data_dir=tmp_path_factory.mktemp("audit-data"), api_keys=KEYS, webhook_url=hooks,
                metrics_refresh_s=0) as m:
        yield m


@pytest.fixture(scope="module")
def client(memory):
    with ServerThread(create_app(memory=memory)) as srv, httpx.Client(base_url=srv.url, timeout=120) as c:
        yield c


@pytest.fixture(scope="module")
def jazz(client):
    """alice likes jazz, then no longer does; bob says the same in his own scope."""
    traces = {}
    for who, key in (("alice", A), ("bob", B)):
        first = client.post("/v1/memories", json={"messages": "I like jazz.", "user_id": who}, headers=key).json()
        second = client.post("/v1/memories", json={"messages": "I don't like jazz anymore.", "user_id": who},
                             headers=key).json()
        assert any(r["event"] == "DELETE" for r in second["results"]), second
        traces[who] = (first["trace_id"], second["trace_id"])
    return traces


def test_scan_finds_the_add_undone_by_the_delete_and_each_key_sees_its_own(client, jazz):
    r = client.post("/v1/judgments/audit", json={"kinds": ["add_then_delete"]}, headers=A)
    assert r.status_code == 200, r.text
    found = r.json()["findings"]
    assert len(found) == 1 and found[0]["kind"] == "add_then_delete" and found[0]["new"]
    assert found[0]["trace_ids"] == list(jazz["alice"]) and found[0]["user_id"] == "alice"
    assert "jazz" in found[0]["detail"] and "deleted" in found[0]["detail"]
    again = client.post("/v1/judgments/audit", json={"kinds": ["add_then_delete"]}, headers=A).json()
    assert again["stored"] == 0 and not again["findings"][0]["new"]  # stored once
    client.post("/v1/judgments/audit", json={}, headers=B)

    listed = client.get("/v1/judgments/findings", params={"kind": "add_then_delete"}, headers=A).json()["results"]
    assert [f["id"] for f in listed] == [found[0]["id"]]
    bobs = client.get("/v1/judgments/findings", headers=B).json()["results"]
    assert bobs and all(f["user_id"] == "bob" for f in bobs)
    assert found[0]["id"] not in {f["id"] for f in bobs}
    # another user's findings: 403 by user id, 404 by finding id
    assert client.get("/v1/judgments/findings", params={"user_id": "alice"}, headers=B).status_code == 403
    assert client.get(f"/v1/judgments/findings/{found[0]['id']}", headers=B).status_code == 404
    assert client.get(f"/v1/judgments/findings/{found[0]['id']}", headers=A).json()["kind"] == "add_then_delete"
    admin = client.get("/v1/judgments/findings", params={"kind": "add_then_delete"}, headers=ADMIN).json()["results"]
    assert {f["user_id"] for f in admin} == {"alice", "bob"}


def test_bad_audit_input_is_a_4xx(client, jazz):
    r = client.post("/v1/judgments/audit", json={"kinds": ["nonsense"]}, headers=A)
    assert r.status_code == 422 and "add_then_delete" in r.json()["error"]["message"]
    r = client.post("/v1/judgments/audit", json={"since": "yesterday-ish"}, headers=A)
    assert r.status_code == 422 and "24h" in r.json()["error"]["message"]
    assert client.get("/v1/judgments/findings", params={"since": "soon"}, headers=A).status_code == 422
    assert client.get("/v1/judgments/report", params={"days": 0}, headers=A).status_code == 422
    assert client.post("/v1/judgments/verify", json={"trace_ids": [], "result": "CORRECT"}, headers=A).status_code == 422
    assert client.post("/v1/judgments/verify", json={"trace_ids": ["x"], "result": "MAYBE"}, headers=A).status_code == 422


def test_batch_verification_answers_per_trace_and_settles_findings(client, jazz):
    alice, bob = jazz["alice"], jazz["bob"]
    r = client.post("/v1/judgments/verify", json={"trace_ids": [*alice, bob[0], "no-such-trace"], "result": "PARTIAL",
                                                   "notes": "ok"}, headers=A)
    assert r.status_code == 200, r.text
    status = {x["trace_id"]: x["status"] for x in r.json()["results"]}
    assert status == {alice[0]: "verified", alice[1]: "verified", bob[0]: "not_found", "no-such-trace": "not_found"}
    for trace in alice:
        record = client.get(f"/v1/judgments/{trace}", headers=A).json()
        assert record["is_verified"] and record["verification_result"] == "PARTIAL"
    assert not client.get(f"/v1/judgments/{bob[0]}", headers=B).json()["is_verified"]  # bob's untouched

    finding = client.get("/v1/judgments/findings", params={"kind": "add_then_delete"}, headers=A).json()["results"][0]
    linked = client.post(f"/v1/judgments/findings/{finding['id']}/settle",
                         json={"verification_trace_id": alice[1]}, headers=A)
    assert linked.status_code == 200 and linked.json()["verification_trace_id"] == alice[1]
    assert client.post(f"/v1/judgments/findings/{finding['id']}/settle", json={"verification_trace_id": bob[1]},
                       headers=A).status_code == 404  # not alice's run
    assert client.post(f"/v1/judgments/findings/{finding['id']}/settle", json={"dismiss": True}, headers=B).status_code == 404
    done = client.post(f"/v1/judgments/findings/{finding['id']}/settle", json={"dismiss": True, "reason": "user changed"},
                       headers=A).json()
    assert done["dismissed"] and done["dismissed_reason"] == "user changed"
    assert finding["id"] not in {f["id"] for f in client.get("/v1/judgments/findings", headers=A).json()["results"]}
    dismissed = client.get("/v1/judgments/findings", params={"dismissed": True}, headers=A).json()["results"]
    assert finding["id"] in {f["id"] for f in dismissed}


def test_daily_report(client, jazz):
    r = client.get("/v1/judgments/report", params={"days": 3}, headers=A)
    assert r.status_code == 200, r.text
    days = r.json()["days"]
    assert len(days) == 3 and days[-1]["total"] >= 2
    today = days[-1]
    assert today["by_event"]["ADD"] >= 2 and today["by_event"]["DELETE"] >= 1
    assert today["latency_ms"]["p50"] is not None
    assert today["verified"] == sum(today["by_result"].values())
    assert client.get("/v1/judgments/report", headers=ADMIN).json()["days"][-1]["total"] >= 4
    assert client.get("/v1/judgments/report", params={"user_id": "alice"}, headers=B).status_code == 403


def _exported(text: str) -> set[str]:
    names = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            names.add(line.split()[2])
    return names


def test_design_metrics_and_rules_name_exported_metrics(client, jazz):
    client.post("/v1/memories/search", json={"query": "jazz", "user_id": "alice"}, headers=A)
    text = client.get("/metrics", headers=ADMIN).text  # every tenant's figures: an admin key's only
    for name in ("memory_add_total", "memory_search_latency_seconds", "memory_store_size",
                 "memory_compression_ratio", "memory_retention_rate", "memory_judgment_latency_seconds",
                 "memory_judgment_accuracy"):
        assert f"# TYPE {name} " in text, name
    assert 'memory_add_total{event="DELETE"}' in text and 'memory_add_total{event="ADD"}' in text
    assert re.search(r'memory_store_size\{layer="short_term",memory_type="\w+"\} [1-9]', text), text
    assert "memory_search_latency_seconds_bucket" in text
    assert re.search(r"memory_judgment_latency_seconds_count [1-9]", text)
    assert "alice" not in text and "jazz" not in text  # no tenant text in labels

    rules = yaml.safe_load(RULES.read_text())
    exported = _exported(text)
    alerts = [rule for group in rules["groups"] for rule in group["rules"]]
    assert {"MemorySearchLatencyP99High", "MemoryAddErrorRate", "JudgmentAccuracyDrop", "JudgmentLatencyHigh",
            "MemoryStoreGrowthTooFast"} <= {a["alert"] for a in alerts}
    for rule in alerts:
        assert rule["labels"]["severity"] and rule["annotations"]["summary"] and rule["for"]
        names = {n for n in re.findall(r"\b(memoryx?_[a-z_]+)", rule["expr"])}
        assert names, rule
        for name in names:
            base = re.sub(r"_(bucket|count|sum)$", "", name)
            assert base in exported or name in exported, (rule["alert"], name)


def test_events_reach_the_webhook(memory, client, jazz):
    import time

    summary = run_daily_job(memory)
    assert summary["scanned"] >= 4 and summary["report_days"]
    # session.end: a conversation (a run) that ended, not an add
    memory.add("I'm off to the jazz club", user_id="carol", run_id="night-out", infer=False)
    memory.end_run("night-out", user_id="carol")
    deadline = time.monotonic() + 30
    wanted = {"session.end", "memory.accessed", "schedule.daily"}
    while time.monotonic() < deadline and not wanted <= {e["event"] for e in _Hooks.received}:
        time.sleep(0.1)
    events = {e["event"]: e for e in _Hooks.received}
    assert wanted <= set(events), sorted(events)
    assert events["session.end"]["trace_id"] and events["session.end"]["run_id"] == "night-out"
    assert events["session.end"]["reason"] == "end_run"
    assert events["memory.accessed"]["memory_ids"]
    assert events["schedule.daily"]["scanned"] >= 4
