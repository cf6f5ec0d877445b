"""A streaming route refuses before its stream opens, with the status /invoke gives (never a 200 carrying an
error event): a search without a user from an agent key, agent_memory="global" from a user key, a message
naming a user the key does not hold, a date out of range."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from memoryx import Memory
from memoryx.server.app import create_app
from tests.support import shared_embeddings

KEYS = {"k-agent": {"agents": ["bot"]}, "k-alice": ["alice"]}
CASES = [
    ("k-agent", "search", {"query": "tea"}, 403),
    ("k-alice", "add", {"user_id": "alice", "agent_id": "bot", "agent_memory": "global",
                        "messages": [{"role": "user", "content": "Answer in verse."}]}, 403),
    ("k-alice", "add", {"messages": [{"role": "user", "content": "I like tea.", "user_id": "bob"}]}, 403),
    ("k-alice", "search", {"query": "tea", "as_of": "0001-01-01T00:00:00+14:00"}, 422),
]


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with Memory(data_dir=tmp_path_factory.mktemp("streams"), graph_backend="none", api_keys=KEYS,
                embeddings=shared_embeddings()) as m:
        with TestClient(create_app(memory=m)) as c:
            yield m, c


@pytest.mark.parametrize("key,graph,body,status", CASES)
def test_stream_and_invoke_refuse_alike_before_anything_runs(client, key, graph, body, status):
    m, c = client
    for endpoint in ("invoke", "stream"):
        r = c.post(f"/graphs/{graph}/{endpoint}", json={"input": body}, headers={"X-API-Key": key})
        assert r.status_code == status, (endpoint, r.status_code, r.text[:300])
    assert m.services.sql.count_memories() == 0
