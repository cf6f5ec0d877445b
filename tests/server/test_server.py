"""The HTTP server over real HTTP: uvicorn on 127.0.0.1 in a thread, httpx as the client, LangServe's
RemoteRunnable for the graph routes. Auth (missing / wrong key, cross-tenant by search, list and id),
validation error shapes, /healthz, /metrics."""

from __future__ import annotations

import uuid

import httpx
import pytest

from memoryx import Memory
from memoryx.server.app import create_app
from memoryx.settings import Settings
from tests.support import ServerThread

KEYS = {
    "key-alice": ["alice"],
    "key-bob": ["bob"],
    "key-multi": ["alice", "carol"],
    "key-admin": {"users": [], "admin": True},
}
A, B, MULTI, ADMIN = ({"X-API-Key": k} for k in KEYS)


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    with Memory(data_dir=tmp_path_factory.mktemp("server-data"), api_keys=KEYS) as m:
        yield m


@pytest.fixture(scope="module")
def server(memory):
    with ServerThread(create_app(memory=memory)) as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server):
    with httpx.Client(base_url=server.url, timeout=120) as c:
        yield c


def _assert_error(resp: httpx.Response, status: int, type_: str | None = None) -> dict:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert "error" in body and body["error"]["message"], body
    if type_:
        assert body["error"]["type"] == type_, body
    assert "Traceback" not in resp.text and 'File "' not in resp.text
    return body["error"]


def _add(client, headers, text, **body):
    resp = client.post("/v1/memories", json={"messages": text, **body}, headers=headers)
    assert resp.status_code == 200, resp.text
    return resp.json()


# --------------------------------------------------------------------------------------------------------


def test_health_metrics_openapi(client):
    r = client.get("/healthz")
    assert r.status_code == 200
    assert r.json()["status"] == "ok"
    assert r.json()["stores"]["sql"] == "ok" and r.json()["stores"]["vectors"] == "ok"
    assert r.json()["auth"] == "api_keys"
    r = client.get("/metrics", headers=ADMIN)  # with keys configured, metrics (admin keys) and the schema need one
    assert r.status_code == 200 and "memoryx_memories" in r.text
    assert client.get("/metrics", headers=A).status_code == 403  # every tenant's figures: not a user key's
    spec = client.get("/openapi.json", headers=A).json()
    for path in ("/v1/memories", "/v1/memories/search", "/v1/memories/{memory_id}", "/v1/memories/{memory_id}/history",
                 "/v1/judgments/{trace_id}", "/v1/judgments/{trace_id}/verify", "/v1/judgments/stats",
                 "/graphs/add/invoke", "/graphs/search/invoke"):
        assert path in spec["paths"], path


def test_missing_and_wrong_key(client):
    for method, path, body in (("GET", "/v1/memories?user_id=alice", None),
                               ("POST", "/v1/memories", {"messages": "hi", "user_id": "alice"}),
                               ("POST", "/v1/memories/search", {"query": "x", "user_id": "alice"}),
                               ("GET", f"/v1/memories/{uuid.uuid4()}", None),
                               ("GET", "/v1/judgments/stats", None)):
        _assert_error(client.request(method, path, json=body), 401, "unauthorized")
        _assert_error(client.request(method, path, json=body, headers={"X-API-Key": "nope"}), 401, "unauthorized")


def test_crud_and_history(client):
    out = _add(client, A, "I live in Vienna and I love opera.")  # user_id defaults to the key's only user
    assert out["results"] and out["trace_id"]
    assert all(set(r) >= {"id", "memory", "event"} for r in out["results"])
    listed = client.get("/v1/memories", headers=A).json()
    assert {r["user_id"] for r in listed["results"]} == {"alice"}
    mid = next(r["id"] for r in out["results"] if "opera" in r["memory"].lower())

    found = client.post("/v1/memories/search", json={"query": "what music do I like", "limit": 3}, headers=A).json()
    assert found["results"] and "relations" in found
    assert found["results"][0]["id"] == mid

    got = client.get(f"/v1/memories/{mid}", headers=A)
    assert got.status_code == 200 and got.json()["id"] == mid
    upd = client.put(f"/v1/memories/{mid}", json={"text": "Loves operetta"}, headers=A)
    assert upd.status_code == 200 and upd.json()["memory"] == "Loves operetta"
    assert client.get(f"/v1/memories/{mid}", headers=A).json()["memory"] == "Loves operetta"
    dele = client.delete(f"/v1/memories/{mid}", headers=A)
    assert dele.status_code == 200
    _assert_error(client.get(f"/v1/memories/{mid}", headers=A), 404, "not_found")
    hist = client.get(f"/v1/memories/{mid}/history", headers=A)
    assert hist.status_code == 200
    assert [h["event"] for h in hist.json()] == ["ADD", "UPDATE", "DELETE"]
    assert hist.json()[1]["old_memory"] and hist.json()[1]["new_memory"] == "Loves operetta"

    ctx = client.post("/v1/memories/context", json={"query": "where do I live"}, headers=A)
    assert ctx.status_code == 200


