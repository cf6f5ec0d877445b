"""mem0's own client (`mem0ai` 1.0.x MemoryClient and AsyncMemoryClient), unchanged, over real HTTP against the
MemoryX server (uvicorn on 127.0.0.1 in a thread, offline model): add, search, get_all with filters, get,
update, history, delete, delete_all, batch, exports, and a key that may not touch a user refused."""

from __future__ import annotations

import asyncio
import os

import httpx
import pytest

os.environ.setdefault("MEM0_TELEMETRY", "False")  # mem0's client would post events to its cloud otherwise

mem0 = pytest.importorskip("mem0")

from memoryx import Memory  # noqa: E402
from memoryx.server.app import create_app  # noqa: E402
from tests.support import ServerThread  # noqa: E402

KEYS = {"k-alice": ["alice"], "k-bob": ["bob"], "k-team": ["alice", "carol"]}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    os.environ["MEM0_DIR"] = str(tmp_path_factory.mktemp("mem0-home"))
    with Memory(data_dir=tmp_path_factory.mktemp("mem0-data"), api_keys=KEYS) as m, ServerThread(create_app(memory=m)) as srv:
        yield srv


def client(server, key="k-alice"):
    from mem0 import MemoryClient

    return MemoryClient(host=server.url, api_key=key)


def test_sync_client_round_trip(server):
    c = client(server)
    added = c.add([{"role": "user", "content": "I live in Berlin and I love sushi"}], user_id="alice",
                  metadata={"source": "chat"})
    events = {r["event"] for r in added["results"]}
    assert events == {"ADD"} and len(added["results"]) == 2
    by_text = {r["memory"]: r["id"] for r in added["results"]}
    berlin = next(i for t, i in by_text.items() if "Berlin" in t)

    found = c.search("where does the user live?", user_id="alice")
    assert found["results"][0]["id"] == berlin and found["results"][0]["score"] > 0
    found = c.search("where does the user live?", filters={"AND": [{"user_id": "alice"}, {"metadata": {"source": "chat"}}]})
    assert berlin in [r["id"] for r in found["results"]]

    listed = c.get_all(filters={"AND": [{"user_id": "alice"}]})
    assert {r["id"] for r in listed["results"]} == set(by_text.values())
    listed = c.get_all(filters={"OR": [{"user_id": "alice", "categories": {"in": ["preference"]}}]})
    assert [r["memory"] for r in listed["results"]] == ["User likes sushi"]
    paged = c.get_all(filters={"user_id": "alice"}, page=1, page_size=1)
    assert paged["count"] == 2 and len(paged["results"]) == 1 and paged["next"] == 2

    got = c.get(berlin)
    assert got["memory"] == "User lives in Berlin" and got["user_id"] == "alice" and got["immutable"] is False
    c.update(berlin, text="User lives in Hamburg")
    assert c.get(berlin)["memory"] == "User lives in Hamburg"
    assert [h["event"] for h in c.history(berlin)] == ["ADD", "UPDATE"]

    sushi = by_text["User likes sushi"]
    assert "Successfully updated 1" in c.batch_update([{"memory_id": sushi, "text": "User loves sushi"}])["message"]
    assert c.get(sushi)["memory"] == "User loves sushi"
    assert "message" in c.delete(berlin)
    with pytest.raises(mem0.exceptions.MemoryNotFoundError):
        c.get(berlin)
    c.batch_delete([{"memory_id": sushi}])
    assert c.get_all(filters={"user_id": "alice"})["results"] == []

    c.add("I work as a nurse", user_id="alice", infer=False)
    export_id = c.create_memory_export(schema="{}", filters={"user_id": "alice"})["id"]
    assert export_id and len(c.get_memory_export(filters={"user_id": "alice"})["memories"]) == 1
    c.delete_all(user_id="alice")
    assert c.get_all(filters={"user_id": "alice"})["results"] == []


def test_keys_are_bound_to_their_users(server):
    bob = client(server, "k-bob")
    bob_mem = bob.add("My cat is called Tom", user_id="bob", infer=False)["results"][0]["id"]
    alice = client(server)
    with pytest.raises(mem0.exceptions.MemoryError) as err:  # 403 with our message as mem0's message
        alice.get_all(filters={"user_id": "bob"})
    assert "may not access user_id 'bob'" in err.value.message
    with pytest.raises(mem0.exceptions.MemoryError, match="may not access"):
        alice.search("cat", filters={"OR": [{"user_id": "alice"}, {"user_id": "bob"}]})
    with pytest.raises(mem0.exceptions.MemoryError, match="may not access"):
        alice.add("hi", user_id="bob")
    with pytest.raises(mem0.exceptions.MemoryNotFoundError):  # another's memory: not found, as on /v1
        alice.get(bob_mem)
    with pytest.raises(mem0.exceptions.MemoryNotFoundError):
        alice.batch_delete([{"memory_id": bob_mem}])
    assert bob.get(bob_mem)["memory"] == "My cat is called Tom"
    with pytest.raises(ValueError, match="401"):  # the constructor's ping (refused by the app-wide key guard)
        client(server, "nope")
    # a key of several users names the one it acts for; OR over its own users lists both
    team = client(server, "k-team")
    team.add("Carol plays chess", user_id="carol", infer=False)
    team.add("Alice plays go", user_id="alice", infer=False)
    both = team.get_all(filters={"OR": [{"user_id": "alice"}, {"user_id": "carol"}]})["results"]
    assert {m["user_id"] for m in both} == {"alice", "carol"}


def test_our_routes_are_untouched(server):
    # the slash-less REST routes keep answering; mem0's slash routes sit beside them
    r = httpx.get(f"{server.url}/v1/memories", params={"user_id": "bob"}, headers={"X-API-Key": "k-bob"})
    assert r.status_code == 200 and isinstance(r.json()["results"], list)
    r = httpx.get(f"{server.url}/v1/memories", params={"user_id": "bob"}, headers={"Authorization": "Token k-bob"})
    assert r.status_code == 200
    r = httpx.post(f"{server.url}/v2/memories/", json={"filters": {"user_id": "bob"}})
    assert r.status_code == 401


def test_async_client(server):
    from mem0 import AsyncMemoryClient

    async def run():
        c = AsyncMemoryClient(host=server.url, api_key="k-alice")
        added = await c.add("I am allergic to peanuts", user_id="alice", run_id="r1")
        mid = added["results"][0]["id"]
        found = await c.search("allergies", filters={"AND": [{"user_id": "alice"}, {"run_id": "r1"}]})
        assert found["results"][0]["id"] == mid
        assert (await c.get_all(filters={"user_id": "alice", "run_id": "r1"}))["results"][0]["id"] == mid
        await c.update(mid, text="User is allergic to peanuts and cashews")
        assert (await c.get(mid))["memory"] == "User is allergic to peanuts and cashews"
        assert [h["event"] for h in await c.history(mid)] == ["ADD", "UPDATE"]
        await c.delete(mid)
        # mem0's async methods raise httpx's error (its error decorator does not reach into coroutines)
        with pytest.raises((httpx.HTTPStatusError, mem0.exceptions.MemoryError)) as err:
            await c.get_all(filters={"user_id": "bob"})
        assert "may not access" in err.value.response.json()["detail"]
        await c.delete_all(user_id="alice", run_id="r1")
        await c.async_client.aclose()

    asyncio.run(run())
