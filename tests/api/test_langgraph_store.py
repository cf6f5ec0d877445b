"""MemoryXStore's own promises, beyond LangGraph's store behaviour (test_langgraph_store_conformance.py): the
namespace rule and its refusals, keys that keep their memory and its history, recall shared with Memory, the
infer option, TTL, the principal's lock, and each difference from InMemoryStore that docs/langgraph-store.md
lists as kept on purpose."""

from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from langgraph.store.base import GetOp, InvalidNamespaceError, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from memoryx import InvalidInputError, Memory, MemoryXStore, ScopeError
from memoryx.api.langgraph_store import NamespaceRule, NamespaceScopeError
from memoryx.core.authorization import Principal
from memoryx.errors import AccessDeniedError
from tests.support import shared_embeddings


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    with Memory(data_dir=tmp_path_factory.mktemp("store"), graph_backend="none",
                embeddings=shared_embeddings()) as m:
        yield m


@pytest.fixture
def store(memory):
    return MemoryXStore(memory)


@pytest.fixture
def user():
    return f"u-{uuid.uuid4().hex[:8]}"


def _item_memories(memory, **scope) -> list[dict]:
    return [m for m in memory.get_all(**scope, limit=1000)["results"] if "langgraph_store" in m["metadata"]]


def test_a_namespace_without_a_tenant_is_refused_clearly(store):
    for call in (lambda: store.put(("memories",), "k", {"a": 1}), lambda: store.get(("memories",), "k"),
                 lambda: store.search(("memories",), query="x"), lambda: store.list_namespaces(),
                 lambda: store.list_namespaces(prefix=("*", "alice"))):
        with pytest.raises(NamespaceScopeError) as err:
            call()
        assert isinstance(err.value, ScopeError) and isinstance(err.value, InvalidNamespaceError)
        assert "scope" in str(err.value) and ("('memories', user_id)" in str(err.value) or "prefix" in str(err.value))
    assert InMemoryStore().search(("memories",)) == []  # InMemoryStore has no tenants: it reads every namespace


def test_a_rule_that_cannot_name_a_scope_is_refused_when_built():
    for patterns, fixed, words in [([("memories",)], {}, "names no scope field"),
                                   ([("{user_id}", "{user_id}")], {}, "twice"),
                                   ([("*", "{user_id}")], {"user_id": "x"}, "twice"),
                                   ([], {}, "at least one pattern"),
                                   ([("*", "")], {}, "non-empty strings")]:
        with pytest.raises(NamespaceScopeError, match=words):
            NamespaceRule(patterns, **fixed)
    with pytest.raises(NamespaceScopeError, match="Unknown scope fields"):
        NamespaceRule(None, tenant_id="x")
    assert NamespaceRule([("{group_id}", "{user_id}")]).fields_of(("book-club", "u-17", "notes")) == \
        {"group_id": "book-club", "user_id": "u-17"}
    assert NamespaceRule().fields_of(("memories",)) is None


def test_the_namespace_rule_is_configurable(memory, user):
    store = MemoryXStore(memory, namespaces=[("agents", "{agent_id}"), ("{user_id}", "memories")])
    store.put((user, "memories", "food"), "k", {"content": "Likes ramen"})
    store.put(("agents", f"bot-{user}"), "style", {"content": "Answer in short sentences"})
    [mine] = _item_memories(memory, user_id=user)
    assert mine["memory"] == "Likes ramen" and mine["agent_id"] is None
    [bots] = _item_memories(memory, agent_id=f"bot-{user}")
    assert bots["user_id"] is None and bots["memory"] == "Answer in short sentences"
    with pytest.raises(NamespaceScopeError):
        store.put(("memories", user), "k", {"content": "x"})  # matches no pattern of this rule
    fixed = MemoryXStore(memory, agent_id="support-bot")
    fixed.put(("memories", user), "k", {"content": "Prefers email"})
    assert [m["agent_id"] for m in _item_memories(memory, user_id=user, agent_id="support-bot")] == ["support-bot"]
    assert fixed.get(("memories", user), "k").value == {"content": "Prefers email"}
    assert store.get((user, "memories", "food"), "k").value == {"content": "Likes ramen"}


