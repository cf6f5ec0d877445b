"""Add overhead through the public API (`Memory.add`): latency, model calls, tokens and SQL statements per add.

    python bench/bench_add.py                          # the full size: 10,000 existing memories
    python bench/bench_add.py --existing 10000 --adds 50 --graph both --embeddings both

Setup: `Memory` on the embedded defaults (SQLite system of record + its checkpointer, Qdrant edge shard,
FalkorDB for "graph on"), one user who already has N memories (default 10,000), written through
`Memory.add_many(infer=False)`. Each measured add is `Memory.add("I live in CityK and I like foodK",
user_id=...)`: most adds UPDATE the home and ADD a like. The chat model is the offline rule-based model
(deterministic, ~1 ms: an instant fake model); its own time is measured inside the model and subtracted to
give the overhead (everything but model latency: embeddings, stores, graph, checkpoints).

Embeddings: "minilm" = the real local all-MiniLM-L6-v2 (CPU); "instant" = a hashed bag-of-words embedding
(<0.1 ms) to isolate the pipeline from the embedding model. Both are reported.

SQL statements per add: every statement the SQL store's SQLAlchemy engines send (a `before_cursor_execute`
listener), with the transactions (BEGIN) counted apart; the checkpointer's own SQLite connection is not
SQLAlchemy: its writes (SqliteSaver.put / put_writes, one commit each) are counted apart, with their time.

overhead_cpu_ms: the process's CPU time per add (all threads, the model's own time subtracted): steadier than
wall time on a shared machine, where waiting for a core inflates the wall clock. The embedded FalkorDB is
another process and not in it.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")
# torch's OpenMP threads spin after each call; next to langgraph's worker threads on 2 cores that made a
# 20 ms MiniLM call take 200+ ms inside the graph. PASSIVE makes them sleep (see the report to the lead).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from langchain_core.embeddings import Embeddings  # noqa: E402
from sqlalchemy import event  # noqa: E402

from memoryx.models.offline import OfflineChatModel  # noqa: E402


class InstantEmbeddings(Embeddings):
    """Hashed bag of words, 384 dims, L2-normalised: deterministic and ~free (isolates the pipeline)."""

    dims = 384

    def _one(self, text: str) -> list[float]:
        from memoryx.core.text import tokenize

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


class TimedOffline(OfflineChatModel):
    """The offline model, counting its calls, tokens and own time (thread-safe enough: adds run one by one)."""

    def model_post_init(self, __context: Any) -> None:
        self.reset()

    def reset(self) -> None:
        object.__setattr__(self, "stats", {"calls": 0, "tokens": 0, "ms": 0.0})

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        t = time.perf_counter()
        out = super()._generate(messages, stop, run_manager, **kwargs)
        self.stats["ms"] += (time.perf_counter() - t) * 1000.0
        self.stats["calls"] += 1
        self.stats["tokens"] += int((out.generations[0].message.usage_metadata or {}).get("total_tokens") or 0)
        return out


class CheckpointCounter:
    """Checkpoint writes (SqliteSaver.put / put_writes: one commit each) and the time spent in them."""

    def __init__(self):
        from langgraph.checkpoint.sqlite import SqliteSaver

        self.calls, self.ms = 0, 0.0
        for name in ("put", "put_writes"):
            real = getattr(SqliteSaver, name)

            def timed(saver, *a, _real=real, **k):
                t = time.perf_counter()
                try:
                    return _real(saver, *a, **k)
                finally:
                    self.calls += 1
                    self.ms += (time.perf_counter() - t) * 1000.0
            setattr(SqliteSaver, name, timed)


class SQLCounter:
    """Statements sent through the SQL store's engines, by first keyword (BEGIN: one per write transaction)."""

    def __init__(self, engine):
        self.by_kind: collections.Counter = collections.Counter()
        event.listen(engine, "before_cursor_execute", self._on)

    def _on(self, conn, cursor, statement, parameters, context, executemany):
        self.by_kind[statement.lstrip().split(None, 1)[0].upper()] += 1


