"""Bulk ingest through the public API: `Memory.add_many(items, infer=False)` with the real MiniLM embeddings.

    HF_HUB_OFFLINE=1 python3 bench/bench_bulk.py --memories 10000 --users 100 [--runtime torch]
    HF_HUB_OFFLINE=1 python3 bench/bench_bulk.py --memories 5000 --users 50 --overlap both   # A/B, one process

    HF_HUB_OFFLINE=1 python3 bench/bench_bulk.py --memories 5000 --users 50 --backend pgvector

Prints memories/s end to end beside the bare encoder's rate on the same texts in the same chunks
(`encoder_per_s`, measured first in the same process; `of_encoder` is the ratio), and the time spent
embedding (the rest is SQL, locks and the vector upsert), so a slow figure on a loaded machine can be told
apart from overhead. With --backend pgvector it also prints the bytes per memory of the system of record
and of the vectors in PostgreSQL.
The encoder is the settings' one (MEMORYX_EMBEDDING_RUNTIME, default auto = ONNX Runtime); its ONNX cache
is MEMORYX_EMBEDDING_CACHE_DIR when set, else built once in the run's temporary data dir before timing.

--overlap: `on` (the default, what add_many does) embeds chunk k+1 on a helper thread while chunk k is
written; `off` embeds and writes one after the other; `both` runs off then on then off then on, each in a
fresh data dir of the same process (same warm encoder), so the two are compared under the same load.
Without overlap, `without_embedding_per_s` is the writer's own rate; with it, embedding and writing share
the wall time and only memories/s is meaningful.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def make_items(memories: int, users: int, per_item: int) -> list[dict]:
    return [{"messages": [{"role": "user", "content": f"turn {i}.{j}: I went hiking on trail {i % 97} with my dog "
                           f"number {i % 13} and we saw {j + i % 7} birds"} for j in range(per_item)],
             "user_id": f"user{i % users}"} for i in range(memories // per_item)]


def encoder_rate(emb, items: list[dict], chunk: int) -> float:
    """The bare encoder on the same texts, in add_many's chunks: the ceiling add_many is measured against."""
    texts = [m["content"] for it in items for m in it["messages"]]
    start = time.perf_counter()
    for i in range(0, len(texts), chunk):
        emb.embed_documents(texts[i:i + chunk])
    return len(texts) / (time.perf_counter() - start)


def store_options(backend: str, pg_root) -> dict:
    if backend == "edge":
        return {}
    import psycopg

    db = f"bulk_{int(time.time() * 1000)}"
    with psycopg.connect(f"postgresql://postgres@/postgres?host={pg_root}", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{db}"')
    with psycopg.connect(f"postgresql://postgres@/{db}?host={pg_root}", autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vector")
    return {"sql_url": f"postgresql+psycopg://postgres@/{db}?host={pg_root}", "vector_backend": "pgvector"}


def sql_bytes(m) -> dict:
    """Bytes on disk of the system of record's tables and of the vectors (PostgreSQL only)."""
    import sqlalchemy as sa

    engine = m.services.sql.engine
    with engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT relname, pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n "
                                    "ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'")).all()
    vec = sum(b for name, b in rows if "_vec_" in name)
    return {"vector_bytes": vec, "sql_bytes": sum(b for name, b in rows if "_vec_" not in name)}


def run_once(items: list[dict], runtime: str | None, overlap: bool, backend: str = "edge", pg_root=None) -> dict:
    from memoryx import Memory
    from memoryx.ingest import bulk

    bulk.RawIngest.overlap = overlap
    with tempfile.TemporaryDirectory() as data_dir, \
            Memory(data_dir=data_dir, graph_backend="none", llm="offline", checkpointer="none",
                   **store_options(backend, pg_root), **({"embedding_runtime": runtime} if runtime else {})) as m:
        emb = m.services.embeddings
        emb.embed_documents(["warm up"])
        bare = encoder_rate(emb, items, m.settings.bulk_chunk_size)
        spent = [0.0]
        real = emb.embed_documents

        def timed(texts):
            t = time.perf_counter()
            try:
                return real(texts)
            finally:
                spent[0] += time.perf_counter() - t

        emb.embed_documents = timed  # instance attribute: measures the embedding time only
        start, cpu = time.perf_counter(), time.process_time()
        results = m.add_many(items, infer=False)
        total, cpu = time.perf_counter() - start, time.process_time() - cpu
        written = sum(len(r["results"]) for r in results)
        out = {"backend": backend, "runtime": emb.runtime, "overlap": overlap, "memories": written,
               "seconds": round(total, 2), "memories_per_s": round(written / total),
               "encoder_per_s": round(bare), "of_encoder": round(written / total / bare, 2),
               "process_cpu_s": round(cpu, 2), "embedding_s": round(spent[0], 2),
               "failed_items": sum("error" in r for r in results)}
        if backend == "pgvector":
            sizes = sql_bytes(m)
            out.update({k.replace("_bytes", "_bytes_per_memory"): round(v / max(1, written)) for k, v in sizes.items()})
        if not overlap:
            out.update(embedding_share=round(spent[0] / total, 2),
                       without_embedding_per_s=round(written / max(1e-9, total - spent[0])))
        return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--users", type=int, default=100)
    ap.add_argument("--per-item", type=int, default=1, help="messages per item")
    ap.add_argument("--runtime", choices=["auto", "onnx", "torch"], default=None,
                    help="embedding runtime (default: the settings' embedding_runtime)")
    ap.add_argument("--overlap", choices=["on", "off", "both"], default="on")
    ap.add_argument("--backend", choices=["edge", "pgvector"], default="edge",
                    help="edge: SQLite + the embedded engine; pgvector: PostgreSQL + pgvector (a private pgserver)")
    args = ap.parse_args()
    items = make_items(args.memories, args.users, args.per_item)
    plan = {"on": [True], "off": [False], "both": [False, True, False, True]}[args.overlap]
    pg_root, server = None, None
    if args.backend == "pgvector":
        import pgserver

        pg_root = tempfile.mkdtemp(prefix="memoryx-bulk-pg-")
        server = pgserver.get_server(pg_root, cleanup_mode="stop")
    try:
        for overlap in plan:
            print(json.dumps(run_once(items, args.runtime, overlap, args.backend, pg_root)), flush=True)
    finally:
        if server is not None:
            server.cleanup()
            shutil.rmtree(pg_root, ignore_errors=True)


if __name__ == "__main__":
    main()
