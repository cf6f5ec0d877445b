"""MemoryX as LangGraph's long-term store: `MemoryXStore`, a `langgraph.store.base.BaseStore`.

    from memoryx import Memory, MemoryXStore
    store = MemoryXStore(Memory())                       # or MemoryXStore(data_dir="...")
    graph = builder.compile(store=store)                 # runtime.store / get_store() in the nodes
    store.put(("memories", "alice"), "tea", {"content": "Alice drinks green tea"})
    store.search(("memories", "alice"), query="what does alice drink?")

Each item is one MemoryX memory (memoryx.api.store_values says what it holds), in the scope its namespace
names (memoryx.api.store_namespaces: `("memories", user_id)` by default). Its id is derived from the scope,
the namespace, the key and a generation, so a `get` is one read by id, a `put` on an existing key updates that
memory (its history keeps every version) and a `put` after a `delete` starts the next generation.

Writes are as said by default (`infer=False`): a key-value store promises that `get` returns what `put` wrote,
one item per key, at the cost of one embedding; MemoryX's inference may split a value into several facts, merge
it into another memory or drop it, and calls a model on every put (and LangMem's tools already had a model
decide what to write). With `infer=True` each put also goes through MemoryX's add graph (facts extracted,
judged against what the user's memory holds, linked in the graph); what it learns is the user's memory, not a
store item. Items are `immutable` for MemoryX's judge: a later chat never rewrites a stored value.

A search with a query is MemoryX's recall (`Memory.search`, the same ranking), restricted to the namespace
prefix; without a query it lists the namespace, newest first. With a `principal` every operation asks
core/authorization.authorize for its scope, as every other door does.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

from langgraph.store.base import (BaseStore, GetOp, IndexConfig, Item, ListNamespacesOp, MatchCondition, Op, PutOp,
                                  Result, SearchItem, SearchOp, TTLConfig)

from memoryx.api import store_values as sv
from memoryx.api.memory import Memory
from memoryx.api.store_namespaces import NamespaceRule, NamespaceScopeError
from memoryx.core.authorization import Action, Principal, authorize
from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError, NotFoundError
from memoryx.ingest.messages import check_metadata_size
from memoryx.runtime.services import serving_services

__all__ = ["MemoryXStore", "NamespaceRule", "NamespaceScopeError", "served_store"]

ACTOR = "langgraph_store"  # the history rows' actor
_ID_SPACE = uuid.UUID("6f1c2a5e-4d0b-5c61-9b7e-2b1f3a9c7d10")
_MAX_GENERATIONS = 100_000  # a key deleted and put again this often is a bug in the caller
_LIST_ALL = 10_000  # the most items one operation reads from a scope (a listing, a heavily filtered search)


class MemoryXStore(BaseStore):
    """LangGraph `BaseStore` over a MemoryX `Memory`. See the module docstring.

    Args:
        memory: the `Memory` to use (not closed by `close()`); None opens one from `memory_options`.
        namespaces: the namespace rule's patterns (memoryx.api.store_namespaces), default ("*", "{user_id}").
        agent_id, run_id, group_id: scope fields added to every namespace's scope.
        infer: also run MemoryX's add graph on each put's text (see the module docstring).
        index: LangGraph's IndexConfig; only `fields` is read (MemoryX embeds with its own model, so `dims` and
            `embed` are ignored). Default: the whole value.
        ttl: LangGraph's TTLConfig: `default_ttl` (minutes), `refresh_on_read` (default True).
        principal: the caller's principal when a server door hands the store to a caller; None for the
            in-process library (which holds the stores anyway).
    """

    supports_ttl = True

    def __init__(self, memory: Memory | None = None, *, namespaces=None, agent_id: str | None = None,
                 run_id: str | None = None, group_id: str | None = None, infer: bool = False,
                 index: IndexConfig | dict | None = None, ttl: TTLConfig | dict | None = None,
                 principal: Principal | None = None, **memory_options: Any):
        self.rule = namespaces if isinstance(namespaces, NamespaceRule) else \
            NamespaceRule(namespaces, agent_id=agent_id, run_id=run_id, group_id=group_id)
        self.memory = memory if memory is not None else Memory(**memory_options)
        self._owns_memory = memory is None
        self.infer = bool(infer)
        self.index_config = dict(index) if index else None
        self.fields = list((self.index_config or {}).get("fields") or ["$"])
        self.ttl_config = dict(ttl) if ttl else None
        self.principal = principal

    # --- BaseStore --------------------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """The operations in order (a get after a put in one batch sees the put)."""
        results: list[Result] = []
        for op in map(_tuple_namespace, ops):
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, PutOp):
                self._put(op)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                raise InvalidInputError(f"Unknown store operation {type(op).__name__}; use GetOp, PutOp, SearchOp "
                                        "or ListNamespacesOp.")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        # MemoryX's stores are synchronous: the batch runs on a worker thread, the event loop stays free
        return await asyncio.to_thread(self.batch, list(ops))

    # --- operations -------------------------------------------------------------------------------------

    def _get(self, op: GetOp) -> Item | None:
        scope = self._scope(op.namespace, Action.READ)
        _, memory = self._current(scope, op.namespace, op.key)
        entry = sv.entry_of(memory) if memory is not None else None
        if entry is None or sv.expired(memory, entry, _now()):
            return None
        if op.refresh_ttl and entry.get("ttl") is not None:
            self.memory.services.sql.record_access([memory["id"]])
        return sv.to_item(memory, entry)

    def _put(self, op: PutOp) -> None:
        if op.value is None:
            scope = self._scope(op.namespace, Action.DELETE)
            _, memory = self._current(scope, op.namespace, op.key)
            if memory is not None:
                self.memory._core.delete(memory["id"], scope=scope, actor=ACTOR)
            return
        scope = self._scope(op.namespace, Action.WRITE)
        if not isinstance(op.value, dict):
            raise InvalidInputError(f"A store value is a dict of JSON values, got {type(op.value).__name__}.")
        value = dict(op.value)
        indexed = op.index is not False
        text = sv.item_text(value, op.index if isinstance(op.index, list) else self.fields) if indexed else ""
        text = text.strip() or sv.item_text(value, ["$"]).strip() or str(op.key)
        settings = self.memory.settings
        text = text[:settings.max_message_chars]  # what is embedded; the value itself is kept whole
        meta = sv.item_metadata(op.namespace, op.key, value, indexed=indexed, ttl=op.ttl)
        meta["immutable"] = True  # MemoryX's judge never rewrites a stored value
        try:
            check_metadata_size(meta, settings.max_metadata_bytes)
        except InvalidInputError as exc:
            raise InvalidInputError(f"The value of {op.namespace!r} / {op.key!r} is too large or not strict JSON: the "
                                    f"item is kept in its memory's metadata ({exc}). Store less per key, or raise "
                                    "MEMORYX_MAX_METADATA_BYTES.") from None
        sql, projector = self.memory.services.sql, self.memory.services.projector
        with sql.scope_lock(scope):  # the key's lookup too: two puts of one new key never both insert
            generation, memory = self._current(scope, op.namespace, op.key)
            if memory is None:
                row = sql.insert_memory(scope=scope, text=text, metadata=meta, actor=ACTOR,
                                        memory_id=self._id(scope, op.namespace, op.key, generation))
            else:
                row = sql.update_memory(memory["id"], text=text, metadata=meta, actor=ACTOR)
            projector.sync_memories([row["id"]])
        if self.infer and indexed:
            self.memory.add(text, **scope.as_dict(), infer=True,
                            metadata={"source": ACTOR, "store_key": [*op.namespace, op.key]})

    def _search(self, op: SearchOp) -> list[SearchItem]:
        scope = self._scope(op.namespace_prefix, Action.SEARCH)
        if op.limit < 0 or op.offset < 0:
            raise InvalidInputError(f"limit and offset must not be negative, got {op.limit} and {op.offset}.")
        sv.check_filter(op.filter)
        want = op.offset + op.limit
        if want == 0:
            return []
        filters = {**sv.namespace_filter(op.namespace_prefix), **sv.pushdown(op.filter)}
        now = _now()

        def keep(memory: dict, indexed_only: bool) -> dict | None:
            entry = sv.entry_of(memory)
            if entry is None or not scope.contains(memory) or sv.expired(memory, entry, now):
                return None
            if indexed_only and not entry.get("indexed", True):
                return None
            return entry if sv.value_matches(entry["value"], op.filter) else None

        found: list[tuple[dict, dict, float | None]] = []
        if op.query:
            for memory in self._fetch(lambda n: self.memory.search(op.query, **scope.as_dict(), limit=n,
                                                                   filters=filters, include_archived=True)["results"],
                                      want,
                                      lambda m: keep(m, True)):
                found.append((memory, sv.entry_of(memory), float(memory["score"])))
            if len(found) < want:  # as InMemoryStore: the items with nothing indexed fill the page, unscored
                unindexed = {**filters, f"metadata.{sv.STORE_KEY}.indexed": False}
                for memory in self._fetch(lambda n: self._list(scope, unindexed, n), want - len(found),
                                          lambda m: keep(m, False)):
                    found.append((memory, sv.entry_of(memory), None))
        else:
            for memory in self._fetch(lambda n: self._list(scope, filters, n), want, lambda m: keep(m, False)):
                found.append((memory, sv.entry_of(memory), None))
        page = found[op.offset:want]
        refresh = [m["id"] for m, e, _ in page if e.get("ttl") is not None]
        if op.refresh_ttl and refresh and not op.query:  # a search's hits are recorded by MemoryX's recall
            self.memory.services.sql.record_access(refresh)
        return [sv.to_item(m, e, score, search=True) for m, e, score in page]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        prefix = next((tuple(c.path) for c in op.match_conditions or () if c.match_type == "prefix"), ())
        literal = prefix[:prefix.index("*")] if "*" in prefix else prefix
        if not literal:
            raise NamespaceScopeError(
                "list_namespaces needs a prefix that names a scope (e.g. prefix=('memories', 'alice')): "
                "MemoryX lists one tenant's namespaces at a time, never every tenant's.")
        scope = self._scope(literal, Action.LIST)
        now = _now()
        names = set()
        for memory in self._list(scope, sv.namespace_filter(literal), _LIST_ALL):
            entry = sv.entry_of(memory)
            if entry is not None and scope.contains(memory) and not sv.expired(memory, entry, now):
                names.add(tuple(entry["namespace"]))
        names = {n for n in names if all(_matches(c, n) for c in op.match_conditions or ())}
        if op.max_depth is not None:
            names = {n[:op.max_depth] for n in names}
        return sorted(names)[op.offset:op.offset + op.limit]

    # --- TTL --------------------------------------------------------------------------------------------

    def sweep_ttl(self, namespace_prefix: tuple[str, ...]) -> int:
        """Delete the expired items under a prefix (one scope); returns how many. Reads never return an
        expired item whether or not it was swept."""
        scope = self._scope(namespace_prefix, Action.DELETE)
        now, n = _now(), 0
        for memory in self._list(scope, sv.namespace_filter(namespace_prefix), _LIST_ALL):
            entry = sv.entry_of(memory)
            if entry is not None and sv.expired(memory, entry, now):
                self.memory._core.delete(memory["id"], scope=scope, actor=ACTOR)
                n += 1
        return n

    # --- helpers ----------------------------------------------------------------------------------------

    def _scope(self, namespace: tuple[str, ...], action: Action) -> Scope:
        if not isinstance(namespace, tuple) or not all(isinstance(e, str) and e for e in namespace):
            raise NamespaceScopeError(f"A namespace is a tuple of non-empty strings, got {namespace!r}.")
        scope = self.rule.scope_of(namespace)
        if self.principal is None:
            return scope
        allowed = authorize(self.principal, action, scope.as_dict())
        return allowed if allowed is not None else scope

    @staticmethod
    def _id(scope: Scope, namespace: tuple[str, ...], key: str, generation: int) -> str:
        seed = sv.prefix_key([scope.key(), *namespace, "\x00", str(key), str(generation)])
        return str(uuid.uuid5(_ID_SPACE, seed))

    def _current(self, scope: Scope, namespace: tuple[str, ...], key: str) -> tuple[int, dict | None]:
        """(generation, the live memory of the key) or (the next generation, None)."""
        for generation in range(_MAX_GENERATIONS):
            memory_id = self._id(scope, namespace, key, generation)
            try:
                memory = self.memory._core.get(memory_id, scope)
                return generation, memory if scope.contains(memory) else None
            except NotFoundError:
                try:
                    self.memory.history(memory_id)  # a deleted generation: the key lives on in the next one
                except NotFoundError:
                    return generation, None
        raise InvalidInputError(f"Key {key!r} was deleted and put again {_MAX_GENERATIONS} times.")

    def _list(self, scope: Scope, filters: dict, limit: int) -> list[dict]:
        # archived and merged too: consolidation may file an item's memory away, the item is still the caller's
        return self.memory._core.get_all(scope.user_id, scope.agent_id, scope.run_id, limit, filters,
                                         scope.group_id, include_archived=True)["results"]

    @staticmethod
    def _fetch(read, want: int, keep) -> list[dict]:
        """The first `want` memories `keep` accepts, asking `read(n)` for more while filters drop some."""
        n = want
        while True:
            got = read(n)
            kept = [m for m in got if keep(m) is not None]
            if len(kept) >= want or len(got) < n or n >= _LIST_ALL:
                return kept[:want]
            n *= 4

    # --- lifecycle --------------------------------------------------------------------------------------

    def close(self) -> None:
        if self._owns_memory:
            self.memory.close()

    def __enter__(self) -> "MemoryXStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"MemoryXStore(namespaces={self.rule.describe()}, infer={self.infer})"


def _tuple_namespace(op: Op) -> Op:
    """Namespaces as tuples (a JSON client or a caller may hand lists): ids and listings are read from tuples."""
    if isinstance(op, (GetOp, PutOp)) and isinstance(op.namespace, list):
        return op._replace(namespace=tuple(op.namespace))
    if isinstance(op, SearchOp) and isinstance(op.namespace_prefix, list):
        return op._replace(namespace_prefix=tuple(op.namespace_prefix))
    return op


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    pairs = zip(namespace, path) if condition.match_type == "prefix" else zip(reversed(namespace), reversed(path))
    return all(p == "*" or n == p for n, p in pairs)


@contextlib.asynccontextmanager
async def served_store():
    """The store of `langgraph dev` / LangGraph Platform (langgraph.json's "store"): the serving process's
    own MemoryX services (those the served graphs use), the default namespace rule, stores as said."""
    services = await asyncio.to_thread(serving_services)
    store = MemoryXStore(Memory(services=services))
    try:
        yield store
    finally:
        store.close()
