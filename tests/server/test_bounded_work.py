"""Bounded work per request: a filter that names many ids (each combination a scope of its own, read one by
one), a long value list, deep nesting, many conditions and a page far down the list are each refused with a
4xx naming the limit, before any store is read, and quickly."""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient

from memoryx import Memory
from memoryx.core import limits
from memoryx.server.app import create_app
from tests.support import shared_embeddings

H = {"X-API-Key": "k-admin"}
KEYS = {"k-admin": {"admin": True}, "k-alice": ["alice"]}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with Memory(data_dir=tmp_path_factory.mktemp("bounded"), graph_backend="none", api_keys=KEYS,
                embeddings=shared_embeddings()) as m:
        m.add("I like tea.", user_id="alice", infer=False)
        with TestClient(create_app(memory=m)) as c:
            yield c


def _ids(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def _refused(r, *words: str) -> None:
    assert 400 <= r.status_code < 500, (r.status_code, r.text[:300])
    for word in words:
        assert word in r.text, r.text[:400]


@pytest.mark.parametrize("n", [50, 1000])
def test_a_fan_out_of_ids_times_ids_is_refused_before_any_read(client, n):
    flt = {"AND": [{"user_id": "alice"}, {"agent_id": {"in": _ids("a", n)}}, {"run_id": {"in": _ids("r", n)}}]}
    start = time.perf_counter()
    for path, body in (("/v2/memories/search/", {"query": "tea", "filters": flt}), ("/v2/memories/", {"filters": flt}),
                       ("/v1/exports/get/", {"filters": flt})):
        _refused(client.post(path, json=body, headers=H), str(limits.MAX_SCOPES), "scopes")
    assert time.perf_counter() - start < 5


def test_a_fan_out_within_the_limit_is_answered(client):
    flt = {"AND": [{"user_id": "alice"}, {"run_id": {"in": _ids("r", 10)}}]}
    r = client.post("/v2/memories/", json={"filters": {"user_id": "alice"}}, headers=H)
    assert r.status_code == 200 and r.json()["results"], r.text
    assert client.post("/v2/memories/search/", json={"query": "tea", "filters": flt}, headers=H).status_code == 200


def test_a_long_value_list_is_refused(client):
    flt = {"user_id": "alice", "category": {"in": _ids("c", limits.MAX_FILTER_VALUES + 1)}}
    _refused(client.post("/v1/memories/search", json={"query": "tea", "user_id": "alice", "filters": flt}, headers=H),
             str(limits.MAX_FILTER_VALUES))


def test_deep_nesting_is_refused(client):
    flt: dict = {"category": "x"}
    for _ in range(limits.MAX_FILTER_DEPTH + 1):
        flt = {"OR": [flt]}
    _refused(client.post("/v1/memories/search", json={"query": "tea", "user_id": "alice", "filters": flt}, headers=H),
             str(limits.MAX_FILTER_DEPTH), "nest")


def test_many_conditions_are_refused(client):
    flt = {"OR": [{"category": f"c{i}"} for i in range(limits.MAX_FILTER_CONDITIONS + 1)]}
    _refused(client.post("/v1/memories/search", json={"query": "tea", "user_id": "alice", "filters": flt}, headers=H),
             str(limits.MAX_FILTER_CONDITIONS))


def test_a_page_far_down_the_list_is_refused(client):
    r = client.post("/v2/memories/?page=1000000&page_size=1000", json={"filters": {"user_id": "alice"}}, headers=H)
    _refused(r, str(limits.MAX_PAGE_WINDOW))
    ok = client.post("/v2/memories/?page=2&page_size=100", json={"filters": {"user_id": "alice"}}, headers=H)
    assert ok.status_code == 200, ok.text
