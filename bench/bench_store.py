"""MemoryXStore (LangGraph's BaseStore over MemoryX) beside LangGraph's InMemoryStore and beside MemoryX's own API:
put / get / search latency, and the adapter's overhead per call.

    HF_HUB_OFFLINE=1 python3 bench/bench_store.py                 # 200 items, 100 timed calls per operation
    HF_HUB_OFFLINE=1 python3 bench/bench_store.py --items 1000 --calls 200 --json

All three use the same encoder (all-MiniLM-L6-v2 as Memory builds it): InMemoryStore gets it as its index's embed
function, so its put and search pay one embedding as MemoryX's do. Memory's rows are the public calls the store's
operations stand for: `add(infer=False)` for a new key (MemoryX's own write as said), `update` for an existing
key, `get(id)`, `search(query, filters=<the namespace>)` and `get_all(filters=<the namespace>)`. The store's
overhead is its median minus the median of the Memory call doing the same work (get, search, list, update); a
new key is the store's own write (one SQL insert with the key's id and its vector) and is shown beside
`add(infer=False)`, which runs the add graph.

Embedded defaults in a temporary data directory (SQLite, embedded Qdrant), no graph backend (no store operation
reads or writes the graph). Medians and p90 in ms over --calls calls, one thread, after --warmup calls; the
three take turns call by call, so that load from other processes falls on all of them alike. The adapter's own
time is measured inside each store call: its duration minus the time spent in the Memory, SQL and projector
methods it calls (wrapped on these instances only), which no other process's load can blur.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
import uuid

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from langgraph.store.memory import InMemoryStore  # noqa: E402

from memoryx import Memory, MemoryXStore  # noqa: E402
from memoryx.api.store_values import item_metadata, namespace_filter  # noqa: E402
from memoryx.models.embeddings import make_embeddings  # noqa: E402
from memoryx.settings import Settings  # noqa: E402

TOPICS = ["drinks green tea in the morning", "has a beagle called Rex", "works as a nurse in Leeds",
          "is learning the cello", "is allergic to peanuts", "runs 5 km on Sundays", "prefers window seats",
          "moved to Lisbon last spring", "reads science fiction", "grows tomatoes on the balcony"]
OPS = ("put_new", "put_update", "get", "search", "list")
QUESTIONS = ["what does she drink?", "what is the dog's name?", "where does she work?", "which instrument?",
             "any food allergies?", "how often does she run?", "seat preference on planes?", "where does she live?"]


def text(i: int) -> str:
    return f"Note {i}: the user {TOPICS[i % len(TOPICS)]} (detail {i})."


class Inner:
    """Time spent inside MemoryX's calls during a store operation: wraps, on these instances only, every Memory /
    SQL / projector method the store calls, so that the store's own time is the call's time minus this."""

    def __init__(self, memory: Memory):
        self.ms = 0.0
        core, services = memory._core, memory.services
        targets = [(memory, "search"), (memory, "history"), (memory, "add"), (core, "get"), (core, "get_all"),
                   (core, "delete"), (services.sql, "insert_memory"), (services.sql, "update_memory"),
                   (services.sql, "record_access"), (services.projector, "sync_memories")]
        for obj, name in targets:
            setattr(obj, name, self._wrap(getattr(obj, name)))

    def _wrap(self, fn):
        def timed_call(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.ms += (time.perf_counter() - start) * 1000
        return timed_call


def store_ops(store, ns, items: int) -> dict:
    for i in range(items):
        store.put(ns, f"k{i}", {"content": text(i)})
    return {
        "put_new": lambda i: store.put(ns, f"new{i}", {"content": text(i)}),
        "put_update": lambda i: store.put(ns, f"k{i % items}", {"content": text(i + 7)}),
        "get": lambda i: store.get(ns, f"k{i % items}"),
        "search": lambda i: store.search(ns, query=QUESTIONS[i % len(QUESTIONS)], limit=5),
        "list": lambda i: store.search(ns, limit=10),
    }


def memory_ops(memory: Memory, user: str, items: int) -> dict:
    """The Memory calls the store's operations stand for, on memories carrying a store item's metadata (so that
    the namespace filter matches as many memories, as large); archived ones read too, as the store does."""
    ns = ("memories", user)
    meta = [item_metadata(ns, f"k{i}", {"content": text(i)}, indexed=True, ttl=None) for i in range(items)]
    ids = [memory.add(text(i), user_id=user, infer=False, metadata=meta[i])["results"][0]["id"]
           for i in range(items)]
    filters = namespace_filter(ns)
    return {
        "put_new": lambda i: memory.add(f"{text(i)} #{uuid.uuid4().hex[:6]}", user_id=user, infer=False,
                                        metadata=meta[i % items]),
        "put_update": lambda i: memory.update(ids[i % items], text(i + 7), meta[i % items]),
        "get": lambda i: memory.get(ids[i % items], user_id=user),
        "search": lambda i: memory.search(QUESTIONS[i % len(QUESTIONS)], user_id=user, limit=5, filters=filters,
                                          include_archived=True),
        "list": lambda i: memory.get_all(user_id=user, limit=10, filters=filters, include_archived=True),
    }


def run(ops: dict[str, dict], calls: int, warmup: int, inner: Inner) -> dict:
    """Each operation's calls interleaved across the three (call i of each in turn), so that a burst of load on
    the machine falls on all three alike; the store's own time is taken on the side."""
    ms = {name: {op: [] for op in OPS} for name in ops}
    own_ms: dict[str, list] = {op: [] for op in OPS}
    for op in OPS:
        for i in range(warmup + calls):
            for name, table in ops.items():
                inner.ms, start = 0.0, time.perf_counter()
                table[op](i)
                took = (time.perf_counter() - start) * 1000
                if i >= warmup:
                    ms[name][op].append(took)
                    if name == "MemoryXStore":
                        own_ms[op].append(took - inner.ms)
    out = {name: {op: _stats(v) for op, v in row.items()} for name, row in ms.items()}
    out["MemoryXStore"]["own_ms"] = {op: round(statistics.median(v), 3) for op, v in own_ms.items()}
    return out