def test_cross_tenant_denied(client, memory):
    bob = _add(client, B, "My bank PIN hint is my cat's name.", user_id="bob")
    assert bob["results"]
    bob_id = bob["results"][0]["id"]
    # by search and by list: 403 for another user's scope
    _assert_error(client.post("/v1/memories/search", json={"query": "PIN", "user_id": "bob"}, headers=A), 403, "forbidden")
    _assert_error(client.get("/v1/memories", params={"user_id": "bob"}, headers=A), 403, "forbidden")
    _assert_error(client.delete("/v1/memories", params={"user_id": "bob"}, headers=A), 403, "forbidden")
    _assert_error(client.post("/v1/memories", json={"messages": "I am bob", "user_id": "bob"}, headers=A), 403)
    # alice's own search never returns bob's memory
    mine = client.post("/v1/memories/search", json={"query": "bank PIN cat name"}, headers=A).json()
    assert bob_id not in [r["id"] for r in mine["results"]]
    # by id: 404, exactly like an id that does not exist
    missing = _assert_error(client.get(f"/v1/memories/{uuid.uuid4()}", headers=A), 404)
    for method, path, body in (("GET", f"/v1/memories/{bob_id}", None), ("PUT", f"/v1/memories/{bob_id}", {"text": "hacked"}),
                               ("DELETE", f"/v1/memories/{bob_id}", None), ("GET", f"/v1/memories/{bob_id}/history", None)):
        err = _assert_error(client.request(method, path, json=body, headers=A), 404, "not_found")
        assert err["type"] == missing["type"]
    assert memory.get(bob_id)["memory"] == bob["results"][0]["memory"]  # untouched
    # judgments of bob's add are bob's
    _assert_error(client.get(f"/v1/judgments/{bob['trace_id']}", headers=A), 404)
    _assert_error(client.post(f"/v1/judgments/{bob['trace_id']}/verify", json={"result": "CORRECT"}, headers=A), 404)
    # a key of several users must say which one; the admin key sees everything
    _assert_error(client.get("/v1/memories", headers=MULTI), 400, "scope_error")
    assert client.get("/v1/memories", params={"user_id": "carol"}, headers=MULTI).status_code == 200
    assert client.get(f"/v1/memories/{bob_id}", headers=ADMIN).status_code == 200
    assert client.get("/v1/memories", params={"user_id": "bob"}, headers=ADMIN).json()["results"]


def test_validation_errors(client):
    err = _assert_error(client.post("/v1/memories", json={}, headers=A), 422, "validation_error")
    assert any(d["field"] == "messages" for d in err["details"])
    _assert_error(client.post("/v1/memories", json={"messages": ""}, headers=A), 422, "validation_error")
    _assert_error(client.post("/v1/memories", json={"messages": [{"role": "robot", "content": "x"}]}, headers=A), 422)
    _assert_error(client.post("/v1/memories", json={"messages": "x", "surprise": 1}, headers=A), 422)
    _assert_error(client.post("/v1/memories/search", json={"query": "x", "limit": 0}, headers=A), 422)
    _assert_error(client.post("/v1/memories/search", json={"query": ""}, headers=A), 422)
    _assert_error(client.post("/v1/memories/search", content=b"{not json", headers={**A, "content-type": "application/json"}), 422)
    _assert_error(client.get("/v1/memories", params={"limit": -1}, headers=A), 422)
    # MemoryX's own InvalidInputError (an unknown filter operator) maps to 422 too
    err = _assert_error(client.post("/v1/memories/search", json={"query": "x", "filters": {"k": {"regex": "a"}}}, headers=A), 422, "invalid_input")
    assert "regex" in err["message"]
    _assert_error(client.post(f"/v1/judgments/{uuid.uuid4()}/verify", json={"result": "MAYBE"}, headers=A), 422)
    _assert_error(client.put(f"/v1/memories/{uuid.uuid4()}", json={"text": ""}, headers=A), 422)


def test_judgments_routes(client):
    out = _add(client, A, "I live in Prague.")
    trace = out["trace_id"]
    j = client.get(f"/v1/judgments/{trace}", headers=A)
    assert j.status_code == 200 and j.json()["trace_id"] == trace
    v = client.post(f"/v1/judgments/{trace}/verify", json={"result": "PARTIAL", "notes": "ok-ish"}, headers=A)
    assert v.status_code == 200 and v.json()["verification_result"] == "PARTIAL"
    stats = client.get("/v1/judgments/stats", headers=A)
    assert stats.status_code == 200 and stats.json()["verified"] >= 1
    listed = client.get("/v1/judgments", headers=A).json()["results"]
    assert trace in [r["trace_id"] for r in listed]
    _assert_error(client.get(f"/v1/judgments/{uuid.uuid4()}", headers=A), 404)


