"""Benchmark of the embedded vector store (qdrant-edge): bulk ingest and scope-filtered top-5 search.

    python bench/bench_vectors.py --n 100000 --users 1000 --queries 2000

Data: N memories spread round-robin over U users, random L2-normalised 384-d vectors (numpy, generated
before timing), short synthetic texts (so the sparse keyword vector is built too), small metadata.
Timed: `EdgeVectorStore.upsert_memories` in batches (payload + sparse vector building included), the final
flush, top-5 dense search filtered by user_id (query vectors precomputed: no embedding time), keyword (BM25)
search filtered by user_id, dense search with an extra metadata filter, and reopening the store.
Targets: ingest >= 2,000 memories/s; filtered top-5 search p99 <= 5 ms.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

from memoryx.core.filters import parse_filters
from memoryx.core.scope import Scope
from memoryx.stores.vectors import EdgeVectorStore

WORDS = ("coffee tea paris berlin tokyo doctor nurse teacher football guitar piano sushi pasta hiking "
         "running dog cat sister brother wedding birthday project deadline meeting book movie music "
         "garden car bike train flight hotel beach mountain river 北京 上海 咖啡 音乐 電車 旅行").split()


def percentile(sorted_ms: list[float], p: float) -> float:
    if not sorted_ms:
        return float("nan")
    k = (len(sorted_ms) - 1) * p / 100.0
    lo, hi = int(k), min(int(k) + 1, len(sorted_ms) - 1)
    return sorted_ms[lo] + (sorted_ms[hi] - sorted_ms[lo]) * (k - lo)


def time_queries(fn, args_list) -> dict:
    for a in args_list[: min(50, len(args_list))]:  # warm-up (page cache, lazy structures)
        fn(*a)
    lat = []
    t0 = time.perf_counter()
    for a in args_list:
        s = time.perf_counter_ns()
        fn(*a)
        lat.append((time.perf_counter_ns() - s) / 1e6)
    wall = time.perf_counter() - t0
    lat.sort()
    return {"n": len(lat), "p50": percentile(lat, 50), "p95": percentile(lat, 95), "p99": percentile(lat, 99),
            "max": lat[-1], "mean": statistics.fmean(lat), "qps": len(lat) / wall}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100_000, help="memories to ingest")
    ap.add_argument("--users", type=int, default=1_000, help="distinct user_ids")
    ap.add_argument("--queries", type=int, default=2_000, help="timed queries per search kind")
    ap.add_argument("--dims", type=int, default=384)
    ap.add_argument("--batch", type=int, default=1_000, help="memories per upsert_memories call")
    ap.add_argument("--limit", type=int, default=5, help="top-k")
    ap.add_argument("--path", type=Path, default=None, help="store directory (default: a temp dir, removed)")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    random.seed(args.seed)
    print(f"preparing {args.n:,} memories x {args.dims} dims over {args.users:,} users ...", file=sys.stderr)
    vecs = rng.standard_normal((args.n, args.dims), dtype=np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    t_base = datetime(2024, 1, 1, tzinfo=timezone.utc)
    items = []
    for i in range(args.n):
        words = random.sample(WORDS, 6)
        items.append({
            "id": str(uuid.uuid4()),
            "vector": vecs[i],
            "text": f"user likes {words[0]} and {words[1]}, talked about {words[2]} {words[3]} {words[4]} {words[5]}",
            "user_id": f"user-{i % args.users}",
            "memory_type": "fact" if i % 3 else "episodic",
            "category": words[0],
            "importance": 0.5,
            "created_at": (t_base + timedelta(minutes=i)).isoformat(),
            "metadata": {"source": "bench", "n": i % 10},
        })
    qvecs = rng.standard_normal((args.queries, args.dims), dtype=np.float32)
    qvecs /= np.linalg.norm(qvecs, axis=1, keepdims=True)
    qlists = qvecs.tolist()
    scopes = [Scope(user_id=f"user-{random.randrange(args.users)}") for _ in range(args.queries)]

    tmp = None
    path = args.path
    if path is None:
        tmp = tempfile.mkdtemp(prefix="memoryx-bench-")
        path = Path(tmp) / "qdrant"
    try:
        t0 = time.perf_counter()
        store = EdgeVectorStore(path, args.dims, prefix="bench")
        t_open = time.perf_counter() - t0

        t0 = time.perf_counter()
        for i in range(0, args.n, args.batch):
            store.upsert_memories(items[i : i + args.batch])
        t_ingest = time.perf_counter() - t0
        t0 = time.perf_counter()
        store.flush()
        t_flush = time.perf_counter() - t0
        count = store.count_memories()
        assert count == args.n, (count, args.n)

        dense = time_queries(lambda q, s: store.search_memories(q, s, limit=args.limit), list(zip(qlists, scopes)))
        flt = parse_filters({"memory_type": "fact", "n": {"gte": 3}})
        dense_f = time_queries(lambda q, s: store.search_memories(q, s, limit=args.limit, filters=flt),
                               list(zip(qlists, scopes)))
        kw_queries = [" ".join(random.sample(WORDS, 2)) for _ in range(args.queries)]
        kw = time_queries(lambda t, s: store.keyword_search(t, s, limit=args.limit), list(zip(kw_queries, scopes)))
        hits = store.search_memories(qlists[0], scopes[0], limit=args.limit)
        assert hits and all(h.payload["user_id"] == scopes[0].user_id for h in hits)

        t0 = time.perf_counter()
        store.close()
        t_close = time.perf_counter() - t0
        t0 = time.perf_counter()
        store = EdgeVectorStore(path, args.dims, prefix="bench")
        reopened = store.count_memories()
        t_reopen = time.perf_counter() - t0
        store.close()

        ingest_rate = args.n / t_ingest
        print()
        print(f"EdgeVectorStore (qdrant-edge-py), {args.n:,} memories, {args.users:,} users, {args.dims} dims, "
              f"batch {args.batch}, top-{args.limit}, {args.queries:,} queries per kind")
        print(f"{'measure':<54} {'value':>12}  {'target':>10}")
        print("-" * 80)

        def line(name, value, target=""):
            print(f"{name:<54} {value:>12}  {target:>10}")

        line("open/create store (s)", f"{t_open:.3f}")
        line("bulk ingest (memories/s)", f"{ingest_rate:,.0f}", ">= 2,000")
        line("bulk ingest total (s)", f"{t_ingest:.2f}")
        line("flush (s)", f"{t_flush:.2f}")
        line("ingest incl. flush (memories/s)", f"{args.n / (t_ingest + t_flush):,.0f}")
        for name, r, target in (("dense top-k, user filter", dense, "<= 5 ms"),
                                ("dense top-k, user + metadata filter", dense_f, ""),
                                ("keyword BM25 top-k, user filter", kw, "")):
            line(f"{name}: p50 (ms)", f"{r['p50']:.3f}")
            line(f"{name}: p95 (ms)", f"{r['p95']:.3f}")
            line(f"{name}: p99 (ms)", f"{r['p99']:.3f}", target)
            line(f"{name}: max (ms)", f"{r['max']:.3f}")
            line(f"{name}: QPS (1 thread)", f"{r['qps']:,.0f}")
        line("close (s)", f"{t_close:.3f}")
        line(f"reopen + count ({reopened:,} points) (s)", f"{t_reopen:.3f}")
        ok = ingest_rate >= 2000 and dense["p99"] <= 5.0
        print("-" * 80)
        print("targets met" if ok else "TARGETS MISSED")
        return 0 if ok else 1
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
