"""Every malformed request gets a 4xx, never a 500 or a reset connection.

The findings first, each as it was sent (JSON nested 900 deep, invalid UTF-8 on a LangServe route, a lone
surrogate in a text, an offset of 2^63, NaN with `Content-Type: Application/JSON`, consolidate with NaN),
then a property-based sweep (hypothesis): FUZZ_REQUESTS generated requests over every route the app serves
(methods, path ids, query strings, bodies of every shape: JSON of any type, NaN / Infinity, integers beyond
64 bits, lone surrogates, deep nesting, random bytes; Content-Types of any casing), each answered below 500,
and the server healthy and serving after.
"""

from __future__ import annotations

import json
import re
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryx import Memory
from memoryx.server.app import create_app
from tests.server.test_route_matrix import app_routes

pytestmark = pytest.mark.integration

KEYS = {"k-admin": {"admin": True}, "k-alice": ["alice"]}
ADMIN = {"X-API-Key": "k-admin"}
FUZZ_REQUESTS = 2000
JSON_TYPES = ["application/json", "Application/JSON", "APPLICATION/JSON; charset=utf-8", "application/json;charset=UTF-8"]


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with Memory(data_dir=tmp_path_factory.mktemp("fuzz"), graph_backend="none", api_keys=KEYS) as m:
        m.add("Alice lives in Berlin", user_id="alice", infer=False)
        with TestClient(create_app(memory=m), raise_server_exceptions=False) as c:
            yield c


def _post(client, path, raw: bytes, content_type="application/json"):
    return client.post(path, content=raw, headers={**ADMIN, "Content-Type": content_type})


@pytest.mark.parametrize("path", ["/v1/memories/search", "/graphs/search/invoke", "/v2/memories/", "/mcp"])
def test_deep_json_is_a_422(client, path):
    r = _post(client, path, b"[" * 900 + b"]" * 900)
    assert r.status_code == 422 and "nested deeper" in r.json()["error"]["message"]
    nested = {"query": "x", "user_id": "alice", "filters": {}}
    cursor = nested["filters"]
    for _ in range(100):
        cursor["AND"] = [{}]
        cursor = cursor["AND"][0]
    assert _post(client, path, json.dumps(nested).encode()).status_code == 422


@pytest.mark.parametrize("path", ["/graphs/add/invoke", "/graphs/search/stream", "/v1/memories"])
def test_invalid_utf8_is_a_422(client, path):
    r = _post(client, path, b'{"input": {"query": "\xff\xfe", "user_id": "alice"}}')
    assert r.status_code == 422 and "UTF-8" in r.json()["error"]["message"]


def test_lone_surrogates_are_a_422(client):
    for path, body in (("/v1/memories", '{"messages": "I like \\ud800 tea", "user_id": "alice", "infer": false}'),
                       ("/v1/memories/search", '{"query": "tea", "user_id": "alice", "filters": {"\\udfff": 1}}'),
                       ("/graphs/add/invoke", '{"input": {"messages": "x\\udc80", "user_id": "alice"}}')):
        r = _post(client, path, body.encode())
        assert r.status_code == 422 and "surrogate" in r.json()["error"]["message"], (path, r.text)


def test_integers_out_of_range_are_a_422(client):
    for url in ("/v1/judgments?offset=9223372036854775808", "/v1/ui/judgments?offset=9223372036854775808",
                "/v1/judgments?limit=9223372036854775808"):
        assert client.get(url, headers=ADMIN).status_code == 422, url
    r = _post(client, "/v2/memories/?page=9223372036854775808&page_size=10", b'{"filters": {"user_id": "alice"}}')
    assert r.status_code == 422
    r = _post(client, "/v1/memories/search", b'{"query": "x", "user_id": "alice", "limit": 9223372036854775808}')
    assert r.status_code == 422
    r = _post(client, "/v1/memories", b'{"messages": "x", "user_id": "alice", "metadata": {"n": 99999999999999999999}}')
    assert r.status_code == 422 and "64 bits" in r.json()["error"]["message"]


@pytest.mark.parametrize("content_type", JSON_TYPES)
def test_nan_is_a_422_whatever_the_casing(client, content_type):
    before = client.get("/v1/memories?user_id=alice", headers=ADMIN).json()["results"]
    for path, body in (("/v1/memories/search", b'{"query": "x", "user_id": "alice", "threshold": NaN}'),
                       ("/v1/memories", b'{"messages": "x", "user_id": "alice", "metadata": {"score": Infinity}}'),
                       ("/v1/consolidate", b'{"user_id": "alice", "now": NaN}'),
                       ("/graphs/search/invoke", b'{"input": {"query": "x", "user_id": "alice", "limit": -Infinity}}')):
        r = _post(client, path, body, content_type)
        assert r.status_code == 422 and "NaN" in r.json()["error"]["message"], (path, r.text)
    assert client.get("/v1/memories?user_id=alice", headers=ADMIN).json()["results"] == before


