"""What a server prepares at startup because it goes on serving, and a one-shot process does not: the read-ahead of
its vector shards' files (stores/vectors/readahead.py), over HTTP and over MCP's stdio."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from memoryx import Memory
from memoryx.server import mcp
from memoryx.server.app import create_app
from memoryx.stores.vectors.edge_shard import SharedShard
from tests.support import shared_embeddings

KEYS = {"k-alice": ["alice"]}


@pytest.fixture
def plain_process(monkeypatch):
    """This process as one that never asked for read-ahead (an earlier server test may have); put back after."""
    monkeypatch.setattr(SharedShard, "read_ahead", False)


def test_the_server_reads_its_shards_ahead_at_startup(tmp_path, plain_process):
    with Memory(data_dir=tmp_path, graph_backend="none", api_keys=KEYS, embeddings=shared_embeddings()) as m:
        shard = m.services.vectors._memories
        assert shard.warming is None  # a Memory() alone (a script, a CLI command) reads nothing ahead
        app = create_app(memory=m)
        assert shard.warming is None and not SharedShard.read_ahead  # building the app reads nothing: the startup does
        with TestClient(app) as c:
            assert shard.warming is not None  # the memory it was given, open before it started
            shard.warming.join(timeout=30)
            assert SharedShard.read_ahead  # and the shards it opens later (the multilingual index's, on first need)
            assert c.get("/healthz").status_code == 200


def test_the_mcp_stdio_server_reads_the_shards_it_opens_ahead(plain_process, monkeypatch):
    seen = []

    class Server:
        def run(self, transport):
            seen.append((transport, SharedShard.read_ahead))

    monkeypatch.setattr(mcp, "build_mcp_server", lambda memory, principal: Server())
    mcp.run_stdio(lambda: None, ["alice"])
    assert seen == [("stdio", True)]  # on before the session opens the memory (on its first tool call)
