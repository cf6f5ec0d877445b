"""What compare_mem0.py runs on both systems and the figures it prints: the same texts (adds, existing
memories, the search corpus, queries), the timed loops (median / percentiles per call, model calls and prompt
characters per add) and the final table with the ratios mem0 / MemoryX."""

from __future__ import annotations

import collections
import random
import statistics
import time
from typing import Protocol

TOPICS = ["hiking", "jazz", "tea", "chess", "painting", "cycling", "movies", "cooking", "poetry", "yoga"]
OBJECTS = ["a trip to Lisbon", "sourdough bread", "the blue bicycle", "a jazz concert", "the Python course",
           "a vegan lasagna", "the garden shed", "a new laptop", "the marathon", "a pottery class"]


def add_message(i: int) -> str:
    return f"I live in City{i % 7} and I like food{i}."


def existing_text(i: int) -> str:
    return f"User noted item {i} about {TOPICS[i % len(TOPICS)]} and project{i % 397}"


def corpus_text(i: int) -> str:
    return f"Memory {i}: I {TOPICS[i % 10]} with {OBJECTS[(i // 10) % 10]} every {i % 7 + 1} days, note {i % 1009}"


def query(i: int) -> str:
    return f"What do I know about {TOPICS[i % 10]} and {OBJECTS[(i * 7) % 10]}? ({i})"  # distinct: no cache hits


class CountingModel(Protocol):
    """The instant model of both systems (compare_mem0.ScriptedChat): model calls and prompt characters since
    the last reset."""

    calls: int
    chars: int

    def reset(self) -> None: ...


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    k = (len(s) - 1) * p / 100.0
    lo, hi = int(k), min(len(s) - 1, int(k) + 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def timed_adds(add, model: CountingModel, n: int, warmup: int) -> dict:
    ms, calls, chars, events = [], [], [], collections.Counter()
    for i in range(warmup + n):
        model.reset()
        t = time.perf_counter()
        out = add(add_message(i))
        elapsed = (time.perf_counter() - t) * 1000.0
        if not out.get("results"):
            raise RuntimeError(f"add wrote nothing: {out}")
        if i >= warmup:
            ms.append(elapsed)
            calls.append(model.calls)
            chars.append(model.chars)
            events.update(r.get("event") for r in out["results"])
    return {"add_ms_p50": round(statistics.median(ms), 1), "add_ms_p90": round(pct(ms, 90), 1),
            "calls_per_add": round(statistics.mean(calls), 2), "prompt_chars_per_add": round(statistics.mean(chars)),
            "add_events": dict(events)}


def timed_searches(search, users: int, n: int, warmup: int, seed: int) -> dict:
    rng = random.Random(seed)
    ms = []
    for i in range(warmup + n):
        user = f"user{rng.randrange(users)}"
        t = time.perf_counter()
        search(query(i), user)
        if i >= warmup:
            ms.append((time.perf_counter() - t) * 1000.0)
    return {"search_ms_p50": round(pct(ms, 50), 1), "search_ms_p99": round(pct(ms, 99), 1)}


def print_report(rows: list[dict], mem0: dict | None, mem0_graph: dict | None, existing: int) -> None:
    """The table of every row, then the ratios mem0 / MemoryX (rows[0] graph off, rows[1] graph on)."""
    cols = ["system", "add_ms_p50", "add_ms_p90", "calls_per_add", "prompt_chars_per_add", "bulk_per_s",
            "search_n", "search_ms_p50", "search_ms_p99", "preload_s", "search_ingest_s"]
    print("\n| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(str(r.get(c, "")) for c in cols) + " |")
    if mem0:
        off, on = rows[0], rows[1]
        print(f"\nratios (mem0 / MemoryX, same run), existing={existing}:")
        print(f"- add, vector only vs graph off: {mem0['add_ms_p50'] / off['add_ms_p50']:.1f}x faster (target >= 10x)")
        if mem0_graph:
            print(f"- add, both with their graph:    {mem0_graph['add_ms_p50'] / on['add_ms_p50']:.1f}x faster "
                  f"(mem0 + Kuzu {mem0_graph['add_ms_p50']} ms, MemoryX + FalkorDB {on['add_ms_p50']} ms)")
        else:
            print(f"- add, mem0 vector only vs MemoryX graph on: {mem0['add_ms_p50'] / on['add_ms_p50']:.1f}x faster")
        print(f"- search p50: {mem0['search_ms_p50'] / off['search_ms_p50']:.1f}x faster (target >= 50x; MemoryX at "
              f"{off['search_n']:,}, mem0 at {mem0['search_n']:,} memories)")
        print(f"- bulk infer=False: {off['bulk_per_s'] / mem0['bulk_per_s']:.1f}x the memories/s")
        graph_calls = f", mem0 + graph {mem0_graph['calls_per_add']}" if mem0_graph else ""
        graph_chars = f", mem0 + graph {mem0_graph['prompt_chars_per_add']}" if mem0_graph else ""
        print(f"- model calls per add: MemoryX {off['calls_per_add']} (graph off) / {on['calls_per_add']} (graph on, "
              f"target <= 4), mem0 {mem0['calls_per_add']} (vector only){graph_calls}")
        print(f"- prompt characters per add: MemoryX {off['prompt_chars_per_add']} / {on['prompt_chars_per_add']}, "
              f"mem0 {mem0['prompt_chars_per_add']}{graph_chars}")
        print(f"- mem0 fill check: {mem0['fill_check']}")