def test_consolidate_with_huge_times_is_never_a_5xx(client):
    for now in ("1e308", "-1e308", "9223372036854775807", '"99999-01-01"'):
        r = _post(client, "/v1/consolidate", f'{{"user_id": "alice", "now": {now}, "dry_run": true}}'.encode())
        assert r.status_code < 500, (now, r.text)


# --------------------------------------------------------------------------------------------------------
# the sweep
# --------------------------------------------------------------------------------------------------------

IDS = st.one_of(st.just("alice"), st.just("bob"), st.text(max_size=12), st.integers().map(str), st.just(str(2**63)))
LEAVES = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70), st.floats(),
                   st.text(max_size=20), IDS)
JSON_VALUES = st.recursive(LEAVES, lambda kids: st.one_of(st.lists(kids, max_size=4),
                                                          st.dictionaries(st.text(max_size=8), kids, max_size=4)),
                           max_leaves=12)
FIELDS = ["user_id", "agent_id", "run_id", "group_id", "query", "messages", "limit", "top_k", "filters", "input",
          "inputs", "memories", "memory_id", "text", "metadata", "now", "dry_run", "result", "operations", "items",
          "threshold", "start", "end", "mode", "compact", "feedback", "infer", "trace_id", "jsonrpc", "method"]
SHAPED = st.dictionaries(st.sampled_from(FIELDS), JSON_VALUES, max_size=5)


def _raw_json(value) -> bytes:
    return json.dumps(value, allow_nan=True).encode("utf-8", "surrogatepass")


BODIES = st.one_of(
    SHAPED.map(_raw_json),
    JSON_VALUES.map(_raw_json),
    st.integers(min_value=1, max_value=3000).map(lambda n: b"[" * n + b"]" * n),
    st.binary(max_size=64),
    st.text(max_size=40).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.just(b""),
)
QUERY_KEYS = ["user_id", "agent_id", "run_id", "group_id", "limit", "offset", "page", "page_size", "since", "until",
              "include_history", "force", "event", "verified", "status", "include_invalid"]
QUERY_VALUES = st.one_of(IDS, st.sampled_from(["NaN", "Infinity", "-1", "0", "1e400", "true", "2026-13-40", ""]))
CONTENT_TYPES = st.sampled_from(JSON_TYPES + ["text/plain", "application/x-www-form-urlencoded", None])


def _path(template: str, ids: list[str]) -> str:
    parts = iter(ids)
    return re.sub(r"\{[^}]+\}", lambda _: quote(next(parts, "x") or "x", safe=""), template)


def test_generated_requests_never_get_a_5xx(client):
    routes = sorted(app_routes(client.app))
    sent: list[int] = []

    @settings(max_examples=FUZZ_REQUESTS, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(route=st.sampled_from(routes), ids=st.lists(st.text(min_size=1, max_size=40), min_size=2, max_size=2),
           query=st.dictionaries(st.sampled_from(QUERY_KEYS), QUERY_VALUES, max_size=3), body=BODIES,
           content_type=CONTENT_TYPES, key=st.sampled_from(["k-admin", "k-alice"]))
    def one(route, ids, query, body, content_type, key):
        method, template = route
        headers = {"X-API-Key": key, **({"Content-Type": content_type} if content_type else {})}
        r = client.request(method, _path(template, ids), params=query, content=body if method != "GET" else None,
                           headers=headers)
        sent.append(r.status_code)
        assert r.status_code < 500, (method, template, query, body[:200], content_type, r.text[:300])

    one()
    assert len(sent) >= FUZZ_REQUESTS
    assert client.get("/healthz").json()["status"] == "ok"
    added = client.post("/v1/memories", json={"messages": "Alice lives in Lisbon", "user_id": "alice", "infer": False},
                        headers={"X-API-Key": "k-alice"})
    assert added.status_code == 200, added.text
    found = client.post("/v1/memories/search", json={"query": "Where does Alice live?", "user_id": "alice"},
                        headers={"X-API-Key": "k-alice"})
    assert found.status_code == 200 and found.json()["results"]