def test_a_key_keeps_its_memory_and_its_history(store, memory, user):
    ns = ("memories", user)
    store.put(ns, "city", {"content": "Lives in Berlin"})
    store.put(ns, "city", {"content": "Lives in Lisbon"})
    [m] = _item_memories(memory, user_id=user)
    assert m["memory"] == "Lives in Lisbon"
    assert m["metadata"]["langgraph_store"]["key"] == "city" and m["metadata"]["immutable"] is True
    store.delete(ns, "city")
    events = [(h["event"], h["old_memory"], h["new_memory"], h["actor"]) for h in memory.history(m["id"])]
    assert events == [("ADD", None, "Lives in Berlin", "langgraph_store"),
                      ("UPDATE", "Lives in Berlin", "Lives in Lisbon", "langgraph_store"),
                      ("DELETE", "Lives in Lisbon", None, "langgraph_store")]
    store.put(ns, "city", {"content": "Lives in Porto"})  # the key's next generation: a new memory
    [again] = _item_memories(memory, user_id=user)
    assert again["id"] != m["id"] and store.get(ns, "city").value == {"content": "Lives in Porto"}


def test_concurrent_puts_of_one_new_key_make_one_item_with_every_version(store, memory, user):
    ns = ("memories", user)
    values = [{"content": f"version {i}"} for i in range(6)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(lambda v: store.put(ns, "k", v), values))
    [m] = _item_memories(memory, user_id=user)
    assert store.get(ns, "k").value in values
    assert [h["event"] for h in memory.history(m["id"])] == ["ADD"] + ["UPDATE"] * 5  # no put was lost


def test_a_namespace_given_as_a_list_is_the_same_namespace(store, user):
    store.batch([PutOp(["memories", user], "k", {"content": "from a JSON client"})])
    assert store.get(("memories", user), "k").value == {"content": "from a JSON client"}
    assert [i.namespace for i in store.batch([SearchOp(["memories", user], None, 10, 0)])[0]] == [("memories", user)]


def test_equal_values_under_two_keys_stay_two_items(store, memory, user):
    # Memory.add(infer=False) skips an exact duplicate of a live memory; a key-value store must not
    ns = ("memories", user)
    store.put(ns, "a", {"content": "Same words"})
    store.put(ns, "b", {"content": "Same words"})
    assert sorted(i.key for i in store.search(ns)) == ["a", "b"]
    assert len(_item_memories(memory, user_id=user)) == 2


def test_items_are_memories_recalled_by_memoryx(store, memory, user):
    store.put(("memories", user), "pet", {"content": "My cat Miso is afraid of thunder"})
    found = memory.search("what is my cat called?", user_id=user, limit=3)["results"]
    assert found and "Miso" in found[0]["memory"]
    # and a memory added through MemoryX's own API is not a store item: the store lists only its items
    memory.add("I play the cello on Sundays", user_id=user, infer=False)
    assert [i.key for i in store.search(("memories", user), query="cello")] == ["pet"]


def test_a_chat_never_rewrites_a_stored_value(store, memory, user):
    store.put(("memories", user), "home", {"content": "I live in Berlin"})
    memory.add("I live in Munich now, I moved last month.", user_id=user)  # the offline model infers and judges
    assert store.get(("memories", user), "home").value == {"content": "I live in Berlin"}
    [item] = _item_memories(memory, user_id=user)
    assert item["memory"] == "I live in Berlin"


def test_consolidation_never_takes_an_item_away(store, memory, user):
    ns = ("memories", user)
    store.put(ns, "a", {"content": "Allergic to penicillin"})
    store.put(ns, "b", {"content": "Allergic to penicillin"})
    report = memory.consolidate(user_id=user)
    assert report["merged"], report  # MemoryX merged the two memories as duplicates ...
    assert sorted(i.key for i in store.search(ns)) == ["a", "b"]  # ... the store still serves both keys
    assert sorted(i.key for i in store.search(ns, query="allergies")) == ["a", "b"]
    assert store.get(ns, "b").value == {"content": "Allergic to penicillin"}