def test_delete_scope(client):
    _add(client, MULTI, "I live in Turin.", user_id="carol")
    _add(client, MULTI, "I love pasta.", user_id="carol")
    r = client.delete("/v1/memories", params={"user_id": "carol"}, headers=MULTI)
    assert r.status_code == 200 and r.json()["deleted"] >= 2
    assert client.get("/v1/memories", params={"user_id": "carol"}, headers=MULTI).json()["results"] == []


def test_metrics_count_outcomes(client):
    _add(client, A, "I love tennis.")
    client.post("/v1/memories/search", json={"query": "sport"}, headers=A)
    client.post("/v1/memories/search", json={"query": "x", "filters": {"k": {"regex": "a"}}}, headers=A)
    text = client.get("/metrics", headers=ADMIN).text
    assert 'memoryx_adds_total{outcome="ok"}' in text
    assert 'memoryx_searches_total{outcome="ok"}' in text
    assert 'memoryx_searches_total{outcome="invalid"}' in text
    assert "memoryx_add_latency_seconds_bucket" in text and "memoryx_search_latency_seconds_count" in text
    gauge = [line for line in text.splitlines() if line.startswith("memoryx_memories ")]
    assert gauge and float(gauge[0].split()[1]) >= 1
    assert "memoryx_http_requests_total" in text


# --- LangServe ------------------------------------------------------------------------------------------


