"""The findings of an attack on the doors, each replayed as the attacker sent it: mem0's own client (`mem0ai`)
and the MCP SDK's client over real HTTP (uvicorn on 127.0.0.1), REST through httpx. Keys: alice, bob, an
agent-only key, a user+agent key, a group key, an admin key.

- an agent-only key reads / exports / deletes no user's memories through mem0's routes (run_id filters);
- the same key over MCP HTTP searches and builds context from its agent's global memories only;
- a group key never changes a user's private profile or context;
- an agent-only key cannot end a user's run; mem0's add refuses agent ids the key does not hold.
"""

from __future__ import annotations

import os

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memoryx import Memory
from memoryx.server.app import create_app
from tests.support import ServerThread

os.environ.setdefault("MEM0_TELEMETRY", "False")
mem0 = pytest.importorskip("mem0")

KEYS = {
    "k-alice": ["alice"],
    "k-bob": ["bob"],
    "k-agent": {"agents": ["agentX"]},
    "k-alice-agent": {"users": ["alice"], "agents": ["agentX"]},
    "k-group": {"groups": ["g1"]},
    "k-admin": {"admin": True},
}
ALICE = "Alice keeps the vault code 4711"
BOB = "Bob keeps the vault code 9902"
GLOBAL = "agentX answers in French"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    os.environ["MEM0_DIR"] = str(tmp_path_factory.mktemp("mem0-home"))
    with Memory(data_dir=tmp_path_factory.mktemp("doors"), graph_backend="none", api_keys=KEYS) as m:
        m.add(ALICE, user_id="alice", agent_id="agentX", run_id="r1", infer=False)
        m.add(BOB, user_id="bob", agent_id="agentX", run_id="r1", infer=False)
        m.add(GLOBAL, agent_id="agentX", infer=False)
        with ServerThread(create_app(memory=m)) as srv:
            yield m, srv.url


def _texts(rows) -> set[str]:
    return {r["memory"] for r in rows}


def _user_rows(m: Memory) -> set[str]:
    return _texts(m.get_all(user_id="alice")["results"]) | _texts(m.get_all(user_id="bob")["results"])


def test_agent_key_reads_no_user_memories_through_mem0(world):
    m, url = world
    from mem0 import MemoryClient

    c = MemoryClient(host=url, api_key="k-agent")
    listed = c.get_all(filters={"run_id": "r1"})["results"]
    assert not _texts(listed) & {ALICE, BOB}
    assert all(r["user_id"] is None for r in listed)
    found = c.search("vault code", filters={"run_id": "r1"})["results"]
    assert not _texts(found) & {ALICE, BOB}
    found = c.search("vault code", filters={"agent_id": "agentX"})["results"]
    assert not _texts(found) & {ALICE, BOB}
    exported = c.get_memory_export(filters={"run_id": "r1"})["memories"]
    assert not _texts(exported) & {ALICE, BOB}
    assert GLOBAL in _texts(c.get_all(filters={"agent_id": "agentX"})["results"])
    with pytest.raises(Exception):
        c.get_all(filters={"user_id": "alice"})
    before = _user_rows(m)
    c.delete_all(run_id="r1")
    assert _user_rows(m) == before and {ALICE, BOB} <= before


def test_mem0_add_refuses_agents_the_key_does_not_hold(world):
    m, url = world
    from mem0 import MemoryClient

    before = len(m.get_all(user_id="alice", limit=1000)["results"])
    with pytest.raises(Exception):
        MemoryClient(host=url, api_key="k-alice-agent").add("I like tea", user_id="alice", agent_id="agentY", infer=False)
    with pytest.raises(Exception):
        MemoryClient(host=url, api_key="k-agent").add("I like tea", user_id="alice", infer=False)
    assert len(m.get_all(user_id="alice", limit=1000)["results"]) == before


def _mcp(url: str, key: str) -> Client:
    return Client(streamable_http_client(f"{url}/mcp", http_client=httpx2.AsyncClient(headers={"X-API-Key": key},
                                                                                       timeout=120)))


@pytest.mark.anyio
async def test_agent_key_over_mcp_http_sees_its_global_memories_only(world):
    _, url = world
    async with _mcp(url, "k-agent") as client:
        found = await client.call_tool("memory_search", {"query": "vault code"})
        assert not found.is_error
        assert not _texts(found.structured_content["results"]) & {ALICE, BOB}
        context = await client.call_tool("memory_get_context", {"query": "vault code"})
        assert not context.is_error and "4711" not in str(context.structured_content)
        assert "9902" not in str(context.structured_content)
        refused = await client.call_tool("memory_search", {"query": "vault", "user_id": "alice"})
        assert refused.is_error


@pytest.fixture
def anyio_backend():
    return "asyncio"


def test_group_key_never_writes_a_users_profile_or_context(world):
    m, url = world
    alice = {"X-API-Key": "k-alice"}
    with httpx.Client(base_url=url, timeout=120) as http:
        http.post("/v1/memories", json={"messages": "I live in Berlin.", "user_id": "alice"}, headers=alice)
        profile = http.get("/v1/profiles/alice", headers=alice).json()
        context = http.post("/v1/memories/context", json={"query": "Where do I live?"}, headers=alice).json()
        r = http.post("/v1/memories", json={"messages": "I live in Paris.", "user_id": "alice"},
                      headers={"X-API-Key": "k-group"})
        assert r.status_code == 200, r.text
        assert all(x.get("group_id") == "g1" for x in m.get_all(group_id="g1")["results"])  # a group record
        assert http.get("/v1/profiles/alice", headers=alice).json() == profile
        after = http.post("/v1/memories/context", json={"query": "Where do I live?"}, headers=alice).json()
        assert "Paris" not in str(after) and after.get("context") == context.get("context")
        # the group key reads no private profile
        assert http.get("/v1/profiles/alice", headers={"X-API-Key": "k-group"}).status_code == 404


def test_agent_key_cannot_end_a_users_run(world):
    m, url = world
    before = {r["id"]: r.get("status") for r in m.get_all(user_id="alice", run_id="r1")["results"]}
    with httpx.Client(base_url=url, timeout=60) as http:
        for body in ({"user_id": "alice"}, {}, {"agent_id": "agentX"}):
            r = http.post("/v1/runs/r1/end", json=body, headers={"X-API-Key": "k-agent"})
            assert r.status_code == 403, (body, r.text)
    assert {r["id"]: r.get("status") for r in m.get_all(user_id="alice", run_id="r1")["results"]} == before