def test_infer_also_runs_the_add_graph(memory, user):
    store = MemoryXStore(memory, infer=True)
    store.put(("memories", user), "bio", {"content": "My name is Dana and I work as a pilot."})
    assert store.get(("memories", user), "bio").value == {"content": "My name is Dana and I work as a pilot."}
    learned = [m for m in memory.get_all(user_id=user, limit=100)["results"]
               if m["metadata"].get("source") == "langgraph_store"]
    assert learned, "the add graph learned nothing from the put"
    assert learned[0]["metadata"]["store_key"] == ["memories", user, "bio"]
    assert any("pilot" in m["memory"].lower() for m in learned)


def test_ttl_expires_items_and_reads_refresh_it(store, user):
    ns = ("memories", user)
    ttl = 2 / 60  # two seconds, in minutes
    store.put(ns, "short", {"content": "temporary"}, ttl=ttl)
    store.put(ns, "plain", {"content": "kept"})
    time.sleep(1.2)
    assert store.get(ns, "short") is not None  # read, and its TTL refreshed
    time.sleep(1.2)
    assert store.get(ns, "short", refresh_ttl=False) is not None  # 2.4 s after the put, 1.2 s after the read
    time.sleep(2.1)
    assert store.get(ns, "short") is None
    assert [i.key for i in store.search(ns)] == ["plain"]
    assert store.sweep_ttl(ns) == 1
    with pytest.raises(NotImplementedError):
        InMemoryStore().put(ns, "short", {"content": "x"}, ttl=ttl)  # InMemoryStore has no TTL


def test_default_ttl_from_the_ttl_config(memory, user):
    store = MemoryXStore(memory, ttl={"default_ttl": 1 / 60})
    store.put(("memories", user), "k", {"content": "soon gone"})
    assert store.get(("memories", user), "k", refresh_ttl=False) is not None
    time.sleep(1.3)
    assert store.get(("memories", user), "k") is None


def test_a_principal_reaches_only_its_own_namespaces(memory, user):
    other = f"{user}-other"
    MemoryXStore(memory).put(("memories", other), "secret", {"content": "the vault code is 9876"})
    store = MemoryXStore(memory, principal=Principal(name="key-of-user", users=frozenset({user})))
    store.put(("memories", user), "mine", {"content": "I like jazz"})
    assert store.get(("memories", user), "mine").value == {"content": "I like jazz"}
    for call in (lambda: store.get(("memories", other), "secret"),
                 lambda: store.search(("memories", other), query="vault code"),
                 lambda: store.put(("memories", other), "x", {"content": "overwrite"}),
                 lambda: store.delete(("memories", other), "secret"),
                 lambda: store.list_namespaces(prefix=("memories", other))):
        with pytest.raises(AccessDeniedError):
            call()
    assert MemoryXStore(memory).get(("memories", other), "secret").value == {"content": "the vault code is 9876"}
    agent_key = MemoryXStore(memory, namespaces=[("agents", "{agent_id}")],
                             principal=Principal(name="agent-key", agents=frozenset({"bot"})))
    with pytest.raises(AccessDeniedError):
        agent_key.put(("agents", "another-bot"), "k", {"content": "x"})


def test_bad_values_are_refused_with_what_to_do(store, user):
    with pytest.raises(InvalidInputError, match="MEMORYX_MAX_METADATA_BYTES"):
        store.put(("memories", user), "big", {"content": "x" * 40_000})
    with pytest.raises(InvalidInputError, match="strict JSON"):
        store.put(("memories", user), "nan", {"n": float("nan")})
    with pytest.raises(ValueError, match="Unsupported filter operator"):
        store.search(("memories", user), filter={"n": {"$regex": "x"}})
    assert store.get(("memories", user), "big") is None


def test_a_batch_runs_in_order(store, user):
    ns = ("memories", user)
    ops = [PutOp(ns, "k", {"content": "new"}), GetOp(ns, "k")]
    assert store.batch(ops)[1].value == {"content": "new"}
    assert InMemoryStore().batch(ops)[1] is None  # InMemoryStore reads before it writes within one batch
