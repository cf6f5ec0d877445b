"""The MCP server through the SDK's own client: over stdio (`python -m memoryx.cli mcp` as a subprocess) and
over streamable HTTP (`/mcp` of the FastAPI app under uvicorn). Tools listed, add / search / forget, and a
caller that may not touch a user is refused (by the server's configuration on stdio, by the key on HTTP)."""

from __future__ import annotations

import os
import sys

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from memoryx import Memory
from memoryx.server.app import create_app
from tests.support import ServerThread

pytestmark = pytest.mark.anyio

TOOLS = {"memory_add", "memory_search", "memory_get_context", "memory_update", "memory_forget"}
KEYS = {"key-alice": ["alice"], "key-multi": ["alice", "carol"], "key-admin": {"users": [], "admin": True}}


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tmp_path_factory.mktemp("mcp-http")
    with Memory(data_dir=data, graph_backend="none", api_keys=KEYS) as m:
        with ServerThread(create_app(memory=m)) as srv:
            yield srv.url


def _http(url: str, key: str | None) -> Client:
    headers = {"X-API-Key": key} if key else {}
    return Client(streamable_http_client(f"{url}/mcp", http_client=httpx2.AsyncClient(headers=headers, timeout=120)))


def _text(result) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


async def _add_search_forget(client: Client, **who) -> None:
    added = await client.call_tool("memory_add", {"messages": [{"role": "user", "content": "I live in Berlin."}], **who})
    assert not added.is_error, _text(added)
    ids = [r["id"] for r in added.structured_content["results"] if r["event"] == "ADD"]
    assert ids, added.structured_content
    found = await client.call_tool("memory_search", {"query": "Where do I live?", **who})
    assert not found.is_error, _text(found)
    assert any("Berlin" in r["memory"] for r in found.structured_content["results"])
    kind = found.structured_content["results"][0]["memory_type"]
    typed = await client.call_tool("memory_search", {"query": "Where do I live?", "memory_types": [kind],
                                                     "now": "2030-01-01T00:00:00Z", **who})
    assert not typed.is_error and typed.structured_content["results"]
    assert {r["memory_type"] for r in typed.structured_content["results"]} == {kind}
    none = await client.call_tool("memory_search", {"query": "Where do I live?", "memory_types": ["no-such-type"], **who})
    assert not none.is_error and none.structured_content["results"] == []
    context = await client.call_tool("memory_get_context", {"query": "Where do I live?", **who})
    assert not context.is_error and "Berlin" in str(context.structured_content)
    for memory_id in ids:
        forgot = await client.call_tool("memory_forget", {"memory_id": memory_id, **who})
        assert not forgot.is_error, _text(forgot)
    again = await client.call_tool("memory_search", {"query": "Where do I live?", **who})
    assert not any(r["id"] in ids for r in again.structured_content["results"])


async def test_http_tools_add_search_forget(server):
    async with _http(server, "key-alice") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) >= TOOLS
        schema = tools["memory_add"].input_schema
        assert "messages" in schema["required"] and "user_id" in schema["properties"]
        assert all(t.description for t in tools.values())
        await _add_search_forget(client)  # the key's one user, no user_id needed


async def test_http_memory_add_takes_a_plain_string(server):
    """An agent's most natural call: memory_add with the text itself, not a list of turns."""
    async with _http(server, "key-alice") as client:
        added = await client.call_tool("memory_add", {"messages": "I work at Siemens."})
        assert not added.is_error, _text(added)
        assert any("Siemens" in r["memory"] for r in added.structured_content["results"])
        found = await client.call_tool("memory_search", {"query": "Where do I work?"})
        assert any("Siemens" in r["memory"] for r in found.structured_content["results"])
        empty = await client.call_tool("memory_add", {"messages": ""})
        assert empty.is_error


async def test_http_key_may_not_touch_other_user(server):
    async with _http(server, "key-alice") as client:
        refused = await client.call_tool("memory_search", {"query": "anything", "user_id": "bob"})
        assert refused.is_error and "may not access user_id 'bob'" in _text(refused)
        added = await client.call_tool("memory_add", {"messages": [{"role": "user", "content": "I like tea."}]})
        memory_id = added.structured_content["results"][0]["id"]
    async with _http(server, "key-multi") as client:  # alice and carol: must say which
        refused = await client.call_tool("memory_search", {"query": "tea"})
        assert refused.is_error and "user_id is required" in _text(refused)
        # carol's scope cannot reach alice's memory by id
        refused = await client.call_tool("memory_forget", {"memory_id": memory_id, "user_id": "carol"})
        assert refused.is_error and "No memory with id" in _text(refused)
        found = await client.call_tool("memory_search", {"query": "tea", "user_id": "alice"})
        assert any(r["id"] == memory_id for r in found.structured_content["results"])
    async with _http(server, "key-admin") as client:
        refused = await client.call_tool("memory_search", {"query": "tea"})
        assert refused.is_error and "user_id is required" in _text(refused)


async def test_http_needs_a_key(server):
    for key in (None, "wrong"):
        response = httpx.post(f"{server}/mcp", headers={"X-API-Key": key} if key else {},
                              json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert response.status_code == 401 and "API key" in response.json()["error"]["message"]
    # a Bearer token is accepted too (what MCP clients send)
    async with Client(streamable_http_client(f"{server}/mcp", http_client=httpx2.AsyncClient(
            headers={"Authorization": "Bearer key-alice"}, timeout=60))) as client:
        assert TOOLS <= {t.name for t in (await client.list_tools()).tools}


async def test_stdio_tools_and_configured_user(tmp_path):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memoryx.cli", "mcp", "--user-id", "alice"], cwd=str(tmp_path),
        env={"MEMORYX_DATA_DIR": str(tmp_path / "data"), "MEMORYX_GRAPH_BACKEND": "none", "HF_HUB_OFFLINE": "1",
             "OMP_WAIT_POLICY": "PASSIVE",
             # the server runs the memoryx under test (a checkout on PYTHONPATH), not an installed copy
             **({"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {})})
    async with Client(params, read_timeout_seconds=180) as client:
        assert TOOLS <= {t.name for t in (await client.list_tools()).tools}
        await _add_search_forget(client)
        refused = await client.call_tool("memory_add", {"messages": [{"role": "user", "content": "I am Bob."}],
                                                        "user_id": "bob"})
        assert refused.is_error and "may not access user_id 'bob'" in _text(refused)


def test_stdio_needs_a_user(tmp_path):
    import subprocess

    done = subprocess.run([sys.executable, "-m", "memoryx.cli", "mcp"], cwd=tmp_path, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "MEMORYX_DATA_DIR": str(tmp_path / "d")}, timeout=60)
    assert done.returncode == 1 and "--user-id" in done.stderr
