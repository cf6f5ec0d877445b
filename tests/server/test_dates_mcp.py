"""The MCP door reads dates through the same parser (core.instants): memory_search's `now` at the edges of
the supported range and beyond is either answered or refused as a tool error naming `now` (the caller's to
fix), never an internal error."""

from __future__ import annotations

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memoryx import Memory
from memoryx.server.app import create_app
from tests.support import ServerThread, shared_embeddings

pytestmark = pytest.mark.anyio
FINE = ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2024-05-01", "2024-05-01T10:00:00+14:00"]
REFUSED = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "10000-01-01", "0000-01-01", "1e18",
           "yesterday-ish", "9" * 100, "2024-02-30"]


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with Memory(data_dir=tmp_path_factory.mktemp("mcpdates"), graph_backend="none", api_keys={"k": ["alice"]},
                embeddings=shared_embeddings()) as m:
        m.add("I like tea.", user_id="alice", infer=False)
        with ServerThread(create_app(memory=m)) as srv:
            yield srv.url


async def test_memory_search_now_at_the_edges(server):
    client = Client(streamable_http_client(f"{server}/mcp", http_client=httpx2.AsyncClient(
        headers={"X-API-Key": "k"}, timeout=120)))
    async with client:
        for value in FINE + REFUSED:
            result = await client.call_tool("memory_search", {"query": "tea", "now": value})
            text = " ".join(getattr(c, "text", "") for c in result.content)
            if value in FINE:
                assert not result.is_error, (value, text)
            else:
                assert result.is_error and "now" in text and "internal" not in text.lower(), (value, text)
