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
* bytes_per_point: the tables with their indexes (pgvector; hnsw_bytes_per_point: the HNSW index alone),
  the shard directories (edge).

At 300k+ points on a busy machine the API path (Python formats each vector's floats) is the slow part:
--api-points N writes N points through upsert_memories (load_per_s is their rate) and the rest as copies of
those rows with fresh vectors, inside PostgreSQL (sql_fill_per_s) or through the embedded store's upsert
primitive (primitive_fill_per_s). Progress, with the time and the load average, goes to stderr:

    nice -n 10 python3 bench/bench_pgvector.py --backends pgvector --points 1000000 --api-points 5000 \
        --users 10000 --maintenance-work-mem 3GB 2> progress.log
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
WORDS = ("coffee hiking Paris dog sister guitar marathon sushi Berlin novel garden piano budget doctor "
         "flight wedding school python camera yoga").split()


def make_batch(start: int, n: int, users: int, dims: int, seed: int = 7) -> list[dict]:
    """Points start..start+n-1, the same for the same arguments (seeded per batch), so 1M points never sit
    in memory at once (as Python lists they would take ~12 GB)."""
    rng = np.random.default_rng([seed, start])
    vecs = rng.standard_normal((n, dims)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return [{"id": str(uuid.UUID(int=(seed << 96) | i)), "vector": vecs[k].tolist(),
             "text": f"{WORDS[i % 20]} {WORDS[(i * 7) % 20]} {WORDS[(i * 13) % 20]} note {i}",
             "user_id": f"user{i % users}", "agent_id": "assistant", "metadata": {"n": i % 10}}
            for k, i in enumerate(range(start, start + n))]


def log(msg: str) -> None:
    """Progress on stderr with the time and load, so a run cut short still says how far it got and how fast."""
    print(f"[{time.strftime('%H:%M:%S')} load {os.getloadavg()[0]:.1f}] {msg}", file=sys.stderr, flush=True)


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


def queries(store, args) -> dict:
    from memoryx.core.scope import Scope

    users, n = args.users, args.queries
    rng = np.random.default_rng(11)
    qs = rng.standard_normal((n, args.dims)).astype(np.float32)
    qs = (qs / np.linalg.norm(qs, axis=1, keepdims=True)).tolist()
    user = timed(lambda i: store.search_memories(qs[i], Scope(user_id=f"user{i % users}"), limit=5), n)
    log(f"user-scope queries: p50 {pct(user, 0.5)} ms")
    large = timed(lambda i: store.search_memories(qs[i], Scope(agent_id="assistant"), limit=5), n)
    log(f"large-scope queries: p50 {pct(large, 0.5)} ms")
    kw = timed(lambda i: store.keyword_search(f"{WORDS[i % 20]} {WORDS[(i * 3) % 20]}",
                                              Scope(user_id=f"user{i % users}"), limit=5), n)
    return {"user_p50_ms": pct(user, 0.5), "user_p99_ms": pct(user, 0.99), "large_scope_p50_ms": pct(large, 0.5),
            "large_scope_p99_ms": pct(large, 0.99), "keyword_p50_ms": pct(kw, 0.5), "keyword_p99_ms": pct(kw, 0.99)}


def load(store, start: int, n: int, args, batch: int = 512) -> float:
    """Seconds spent in upsert_memories for points start..start+n-1 (generating them is not counted)."""
    spent, every = 0.0, max(batch, n // 10 // batch * batch)
    for i in range(start, start + n, batch):
        items = make_batch(i, min(batch, start + n - i), args.users, args.dims)
        t = time.perf_counter()
        store.upsert_memories(items)
        spent += time.perf_counter() - t
        done = i + len(items) - start
        if done % every < batch or done == n:
            log(f"loaded {done:,}/{n:,} ({round(done / spent)}/s)")
    return spent


def watch_build(url: str, stop: threading.Event) -> None:
    """Print CREATE INDEX's progress (pg_stat_progress_create_index) each minute: a build cut off by the
    clock still gives its rate."""
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    try:
        while not stop.wait(60):
            with engine.connect() as conn:
                row = conn.execute(sa.text("SELECT phase, tuples_done, tuples_total, blocks_done, blocks_total "
                                           "FROM pg_stat_progress_create_index")).first()
            if row:
                log(f"hnsw build: {row.phase} tuples {row.tuples_done:,}/{row.tuples_total:,} "
                    f"blocks {row.blocks_done:,}/{row.blocks_total:,}")
    finally:
        engine.dispose()


FILL_SQL = """
INSERT INTO {table} (pid, user_id, agent_id, run_id, group_id, embedding, terms, tfs, payload)
SELECT k.pid, 'user' || (g.i % CAST(:users AS int)), t.agent_id, t.run_id, t.group_id, v.e::vector({dims}), t.terms, t.tfs,
       t.payload || jsonb_build_object('id', k.pid::text, 'user_id', 'user' || (g.i % CAST(:users AS int)),
                                       'text', split_part(t.payload->>'text', ' note ', 1) || ' note ' || g.i,
                                       'metadata', jsonb_build_object('n', g.i % 10))
FROM generate_series(CAST(:lo AS int), CAST(:hi AS int)) AS g(i)
CROSS JOIN LATERAL (SELECT CAST('00000007-0000-0000-0000-' || lpad(to_hex(g.i), 12, '0') AS uuid) AS pid,
                           CAST('00000007-0000-0000-0000-' || lpad(to_hex(g.i % CAST(:k AS int)), 12, '0') AS uuid) AS tpl) k
JOIN {table} t ON t.pid = k.tpl
CROSS JOIN LATERAL (SELECT array_agg(random_normal()) AS e FROM generate_series(1, {dims}) WHERE g.i >= 0) v
"""


def fill(store, table: str, args, batch: int = 25_000) -> float:
    """Points api_points..points-1 written inside PostgreSQL (INSERT ... SELECT): each row a copy of an
    API-written row (i mod api_points: the same terms, term frequencies and payload shape as upsert_memories
    writes) with its own id, user, text number and a fresh random-normal vector. Python's per-float vector
    formatting caps the API path at a few hundred points/s on a loaded machine; this fills 1M rows in minutes
    so the index build and queries can be measured at that size. Returns its seconds."""
    import sqlalchemy as sa

    sql = sa.text(FILL_SQL.format(table=table, dims=args.dims))
    t, n = time.perf_counter(), args.points - args.api_points
    for lo in range(args.api_points, args.points, batch):
        hi = min(args.points, lo + batch) - 1
        with store.engine.begin() as conn:
            conn.execute(sql, {"users": args.users, "lo": lo, "hi": hi, "k": args.api_points})
        done = hi + 1 - args.api_points
        if done % (batch * 4) == 0 or done == n:
            log(f"filled {done:,}/{n:,} in SQL ({round(done / (time.perf_counter() - t))}/s)")
    return time.perf_counter() - t


def bench_pgvector(args, tmp: Path) -> dict:
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
        api = args.api_points = min(args.api_points or args.points, args.points)
        load_s = load(store, 0, api, args)
        out = {"backend": "pgvector", "points": args.points, "api_points": api, "load_per_s": round(api / load_s)}
        if api < args.points:
            out["sql_fill_per_s"] = round((args.points - api) / fill(store, table, args))
        log(json.dumps(out))
        stop = threading.Event()
        watcher = threading.Thread(target=watch_build, args=(url, stop), daemon=True)
        watcher.start()
        with store.engine.begin() as conn:
            conn.execute(sa.text(f"SET maintenance_work_mem = '{args.maintenance_work_mem}'"))
            workers = conn.execute(sa.text("SHOW max_parallel_maintenance_workers")).scalar()
            t = time.perf_counter()
            conn.execute(sa.text(f"CREATE INDEX {table}_hnsw ON {table} USING hnsw (embedding vector_cosine_ops)"))
            build_s = time.perf_counter() - t
            conn.execute(sa.text(f"ANALYZE {table}"))
        stop.set()
        out.update({"hnsw_build_s": round(build_s, 1), "hnsw_build_per_s": round(args.points / build_s),
                    "parallel_maintenance_workers": int(workers)})
        log(json.dumps(out))
        sizes = store.table_bytes()
        with store.engine.connect() as conn:
            hnsw = conn.execute(sa.text(f"SELECT pg_relation_size('{table}_hnsw')")).scalar()
        out.update({"bytes_per_point": round(sizes[table] / args.points), "hnsw_bytes_per_point": round(hnsw / args.points)})
        out.update(queries(store, args))
        insert_s = load(store, args.points, args.extra, args)
        out["insert_with_index_per_s"] = round(args.extra / insert_s)
        store.close()
        return out
    finally:
        server.cleanup()


def fill_edge(store, args, batch: int = 2048) -> float:
    """The embedded engine's counterpart of `fill`: points api_points..points-1 built from batches made like
    the API's (the same payload and term vector as upsert_memories would build, a fresh random vector) and
    handed to the store's upsert primitive, skipping the per-point Python work of validation and tokenising.
    Returns its seconds."""
    from memoryx.core.text import sparse_vector
    from memoryx.stores.vectors.base import DENSE, SPARSE, point_id

    t, n = time.perf_counter(), args.points - args.api_points
    for lo in range(args.api_points, args.points, batch):
        items = make_batch(lo, min(batch, args.points - lo), args.users, args.dims)
        pts = []
        for it in items:
            vectors = {DENSE: it["vector"]}
            ids, vals = sparse_vector(it["text"])
            if ids:
                vectors[SPARSE] = (ids, vals)
            pts.append(store._point(point_id(it["id"]), vectors, store._memory_payload(it)))
        store._upsert(store._memories, pts)
        done = lo + len(items) - args.api_points
        if done % (batch * 50) < batch or done == n:
            log(f"filled {done:,}/{n:,} through the upsert primitive ({round(done / (time.perf_counter() - t))}/s)")
    return time.perf_counter() - t


def bench_edge(args, tmp: Path) -> dict:
    from memoryx.stores.vectors import EdgeVectorStore

    store = EdgeVectorStore(tmp / "edge", args.dims, prefix="bench")
    api = args.api_points = min(args.api_points or args.points, args.points)
    load_s = load(store, 0, api, args)
    out = {"backend": "edge", "points": args.points, "api_points": api, "load_per_s": round(api / load_s)}
    if api < args.points:
        out["primitive_fill_per_s"] = round((args.points - api) / fill_edge(store, args))
    log(json.dumps(out))
    store.flush()
    du = int(subprocess.run(["du", "-sb", str(tmp / "edge" / "bench_memories")], capture_output=True,
                            text=True).stdout.split()[0])
    out["bytes_per_point"] = round(du / args.points)
    out.update(queries(store, args))
    insert_s = load(store, args.points, args.extra, args)
    out["insert_with_index_per_s"] = round(args.extra / insert_s)
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
    ap.add_argument("--api-points", type=int, default=0,
                    help="write only this many through upsert_memories (its rate is load_per_s) and the "
                         "rest inside PostgreSQL (pgvector) or through the store's upsert primitive (edge), "
                         "with fresh vectors (default: all through the API)")
    ap.add_argument("--maintenance-work-mem", default="1GB", help="PostgreSQL memory for the HNSW build")
    args = ap.parse_args()
    for backend in args.backends:
        tmp = Path(tempfile.mkdtemp(prefix="memoryx-bench-pgv-"))
        try:
            log(f"{backend}: {args.points:,} points, {args.users:,} users")
            fn = bench_pgvector if backend == "pgvector" else bench_edge
            print(json.dumps({**fn(args, tmp), "load_avg_1m": round(os.getloadavg()[0], 1)}), flush=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