def _stats(ms: list[float]) -> dict:
    ms = sorted(ms)
    return {"p50": round(statistics.median(ms), 3), "p90": round(ms[int(len(ms) * 0.9) - 1], 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=200, help="items in the namespace before timing")
    parser.add_argument("--calls", type=int, default=100, help="timed calls per operation")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()

    embeddings = make_embeddings(Settings())
    inmem = InMemoryStore(index={"dims": 384, "embed": embeddings.embed_documents, "fields": ["$"]})
    with tempfile.TemporaryDirectory() as data:
        with Memory(data_dir=data, graph_backend="none", embeddings=embeddings) as memory:
            ops = {"InMemoryStore": store_ops(inmem, ("memories", "bench"), args.items),
                   "MemoryXStore": store_ops(MemoryXStore(memory), ("memories", "store-user"), args.items),
                   "Memory API": memory_ops(memory, "api-user", args.items)}
            results = run(ops, args.calls, args.warmup, Inner(memory))

    ops = OPS
    print(f"items={args.items} calls={args.calls} (ms, p50 / p90)")
    print(f"{'':16}" + "".join(f"{op:>20}" for op in ops))
    for name in ("InMemoryStore", "MemoryXStore", "Memory API"):
        row = results[name]
        print(f"{name:16}" + "".join(f"{row[op]['p50']:>10.2f} / {row[op]['p90']:<7.2f}" for op in ops))
    overhead = {op: round(results["MemoryXStore"][op]["p50"] - results["Memory API"][op]["p50"], 3)
                for op in ("put_update", "get", "search", "list")}
    print("p50 MemoryXStore - p50 Memory API (ms; load on the machine moves it): "
          + ", ".join(f"{op} {v:+.2f}" for op, v in overhead.items()))
    own_ms = results["MemoryXStore"]["own_ms"]
    print("adapter's own time per call, p50 (ms; the call minus the MemoryX calls inside it): "
          + ", ".join(f"{op} {v:.3f}" for op, v in own_ms.items()))
    if args.json:
        print(json.dumps({"args": vars(args), "results": results, "overhead_ms": overhead}, indent=2))


if __name__ == "__main__":
    main()
