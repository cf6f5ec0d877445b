"""Benchmark of the add graph: pipeline overhead, model calls and tokens per add.

    python -m memoryx.bench.bench_add                 # or: python bench/bench_add.py
    python bench/bench_add.py --existing 10000 --adds 50 --graph both --embeddings both

Setup: embedded defaults (SQLite system of record, Qdrant edge shard, FalkorDB for the graph runs), the
SQLite checkpointer the Python API uses, one user who already has N memories (default 10,000; their vectors
are random unit vectors and their texts synthetic, so the setup takes seconds, not the minutes MiniLM would).
Each measured add is a two-fact message ("I live in CityK and I like foodK"), so most adds UPDATE the home
and ADD a like. The chat model is the offline rule-based model (deterministic, ~1 ms: an instant fake
model); its own time is measured and subtracted to give the pipeline overhead.

Embeddings: "minilm" = the real local all-MiniLM-L6-v2 (CPU); "instant" = a hashed bag-of-words embedding
(<0.1 ms) to isolate the pipeline from the embedding model. Both are reported.

Model calls and tokens are counted with a callback handler (tokens: the offline model's estimate, about 4
characters or 1 CJK character per token, of the real prompts).
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")
# torch's OpenMP threads spin after each call; next to langgraph's worker threads on 2 cores that made a
# 20 ms MiniLM call take 200+ ms inside the graph. PASSIVE makes them sleep (see the report to the lead).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from langchain_core.callbacks import BaseCallbackHandler  # noqa: E402
from langchain_core.embeddings import Embeddings  # noqa: E402


class InstantEmbeddings(Embeddings):
    """Hashed bag of words, 384 dims, L2-normalised: deterministic and ~free (isolates the pipeline)."""

    dims = 384

    def _one(self, text: str) -> list[float]:
        from memoryx.text import tokenize

        v = [0.0] * self.dims
        for tok in tokenize(text) or [text]:
            h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=8).digest(), "big")
            v[h % self.dims] += 1.0 if (h >> 20) & 1 else -1.0
        n = math.sqrt(sum(x * x for x in v)) or 1.0
        return [x / n for x in v]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


class Counter(BaseCallbackHandler):
    def __init__(self):
        self.calls = 0
        self.tokens = 0
        self.model_ms = 0.0
        self._starts: dict[Any, float] = {}

    def on_chat_model_start(self, serialized, messages, *, run_id, **kwargs):
        self.calls += 1
        self._starts[run_id] = time.perf_counter()

    def on_llm_end(self, response, *, run_id, **kwargs):
        start = self._starts.pop(run_id, None)
        if start is not None:
            self.model_ms += (time.perf_counter() - start) * 1000.0
        for gens in response.generations:
            for g in gens:
                usage = getattr(getattr(g, "message", None), "usage_metadata", None) or {}
                self.tokens += int(usage.get("total_tokens") or 0)


def _random_unit(rng: random.Random, dims: int) -> list[float]:
    v = [rng.gauss(0, 1) for _ in range(dims)]
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def preload(services, user_id: str, n: int, seed: int = 7) -> float:
    """N existing memories for the user (SQL rows + vector points), written in batches. Returns seconds."""
    from memoryx.scope import Scope
    from memoryx.stores.projections import memory_point

    rng = random.Random(seed)
    scope = Scope(user_id=user_id)
    dims = services.vectors.dims
    topics = ["hiking", "jazz", "tea", "chess", "painting", "cycling", "movies", "cooking", "poetry", "yoga"]
    start = time.perf_counter()
    batch: list[dict] = []
    for i in range(n):
        text = f"User noted item {i} about {topics[i % len(topics)]} and project{i % 397}"
        row = services.sql.insert_memory(scope=scope, text=text, category="fact", importance=0.5, memory_type="fact")
        batch.append(memory_point(row, _random_unit(rng, dims)))
        if len(batch) == 500:
            services.vectors.upsert_memories(batch)
            batch = []
    if batch:
        services.vectors.upsert_memories(batch)
    return time.perf_counter() - start


def run_case(*, existing: int, adds: int, graph_on: bool, embeddings: str, warmup: int = 3) -> dict:
    from memoryx.checkpointing import close_checkpointer, make_checkpointer
    from memoryx.context import Context
    from memoryx.graphs.add import add_run_config, compile_add_graph
    from memoryx.services import build_services
    from memoryx.settings import Settings

    data = Path(tempfile.mkdtemp(prefix="memoryx-bench-"))
    settings = Settings(data_dir=data, graph_backend="falkordb" if graph_on else "none", checkpointer="sqlite", llm="offline")
    emb = InstantEmbeddings() if embeddings == "instant" else None
    services = build_services(settings, embeddings=emb)
    saver = make_checkpointer(settings)
    graph = compile_add_graph(saver)
    user = "bench-user"
    load_s = preload(services, user, existing)
    ctx = Context(services=services, graph_enabled=graph_on, review=False)
    totals, overheads, calls, tokens, model_ms_all = [], [], [], [], []
    try:
        for i in range(warmup + adds):
            counter = Counter()
            trace_id = str(uuid.uuid4())
            config = add_run_config(trace_id, user_id=user, services=services)
            config["callbacks"] = [counter]
            message = f"I live in City{i % 7} and I like food{i}."
            t0 = time.perf_counter()
            out = graph.invoke({"messages": message, "user_id": user, "trace_id": trace_id}, config, context=ctx)
            total = (time.perf_counter() - t0) * 1000.0
            assert out["result"]["results"], out
            if i < warmup:
                continue
            totals.append(total)
            overheads.append(total - counter.model_ms)
            calls.append(counter.calls)
            tokens.append(counter.tokens)
            model_ms_all.append(counter.model_ms)
    finally:
        close_checkpointer(saver)
        services.close()
    q = statistics.quantiles(totals, n=10) if len(totals) >= 10 else [max(totals)] * 9
    return {
        "graph": "on" if graph_on else "off", "embeddings": embeddings, "existing": existing, "adds": adds,
        "preload_s": round(load_s, 1), "median_ms": round(statistics.median(totals), 1), "p90_ms": round(q[8], 1),
        "overhead_median_ms": round(statistics.median(overheads), 1), "model_ms_median": round(statistics.median(model_ms_all), 1),
        "calls_per_add": round(statistics.mean(calls), 2), "max_calls": max(calls), "tokens_per_add": round(statistics.mean(tokens)),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--existing", type=int, default=10_000, help="memories the user already has")
    p.add_argument("--adds", type=int, default=50, help="measured adds per case")
    p.add_argument("--graph", choices=["off", "on", "both"], default="both")
    p.add_argument("--embeddings", choices=["instant", "minilm", "both"], default="both")
    args = p.parse_args(argv)
    graphs = {"off": [False], "on": [True], "both": [False, True]}[args.graph]
    embs = {"instant": ["instant"], "minilm": ["minilm"], "both": ["instant", "minilm"]}[args.embeddings]
    rows = []
    for g in graphs:
        for e in embs:
            rows.append(run_case(existing=args.existing, adds=args.adds, graph_on=g, embeddings=e))
            print(rows[-1], file=sys.stderr)
    cols = ["graph", "embeddings", "existing", "adds", "median_ms", "p90_ms", "overhead_median_ms", "model_ms_median",
            "calls_per_add", "max_calls", "tokens_per_add", "preload_s"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(str(r[c]) for c in cols) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