def run_case(*, existing: int, adds: int, graph_on: bool, embeddings: str, warmup: int = 3) -> dict:
    from memoryx import Memory

    data = Path(tempfile.mkdtemp(prefix="memoryx-bench-"))
    model = TimedOffline()
    emb = InstantEmbeddings() if embeddings == "instant" else None
    user = "bench-user"
    topics = ["hiking", "jazz", "tea", "chess", "painting", "cycling", "movies", "cooking", "poetry", "yoga"]
    totals, overheads, cpus, calls, tokens, model_ms_all, sql = [], [], [], [], [], [], []
    kinds: collections.Counter = collections.Counter()
    checkpoints = CheckpointCounter()
    cp_calls, cp_ms = [], []
    try:
        with Memory(data_dir=data, graph_backend="falkordb" if graph_on else "none", llm=model, embeddings=emb) as m:
            t = time.perf_counter()
            m.add_many([{"messages": f"User noted item {i} about {topics[i % 10]} and project{i % 397}", "user_id": user}
                        for i in range(existing)], infer=False)
            load_s = time.perf_counter() - t
            counter = SQLCounter(m.services.sql.engine)
            for i in range(warmup + adds):
                model.reset()
                before = collections.Counter(counter.by_kind)
                cp0 = (checkpoints.calls, checkpoints.ms)
                t0, c0 = time.perf_counter(), time.process_time()
                out = m.add(f"I live in City{i % 7} and I like food{i}.", user_id=user)
                total = (time.perf_counter() - t0) * 1000.0
                cpu = (time.process_time() - c0) * 1000.0
                assert out["results"], out
                if i < warmup:
                    continue
                delta = counter.by_kind - before
                kinds.update(delta)
                sql.append(sum(delta.values()))
                totals.append(total)
                overheads.append(total - model.stats["ms"])
                cpus.append(cpu - model.stats["ms"])
                calls.append(model.stats["calls"])
                tokens.append(model.stats["tokens"])
                model_ms_all.append(model.stats["ms"])
                cp_calls.append(checkpoints.calls - cp0[0])
                cp_ms.append(checkpoints.ms - cp0[1])
    finally:
        shutil.rmtree(data, ignore_errors=True)
    q = statistics.quantiles(totals, n=10) if len(totals) >= 10 else [max(totals)] * 9
    return {
        "graph": "on" if graph_on else "off", "embeddings": embeddings, "existing": existing, "adds": adds,
        "preload_s": round(load_s, 1), "median_ms": round(statistics.median(totals), 1), "p90_ms": round(q[8], 1),
        "overhead_median_ms": round(statistics.median(overheads), 1),
        "overhead_cpu_ms": round(statistics.median(cpus), 1), "model_ms_median": round(statistics.median(model_ms_all), 1),
        "calls_per_add": round(statistics.mean(calls), 2), "max_calls": max(calls), "tokens_per_add": round(statistics.mean(tokens)),
        "sql_per_add": round(statistics.mean(sql) - kinds["BEGIN"] / len(sql), 1),
        "transactions_per_add": round(kinds["BEGIN"] / len(sql), 1),
        "checkpoint_writes_per_add": round(statistics.mean(cp_calls), 1),
        "checkpoint_ms_per_add": round(statistics.median(cp_ms), 1),
        "sql_kinds_per_add": {k: round(v / len(sql), 1) for k, v in kinds.most_common()},
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--existing", type=int, default=10_000, help="memories the user already has")
    p.add_argument("--adds", type=int, default=50, help="measured adds per case")
    p.add_argument("--graph", choices=["off", "on", "both"], default="both")
    p.add_argument("--embeddings", choices=["instant", "minilm", "both"], default="both")
    args = p.parse_args(argv)
    print("parameters: " + str(vars(args)), flush=True)
    graphs = {"off": [False], "on": [True], "both": [False, True]}[args.graph]
    embs = {"instant": ["instant"], "minilm": ["minilm"], "both": ["instant", "minilm"]}[args.embeddings]
    rows = []
    for g in graphs:
        for e in embs:
            rows.append(run_case(existing=args.existing, adds=args.adds, graph_on=g, embeddings=e))
            print(rows[-1], file=sys.stderr)
    cols = ["graph", "embeddings", "existing", "adds", "median_ms", "p90_ms", "overhead_median_ms", "overhead_cpu_ms", "model_ms_median",
            "calls_per_add", "max_calls", "tokens_per_add", "sql_per_add", "transactions_per_add",
            "checkpoint_writes_per_add", "checkpoint_ms_per_add", "preload_s"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(str(r[c]) for c in cols) + " |")
    for r in rows:
        print(f"SQL statements per add, graph {r['graph']}, {r['embeddings']}: {r['sql_kinds_per_add']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
