"""LangGraph's store behaviour, run against LangGraph's own InMemoryStore and against MemoryXStore, so that every
difference shows. The differences MemoryX keeps on purpose are tested in test_langgraph_store.py and listed in
docs/langgraph-store.md ("Kept differences"); nothing here is skipped for one store."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime

import pytest
from langgraph.store.base import GetOp, Item, ListNamespacesOp, MatchCondition, PutOp, SearchItem, SearchOp
from langgraph.store.memory import InMemoryStore

from memoryx import Memory, MemoryXStore
from tests.support import shared_embeddings


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    with Memory(data_dir=tmp_path_factory.mktemp("store-conformance"), graph_backend="none",
                embeddings=shared_embeddings()) as m:
        yield m


@pytest.fixture(params=["inmemory", "memoryx"])
def store(request, memory):
    if request.param == "inmemory":
        return InMemoryStore(index={"dims": 384, "embed": shared_embeddings().embed_documents, "fields": ["$"]})
    return MemoryXStore(memory)


@pytest.fixture
def user():
    return f"u-{uuid.uuid4().hex[:8]}"  # each test its own tenant in the shared MemoryX data directory


def test_put_then_get_returns_the_item(store, user):
    ns = ("memories", user)
    value = {"content": "Alice drinks green tea", "n": 3, "ok": True, "none": None, "tags": ["a", "b"],
             "nested": {"x": {"y": 1.5}}}
    store.put(ns, "tea", value)
    item = store.get(ns, "tea")
    assert isinstance(item, Item)
    assert item.namespace == ns and item.key == "tea" and item.value == value
    assert isinstance(item.created_at, datetime) and item.created_at.tzinfo is not None
    assert item.updated_at >= item.created_at
    assert store.get(ns, "missing") is None
    assert store.get(("memories", user, "elsewhere"), "tea") is None  # a key lives in one namespace only


def test_put_on_an_existing_key_replaces_its_value(store, user):
    ns = ("memories", user)
    store.put(ns, "k", {"content": "first"})
    first = store.get(ns, "k")
    store.put(ns, "k", {"content": "second", "extra": 1})
    item = store.get(ns, "k")
    assert item.value == {"content": "second", "extra": 1}
    assert item.updated_at >= first.updated_at
    assert [i.key for i in store.search(ns)] == ["k"]  # still one item


def test_delete_removes_the_item_and_a_new_put_brings_the_key_back(store, user):
    ns = ("memories", user)
    store.put(ns, "k", {"content": "to forget"})
    store.delete(ns, "k")
    assert store.get(ns, "k") is None
    assert store.search(ns) == []
    store.delete(ns, "never-there")  # no error
    store.put(ns, "k", {"content": "back again"})
    assert store.get(ns, "k").value == {"content": "back again"}


def test_search_without_query_lists_the_prefix_with_limit_and_offset(store, user):
    for i in range(7):
        store.put(("memories", user), f"k{i}", {"content": f"item {i}", "i": i})
    store.put(("memories", user, "deeper"), "d", {"content": "nested item"})
    store.put(("notes", user), "other", {"content": "not under the prefix"})
    everything = store.search(("memories", user), limit=100)
    assert sorted(i.key for i in everything) == sorted([f"k{i}" for i in range(7)] + ["d"])
    assert all(isinstance(i, SearchItem) and i.score is None for i in everything)
    pages = [store.search(("memories", user), limit=3, offset=o) for o in (0, 3, 6)]
    assert [len(p) for p in pages] == [3, 3, 2]
    assert sorted(i.key for p in pages for i in p) == sorted(i.key for i in everything)
    assert [i.key for i in store.search(("memories", user, "deeper"))] == ["d"]


def test_filters_on_values(store, user):
    ns = ("memories", user)
    store.put(ns, "a", {"kind": "pet", "age": 3, "owner": {"name": "Ana"}, "tags": ["x", "y"]})
    store.put(ns, "b", {"kind": "pet", "age": 9, "owner": {"name": "Bo"}})
    store.put(ns, "c", {"kind": "plant", "age": 1})

    def keys(**filter):
        return sorted(i.key for i in store.search(ns, filter=filter))

    assert keys(kind="pet") == ["a", "b"]
    assert keys(kind="pet", age=9) == ["b"]
    assert keys(owner={"name": "Ana"}) == ["a"]
    assert keys(age={"$gt": 2}) == ["a", "b"]
    assert keys(age={"$gte": 1, "$lt": 9}) == ["a", "c"]
    assert keys(kind={"$ne": "pet"}) == ["c"]
    assert keys(tags=["x", "y"]) == ["a"]
    assert keys(tags="x") == []  # a scalar does not match a list holding it (JSON equality)
    assert keys(kind="rock") == []


def test_query_search_ranks_by_meaning(store, user):
    ns = ("memories", user)
    store.put(ns, "tea", {"content": "Alice drinks green tea every morning"})
    store.put(ns, "dog", {"content": "Alice's dog is a beagle called Rex"})
    store.put(ns, "job", {"content": "Alice works as a nurse at the city hospital"})
    found = store.search(ns, query="what is the name of her pet?", limit=3)
    assert found[0].key == "dog"
    assert all(isinstance(i.score, float) for i in found)
    assert [i.score for i in found] == sorted((i.score for i in found), reverse=True)
    assert store.search(ns, query="what does she drink?", limit=1)[0].key == "tea"
    assert [i.key for i in store.search(ns, query="her job", filter={"content": "Alice drinks green tea every morning"})] \
        == ["tea"]


def test_query_search_pages_with_offset(store, user):
    ns = ("memories", user)
    for i, text in enumerate(["red apples", "green pears", "yellow bananas", "purple grapes"]):
        store.put(ns, f"f{i}", {"content": f"Bob likes {text}"})
    whole = [i.key for i in store.search(ns, query="fruit Bob likes", limit=4)]
    paged = [i.key for o in (0, 2) for i in store.search(ns, query="fruit Bob likes", limit=2, offset=o)]
    assert sorted(whole) == sorted(paged) == ["f0", "f1", "f2", "f3"]


def test_index_fields_and_index_false(store, user):
    ns = ("memories", user)
    store.put(ns, "doc", {"title": "How to bake sourdough bread", "body": "zzz"}, index=["title"])
    store.put(ns, "car", {"title": "Changing a flat tyre on a bicycle", "body": "zzz"}, index=["title"])
    store.put(ns, "hidden", {"title": "Sourdough starter feeding schedule"}, index=False)
    found = store.search(ns, query="baking bread at home", limit=10)
    assert found[0].key == "doc"
    hidden = [i for i in found if i.key == "hidden"]
    assert hidden and hidden[0].score is None  # not indexed: only as an unscored filler after the ranked ones
    assert found.index(hidden[0]) == len(found) - 1
    assert store.get(ns, "hidden").value == {"title": "Sourdough starter feeding schedule"}


def test_list_namespaces(store, user):
    for ns in [("memories", user), ("memories", user, "profile"), ("memories", user, "profile", "v2"),
               ("memories", user, "notes")]:
        store.put(ns, "k", {"content": "x"})
    root = ("memories", user)
    assert store.list_namespaces(prefix=root) == sorted([root, root + ("notes",), root + ("profile",),
                                                          root + ("profile", "v2")])
    assert store.list_namespaces(prefix=root, max_depth=3) == sorted([root, root + ("notes",), root + ("profile",)])
    assert store.list_namespaces(prefix=root, suffix=("v2",)) == [root + ("profile", "v2")]
    assert store.list_namespaces(prefix=("memories", user, "*", "v2")) == [root + ("profile", "v2")]
    assert store.list_namespaces(prefix=root, limit=2, offset=1) == sorted(
        [root, root + ("notes",), root + ("profile",), root + ("profile", "v2")])[1:3]


def test_batch_runs_every_kind_of_operation(store, user):
    ns = ("memories", user)
    store.batch([PutOp(ns, "a", {"content": "apple"}), PutOp(ns, "b", {"content": "banana"})])
    got, listed, spaces, _ = store.batch([
        GetOp(ns, "a"), SearchOp(ns, None, 10, 0),
        ListNamespacesOp(match_conditions=(MatchCondition(match_type="prefix", path=ns),), max_depth=None, limit=10,
                         offset=0),
        PutOp(ns, "a", None)])
    assert got.value == {"content": "apple"}
    assert sorted(i.key for i in listed) == ["a", "b"]
    assert spaces == [ns]
    assert store.get(ns, "a") is None


def test_async_forms(store, user):
    ns = ("memories", user)

    async def run():
        await store.aput(ns, "k", {"content": "async value"})
        item = await store.aget(ns, "k")
        found = await store.asearch(ns, query="async")
        spaces = await store.alist_namespaces(prefix=ns)
        await store.adelete(ns, "k")
        return item, found, spaces, await store.aget(ns, "k")

    item, found, spaces, gone = asyncio.run(run())
    assert item.value == {"content": "async value"}
    assert [i.key for i in found] == ["k"]
    assert spaces == [ns]
    assert gone is None


def test_tenants_do_not_see_each_other(store, user):
    other = f"{user}-other"
    store.put(("memories", user), "secret", {"content": "my bank PIN is 4321"})
    # listed before the reads: InMemoryStore lists a namespace once it was read (its dict creates it)
    assert store.list_namespaces(prefix=("memories", other)) == []
    assert store.get(("memories", other), "secret") is None
    assert store.search(("memories", other), query="bank PIN") == []
