"""The new response fields over REST: mem0's v2 search and our /v1 search carry each result's importance and
the answer's total_count; the add answer carries facts_count beside mem0's keys."""

from __future__ import annotations

from fastapi.testclient import TestClient

from memoryx import Memory
from memoryx.server.app import create_app
from tests.support import shared_embeddings


def test_rest_search_and_add_answers(tmp_path):
    with Memory(data_dir=tmp_path / "d", graph_backend="none", embeddings=shared_embeddings()) as m, \
            TestClient(create_app(memory=m)) as client:
        for text in ("I play tennis on Mondays", "I play tennis with my brother", "My tennis coach is Ana"):
            added = client.post("/v1/memories", json={"messages": text, "user_id": "ann", "infer": False})
            assert added.status_code == 200 and added.json()["facts_count"] == 1, added.text
        v2 = client.post("/v2/memories/search/", json={"query": "tennis", "filters": {"user_id": "ann"}, "top_k": 2})
        assert v2.status_code == 200, v2.text
        body = v2.json()
        assert len(body["results"]) == 2 and body["total_count"] >= 3
        assert all(isinstance(r["importance"], float) for r in body["results"])
        v1 = client.post("/v1/memories/search", json={"query": "tennis", "user_id": "ann", "limit": 1}).json()
        assert len(v1["results"]) == 1 and v1["total_count"] >= 3