def test_langserve_remote_runnable(server):
    from langserve import RemoteRunnable

    add = RemoteRunnable(f"{server.url}/graphs/add", headers=A, timeout=120)
    search = RemoteRunnable(f"{server.url}/graphs/search", headers=A, timeout=120)
    out = add.invoke({"messages": "I live in Helsinki and I love saunas.", "user_id": "alice"})
    assert out["result"]["results"] and out["result"]["trace_id"]

    batch = add.batch([{"messages": "I have a cat named Miso.", "user_id": "alice"},
                       {"messages": "I play the violin.", "user_id": "alice"}])
    assert len(batch) == 2 and all(b["result"]["results"] for b in batch)

    chunks = list(search.stream({"query": "where do I live?", "user_id": "alice", "limit": 3}))
    assert chunks
    final = chunks[-1]["result"]
    assert any("helsinki" in r["memory"].lower() for r in final["results"])

    found = search.invoke({"query": "pets", "user_id": "alice", "limit": 5})
    assert any("miso" in r["memory"].lower() for r in found["result"]["results"])

    def props(schema: dict) -> dict:
        if "$ref" in schema:
            schema = schema["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
        return schema["properties"]

    assert "messages" in props(httpx.get(f"{server.url}/graphs/add/input_schema", headers=A).json())
    assert "query" in props(httpx.get(f"{server.url}/graphs/search/input_schema", headers=A).json())
    assert "result" in props(httpx.get(f"{server.url}/graphs/search/output_schema", headers=A).json())


def test_langserve_auth(server):
    from langserve import RemoteRunnable

    anon = RemoteRunnable(f"{server.url}/graphs/search", timeout=60)
    with pytest.raises(httpx.HTTPStatusError) as info:
        anon.invoke({"query": "x", "user_id": "alice"})
    assert info.value.response.status_code == 401
    wrong = RemoteRunnable(f"{server.url}/graphs/search", headers={"X-API-Key": "nope"}, timeout=60)
    with pytest.raises(httpx.HTTPStatusError) as info:
        wrong.invoke({"query": "x", "user_id": "alice"})
    assert info.value.response.status_code == 401
    alice = RemoteRunnable(f"{server.url}/graphs/search", headers=A, timeout=60)
    with pytest.raises(httpx.HTTPStatusError) as info:
        alice.invoke({"query": "PIN", "user_id": "bob"})
    assert info.value.response.status_code == 403
    with pytest.raises(httpx.HTTPStatusError) as info:
        alice.batch([{"query": "x", "user_id": "alice"}, {"query": "PIN", "user_id": "bob"}])
    assert info.value.response.status_code == 403
    with pytest.raises(httpx.HTTPStatusError):
        list(alice.stream({"query": "PIN", "user_id": "bob"}))
    add = RemoteRunnable(f"{server.url}/graphs/add", headers=A, timeout=60)
    with pytest.raises(httpx.HTTPStatusError) as info:
        add.invoke({"messages": "I am bob now", "user_id": "bob"})
    assert info.value.response.status_code == 403
    # no user_id: the key's only user
    found = alice.invoke({"query": "where do I live?"})
    assert all(r.get("user_id", "alice") == "alice" for r in found["result"]["results"])


# --- local development mode -----------------------------------------------------------------------------


def test_dev_mode_without_keys(memory, capfd):
    app = create_app(memory=memory, settings=Settings(data_dir=memory.settings.data_dir, api_keys={}))
    with ServerThread(app) as srv, httpx.Client(base_url=srv.url, timeout=120) as c:
        assert c.get("/healthz").json()["auth"] == "dev"
        r = c.get("/v1/memories", params={"user_id": "alice"})
        assert r.status_code == 200
        _assert_error(c.get("/v1/memories"), 400, "scope_error")  # still needs a scope
    assert "LOCAL DEVELOPMENT MODE" in capfd.readouterr().err


def test_review_over_http(memory):
    """With review on, POST /v1/memories returns the pending operations; POST /v1/reviews/{trace_id}
    approves (or edits) them."""
    reviewed = Memory(services=memory.services, settings=memory.settings.model_copy(update={"review": True}))
    try:
        with ServerThread(create_app(memory=reviewed)) as srv, httpx.Client(base_url=srv.url, timeout=120) as c:
            pending = c.post("/v1/memories", json={"messages": "I live in Split."}, headers=A).json()
            assert pending["status"] == "awaiting_review" and pending["pending_operations"]
            assert all("Split" not in r["memory"] for r in c.get("/v1/memories", headers=A).json()["results"])
            _assert_error(c.post(f"/v1/reviews/{pending['trace_id']}", json={}, headers=B), 404)  # not bob's
            ops = [{**pending["pending_operations"][0], "text": "Lives in Split, Croatia"}]
            done = c.post(f"/v1/reviews/{pending['trace_id']}", json={"operations": ops}, headers=A)
            assert done.status_code == 200, done.text
            assert [r["memory"] for r in done.json()["results"]] == ["Lives in Split, Croatia"]
            _assert_error(c.post(f"/v1/reviews/{pending['trace_id']}", json={}, headers=A), 404)  # nothing waits
    finally:
        reviewed.close()


def test_put_extracts_relations_again(client, memory):
    """PUT /v1/memories/{id} goes through Memory.update: the replaced relation is invalidated, the new one added."""
    from memoryx.core.scope import Scope

    user = f"carol-{uuid.uuid4().hex[:6]}"
    headers = {"X-API-Key": "key-admin"}
    out = client.post("/v1/memories", json={"messages": "I live in Ghent", "user_id": user}, headers=headers).json()
    mid = out["results"][0]["id"]

    def valid() -> set:
        return {(r["source"], r["relation"], r["target"])
                for r in memory.services.sql.list_relations(Scope(user_id=user)) if r["valid"]}

    assert (user, "lives_in", "Ghent") in valid()
    upd = client.put(f"/v1/memories/{mid}", json={"text": "I moved to Bruges"}, headers=headers)
    assert upd.status_code == 200, upd.text
    assert (user, "lives_in", "Bruges") in valid() and (user, "lives_in", "Ghent") not in valid()


def test_docs_and_favicon_answer_without_a_key(client):
    """With keys set, the API's documentation and the icon browsers ask for load (they hold no data; a browser
    cannot send a key with them), while metrics and data still need a key."""
    for path in ("/docs", "/redoc", "/openapi.json"):
        assert client.get(path).status_code == 200, path
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml") and b"<svg" in icon.content
    _assert_error(client.get("/metrics"), 401, "unauthorized")
    _assert_error(client.get("/v1/memories?user_id=alice"), 401, "unauthorized")


def test_mem0_routes_answer_without_their_trailing_slash(client):
    """mem0's routes end in '/'; the bare path answers too, never a 307 (curl does not follow one for a POST)."""
    _add(client, A, "I live in Lisbon.")
    for path in ("/v2/memories/search/", "/v2/memories/search"):
        resp = client.post(path, json={"query": "where do I live?", "filters": {"user_id": "alice"}}, headers=A)
        assert resp.status_code == 200, (path, resp.status_code, resp.text)
        hits = resp.json() if isinstance(resp.json(), list) else resp.json().get("results", [])
        assert any("Lisbon" in h["memory"] for h in hits), resp.text
    for path in ("/v1/ping", "/v1/ping/"):
        assert client.get(path, headers=A).status_code == 200
    assert client.post("/v2/memories", json={"filters": {"user_id": "alice"}}, headers=A).status_code == 200
    spec = client.get("/openapi.json").json()
    assert "/v2/memories/search/" in spec["paths"] and "/v2/memories/search" not in spec["paths"]
