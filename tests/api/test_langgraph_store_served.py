"""`langgraph dev` serves the graphs with MemoryXStore as the LangGraph server's store (langgraph.json's "store"):
langgraph_sdk's store client writes, reads, searches, lists and deletes items, the served search graph recalls an
item the store client wrote (one MemoryX behind both), and the served notes graph writes and finds through its
`runtime.store`."""

from __future__ import annotations

import importlib
import json

import httpx
import pytest

from tests.graphs.test_langgraph_dev import REPO, langgraph_dev  # noqa: F401 - the fixture that starts langgraph dev

pytestmark = pytest.mark.slow


def test_langgraph_json_names_the_memoryx_store():
    config = json.loads((REPO / "langgraph.json").read_text())
    module, _, name = config["store"]["path"].rpartition(".")
    assert callable(getattr(importlib.import_module(module), name))


def test_the_sdk_store_client_reaches_memoryx(langgraph_dev):  # noqa: F811
    from langgraph_sdk import get_sync_client
    from langgraph_sdk.errors import APIError

    client = get_sync_client(url=langgraph_dev)
    ns = ["memories", "studio-user"]
    client.store.put_item(ns, "home", {"content": "I live in Reykjavik and I love puffins"})
    client.store.put_item(ns, "job", {"content": "I work as a glacier guide", "kind": "work"})
    client.store.put_item(ns + ["prefs"], "tea", {"content": "Earl Grey, no milk"})

    item = client.store.get_item(ns, "home")
    assert item["value"] == {"content": "I live in Reykjavik and I love puffins"}

    found = client.store.search_items(ns, query="which birds do I like?", limit=2)["items"]
    assert found[0]["key"] == "home" and found[0]["score"] is not None
    assert [i["key"] for i in client.store.search_items(ns, filter={"kind": "work"})["items"]] == ["job"]
    spaces = client.store.list_namespaces(prefix=ns)["namespaces"]
    assert sorted(map(tuple, spaces)) == [tuple(ns), tuple(ns + ["prefs"])]

    # the served MemoryX search graph recalls what the store client wrote: one memory behind both doors
    out = client.runs.wait(None, "search", input={"query": "what do I do for a living?", "user_id": "studio-user",
                                                   "limit": 3})
    assert any("glacier" in r["memory"] for r in out["result"]["results"]), out

    # a served graph's runtime.store is MemoryX too: the notes graph writes and finds through it
    saved = client.runs.wait(None, "notes", input={"user_id": "studio-user", "note": "The spare key is under the blue "
                                                                                   "flowerpot"})["saved"]
    found = client.runs.wait(None, "notes", input={"user_id": "studio-user", "query": "where is the spare key?",
                                                   "limit": 1})["found"]
    assert found[0]["key"] == saved and "flowerpot" in found[0]["content"]
    assert client.store.get_item(ns, saved)["value"]["content"].endswith("blue flowerpot")

    client.store.delete_item(ns, "job")
    assert [i["key"] for i in client.store.search_items(ns, filter={"kind": "work"})["items"]] == []

    with pytest.raises(APIError) as refused:  # a namespace that names no tenant is refused, never stored
        client.store.put_item(["memories"], "k", {"content": "whose is this?"})
    assert refused.value.response.status_code == 400
    assert "names no MemoryX scope" in refused.value.response.text


KEYS = {"key-alice": ["alice"], "key-bob": ["bob"], "key-admin": {"users": [], "admin": True}}


@pytest.fixture
def keyed_env(monkeypatch):
    monkeypatch.setenv("MEMORYX_API_KEYS", json.dumps(KEYS))


@pytest.fixture
def keyed_dev(keyed_env, langgraph_dev):  # noqa: F811 - keyed_env first: langgraph dev starts with the keys
    return langgraph_dev


def test_under_keys_the_served_store_honours_the_lock(keyed_dev):
    from langgraph_sdk import get_sync_client
    from langgraph_sdk.errors import APIError

    def client(key=None):
        return get_sync_client(url=keyed_dev, headers={"X-API-Key": key} if key else None)

    def status(call) -> int:
        with pytest.raises((APIError, httpx.HTTPStatusError)) as err:  # runs.wait raises httpx's own
            call()
        return err.value.response.status_code

    alice, bob, admin = client("key-alice"), client("key-bob"), client("key-admin")
    alice.store.put_item(["memories", "alice"], "pin", {"content": "Alice's locker code is 2468"})
    bob.store.put_item(["memories", "bob"], "pin", {"content": "Bob's locker code is 1357"})
    assert alice.store.get_item(["memories", "alice"], "pin")["value"]["content"].endswith("2468")
    assert [i["key"] for i in alice.store.search_items(["memories", "alice"], query="locker code")["items"]] == ["pin"]

    assert status(lambda: client().store.get_item(["memories", "alice"], "pin")) == 401
    assert status(lambda: client("key-wrong").store.get_item(["memories", "alice"], "pin")) == 401
    for call in (lambda: alice.store.get_item(["memories", "bob"], "pin"),
                 lambda: alice.store.search_items(["memories", "bob"], query="locker code"),
                 lambda: alice.store.put_item(["memories", "bob"], "pin", {"content": "overwritten"}),
                 lambda: alice.store.delete_item(["memories", "bob"], "pin"),
                 lambda: alice.store.list_namespaces(prefix=["memories", "bob"]),
                 lambda: alice.runs.wait(None, "search", input={"query": "locker code", "user_id": "bob"})):
        assert status(call) == 403
    assert bob.store.get_item(["memories", "bob"], "pin")["value"]["content"] == "Bob's locker code is 1357"
    assert admin.store.get_item(["memories", "bob"], "pin")["value"]["content"] == "Bob's locker code is 1357"
    found = admin.runs.wait(None, "search", input={"query": "locker code", "user_id": "alice", "limit": 1})
    assert "2468" in found["result"]["results"][0]["memory"]
