"""pgvector against the embedded engine at scale: load, index build, query rates and bytes per point, through
the stores' public methods (`PgVectorStore`, `EdgeVectorStore`).

    HF_HUB_OFFLINE=1 python3 bench/bench_pgvector.py --points 100000 --users 1000 --queries 300

Points are random unit vectors of 384 dimensions (MiniLM's size; HNSW cost depends on size and count, not on
where vectors come from) with a short text each (for BM25), spread over --users users, all under one agent
(so `Scope(agent_id=...)` is a scope as large as the table: the HNSW path). pgvector runs in a private
PostgreSQL 16 (pgserver, unix socket). Printed per backend, one JSON line each:

* load_per_s: points written per second through upsert_memories (pgvector: without the HNSW index, which
  is then built in one CREATE INDEX: hnsw_build_s; plus insert_with_index_per_s, a further batch written
  while the index is maintained, the rate of a live system);
* user_p50/p99_ms: top-5 dense search in one user's scope (exact within the scope on both backends);
  large_scope_p50/p99_ms: the same in the agent's scope (pgvector: HNSW, ef_search 400; edge: its
  appendable segments without optimize()); keyword_p50_ms: BM25 in one user's scope;
* bytes_per_point: the tables with their indexes (pgvector), the shard directories (edge).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
WORDS = ("coffee hiking Paris dog sister guitar marathon sushi Berlin novel garden piano budget doctor "
         "flight wedding school python camera yoga").split()


def make_points(n: int, users: int, dims: int, seed: int = 7) -> list[dict]:
    rng = np.random.default_rng(seed)
    vecs = rng.standard_normal((n, dims)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return [{"id": str(uuid.UUID(int=int(rng.integers(1 << 62)) << 64 | i)), "vector": vecs[i].tolist(),
             "text": f"{WORDS[i % 20]} {WORDS[(i * 7) % 20]} {WORDS[(i * 13) % 20]} note {i}",
             "user_id": f"user{i % users}", "agent_id": "assistant", "metadata": {"n": i % 10}}
            for i in range(n)]


def timed(fn, repeat: int) -> list[float]:
    out = []
    for i in range(repeat):
        t = time.perf_counter()
        fn(i)
        out.append(time.perf_counter() - t)
    return out


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return round(1000 * s[min(len(s) - 1, int(p * len(s)))], 2)


def queries(store, points: list[dict], users: int, n: int) -> dict:
    from memoryx.core.scope import Scope

    rng = np.random.default_rng(11)
    qs = [p["vector"] for p in rng.choice(points, size=n)]
    user = timed(lambda i: store.search_memories(qs[i], Scope(user_id=f"user{i % users}"), limit=5), n)
    large = timed(lambda i: store.search_memories(qs[i], Scope(agent_id="assistant"), limit=5), n)
    kw = timed(lambda i: store.keyword_search(f"{WORDS[i % 20]} {WORDS[(i * 3) % 20]}",
                                              Scope(user_id=f"user{i % users}"), limit=5), n)
    return {"user_p50_ms": pct(user, 0.5), "user_p99_ms": pct(user, 0.99), "large_scope_p50_ms": pct(large, 0.5),
            "large_scope_p99_ms": pct(large, 0.99), "keyword_p50_ms": pct(kw, 0.5), "keyword_p99_ms": pct(kw, 0.99)}


def load(store, points: list[dict], batch: int = 512) -> float:
    t = time.perf_counter()
    for i in range(0, len(points), batch):
        store.upsert_memories(points[i:i + batch])
    return time.perf_counter() - t


def bench_pgvector(points, extra, args, tmp: Path) -> dict:
    import pgserver
    import sqlalchemy as sa

    from memoryx.stores.vectors import PgVectorStore

    root = tmp / "pg"
    root.mkdir()
    server = pgserver.get_server(root, cleanup_mode="stop")
    try:
        url = f"postgresql+psycopg://postgres@/postgres?host={root}"
        store = PgVectorStore(url, args.dims, prefix="bench")
        table = "bench_vec_memories"
        with store.engine.begin() as conn:
            conn.execute(sa.text(f"DROP INDEX {table}_hnsw"))  # bulk load first, then one index build
        load_s = load(store, points)
        with store.engine.begin() as conn:
            conn.execute(sa.text(f"SET maintenance_work_mem = '{args.maintenance_work_mem}'"))
            t = time.perf_counter()
            conn.execute(sa.text(f"CREATE INDEX {table}_hnsw ON {table} USING hnsw (embedding vector_cosine_ops)"))
            build_s = time.perf_counter() - t
            conn.execute(sa.text(f"ANALYZE {table}"))
        insert_s = load(store, extra)
        out = {"backend": "pgvector", "points": len(points), "load_per_s": round(len(points) / load_s),
               "hnsw_build_s": round(build_s, 1), "hnsw_build_per_s": round(len(points) / build_s),
               "insert_with_index_per_s": round(len(extra) / insert_s), **queries(store, points, args.users, args.queries)}
        sizes = store.table_bytes()
        out["bytes_per_point"] = round(sizes["bench_vec_memories"] / (len(points) + len(extra)))
        store.close()
        return out
    finally:
        server.cleanup()


def bench_edge(points, extra, args, tmp: Path) -> dict:
    from memoryx.stores.vectors import EdgeVectorStore

    store = EdgeVectorStore(tmp / "edge", args.dims, prefix="bench")
    load_s = load(store, points)
    insert_s = load(store, extra)
    out = {"backend": "edge", "points": len(points), "load_per_s": round(len(points) / load_s),
           "insert_with_index_per_s": round(len(extra) / insert_s), **queries(store, points, args.users, args.queries)}
    store.flush()
    du = int(subprocess.run(["du", "-sb", str(tmp / "edge" / "bench_memories")], capture_output=True,
                            text=True).stdout.split()[0])
    out["bytes_per_point"] = round(du / (len(points) + len(extra)))
    store.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--points", type=int, default=100_000)
    ap.add_argument("--extra", type=int, default=5_000, help="points written after the index exists")
    ap.add_argument("--users", type=int, default=1_000)
    ap.add_argument("--dims", type=int, default=384)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--backends", nargs="+", default=["pgvector", "edge"])
    ap.add_argument("--maintenance-work-mem", default="1GB", help="PostgreSQL memory for the HNSW build")
    args = ap.parse_args()
    allp = make_points(args.points + args.extra, args.users, args.dims)
    points, extra = allp[:args.points], allp[args.points:]
    for backend in args.backends:
        tmp = Path(tempfile.mkdtemp(prefix="memoryx-bench-pgv-"))
        try:
            fn = bench_pgvector if backend == "pgvector" else bench_edge
            print(json.dumps({**fn(points, extra, args, tmp), "load_avg_1m": round(os.getloadavg()[0], 1)}),
                  flush=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
