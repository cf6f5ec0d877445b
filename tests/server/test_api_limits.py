"""Probes as regression tests: strict MEMORYX_API_KEYS, strict JSON (no NaN), a cap and a clear
4xx on every field, and no route but /healthz without a key."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from memoryx import Memory
from memoryx.errors import InvalidInputError
from memoryx.server.app import create_app
from memoryx.server.auth import KeyRing
from memoryx.settings import Settings
from memoryx.stores.sql.values import check_metadata
from tests.support import shared_embeddings

SECRET = "s3cret-key-never-printed"
KEYS = {"k-alice": ["alice"], "k-admin": {"admin": True}}
A = {"X-API-Key": "k-alice"}
LIMITS = dict(max_request_bytes=20_000, max_messages=5, max_name_chars=16, max_metadata_bytes=256,
              max_query_chars=100, max_batch_inputs=2)


# ------------------------------------------------------------------------------------------------ keys


@pytest.mark.parametrize("spec, words", [
    ({"admin": "false"}, "admin must be a JSON boolean"),
    ({"users": "alice"}, "users must be a JSON list"),
    ({"users": ["alice", ""]}, "users must be a JSON list of non-empty strings"),
    ({"agents": "bot"}, "agents must be a JSON list"),
    ({"users": ["alice"], "admni": True}, "unknown field"),
    ({}, "grants nothing"),
    ("alice", "expected a list of user ids"),
])
def test_bad_key_entries_refuse_to_start(spec, words, tmp_path, monkeypatch):
    with pytest.raises(ValueError, match=words) as err:
        KeyRing({SECRET: spec})
    assert SECRET not in str(err.value) and "key-" in str(err.value)  # named by fingerprint, never the key
    # from the environment, as `memoryx serve` reads it: the app refuses to be created
    monkeypatch.setenv("MEMORYX_API_KEYS", json.dumps({SECRET: spec}))
    settings = Settings(data_dir=tmp_path)
    with pytest.raises(ValueError) as err:
        create_app(memory=None, settings=settings)
    assert SECRET not in str(err.value)


def test_good_key_entries():
    ring = KeyRing({"a": ["alice"], "b": {"users": ["bob"], "agents": ["bot"], "admin": False}, "c": {"admin": True}})
    assert ring.authenticate("a").users == {"alice"} and not ring.authenticate("a").admin
    assert ring.authenticate("b").agents == {"bot"}
    assert ring.authenticate("c").admin


# ------------------------------------------------------------------------------------------------ server


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    with Memory(data_dir=tmp_path_factory.mktemp("limits"), graph_backend="none", checkpointer="sqlite",
                api_keys=KEYS, embeddings=shared_embeddings(), **LIMITS) as m:
        yield m


@pytest.fixture(scope="module")
def client(memory):
    with TestClient(create_app(memory=memory, settings=memory.settings)) as c:
        yield c


def _add(client, messages, **extra):
    return client.post("/v1/memories", json={"messages": messages, "user_id": "alice", "infer": False, **extra}, headers=A)


def _error(resp, status: int, words: str = "") -> None:
    assert resp.status_code == status, resp.text
    assert "error" in resp.json() and words in resp.text


@pytest.mark.parametrize("path", ["/metrics", "/graphs/add/input_schema",
                                  "/graphs/search/output_schema", "/graphs/add/config_schema",
                                  "/graphs/add/playground/", "/v1/memories"])
def test_no_route_answers_without_a_key(client, path):
    _error(client.get(path), 401, "API key")
    _error(client.get(path, headers={"X-API-Key": "wrong"}), 401)


def test_health_stays_open_and_keys_open_the_rest(client):
    assert client.get("/healthz").status_code == 200
    assert client.get("/metrics", headers=A).status_code == 403  # every tenant's figures: admin keys only
    assert client.get("/metrics", headers={"X-API-Key": "k-admin"}).status_code == 200
    assert client.get("/openapi.json", headers=A).status_code == 200
    assert client.get("/graphs/add/input_schema", headers=A).status_code == 200


def test_nan_metadata_is_refused_and_listing_still_works(client, memory):
    raw = '{"messages": "I like tea", "user_id": "alice", "infer": false, "metadata": {"x": NaN}}'
    _error(client.post("/v1/memories", content=raw, headers={**A, "content-type": "application/json"}), 422, "NaN")
    raw = '{"input": {"messages": "I like tea", "user_id": "alice", "metadata": {"x": Infinity}}}'
    _error(client.post("/graphs/add/invoke", content=raw, headers={**A, "content-type": "application/json"}), 422)
    for bad in (float("nan"), float("inf")):
        with pytest.raises(InvalidInputError, match="strict JSON"):
            memory.add("I like tea", user_id="alice", metadata={"x": bad}, infer=False)
        with pytest.raises(InvalidInputError, match="strict JSON"):  # the SQL path (insert / update)
            check_metadata({"x": bad})
    assert client.get("/v1/memories?user_id=alice", headers=A).status_code == 200


def test_size_probes(client):
    _error(_add(client, "x" * 30_000), 413, "MEMORYX_MAX_REQUEST_BYTES")
    _error(_add(client, "I like tea", metadata={"blob": "x" * 400}), 422, "MEMORYX_MAX_METADATA_BYTES")
    _error(_add(client, [{"role": "user", "content": "hi", "name": "n" * 40}]), 422, "MEMORYX_MAX_NAME_CHARS")
    _error(_add(client, [{"role": "user", "content": "hi", "timestamp": "yesterday-ish"}]), 422, "ISO-8601")
    _error(_add(client, [{"role": "user", "content": f"m{i}"} for i in range(6)]), 422, "MEMORYX_MAX_MESSAGES")
    ok = _add(client, [{"role": "user", "content": "I like green tea", "name": "Al", "timestamp": "2025-05-01T10:00:00Z"}])
    assert ok.status_code == 200, ok.text
    search = client.post("/v1/memories/search", json={"query": "q" * 101, "user_id": "alice"}, headers=A)
    _error(search, 422, "MEMORYX_MAX_QUERY_CHARS")
    r = client.post("/graphs/search/invoke", json={"input": {"query": "q" * 101, "user_id": "alice"}}, headers=A)
    _error(r, 422, "MEMORYX_MAX_QUERY_CHARS")


def test_langserve_inputs(client):
    for bad in (["alice"], 7, {"id": "alice"}):
        r = client.post("/graphs/add/invoke", json={"input": {"messages": "hi", "user_id": bad}}, headers=A)
        assert 400 <= r.status_code < 500, r.text
        r = client.post("/graphs/add/invoke", json={"input": {"messages": "hi", "user_id": bad}},
                        headers={"X-API-Key": "k-admin"})
        assert 400 <= r.status_code < 500, r.text
    batch = {"inputs": [{"query": "tea", "user_id": "alice"}] * 3}
    _error(client.post("/graphs/search/batch", json=batch, headers=A), 413, "MEMORYX_MAX_BATCH_INPUTS")
    r = client.post("/graphs/add/invoke", json={"input": {"messages": "hi", "user_id": "alice", "trace_id": "mine"}},
                    headers=A)
    _error(r, 422, "trace_id")
