"""The production twins under the same workloads, through the public API: PostgreSQL as the system of record,
Qdrant through `QdrantVectorStore` (the client's local mode here; a server in production) and the graph over
Bolt (the Neo4j path; here FalkorDB's Bolt endpoint on 127.0.0.1 stands in for Neo4j).

    HF_HUB_OFFLINE=1 python3 bench/bench_production.py                         # 100,000 memories / 1,000 users
    HF_HUB_OFFLINE=1 python3 bench/bench_production.py --users 100 --per-user 100  # 10,000
    HF_HUB_OFFLINE=1 python3 bench/bench_production.py --users 10 --per-user 10 --adds 5 --queries 20  # smoke

Twins, selected the way a deployment selects them (settings, i.e. MEMORYX_* variables):

* `sql_url=postgresql+psycopg://postgres@127.0.0.1:5432/memoryx_bench`: a database this bench creates and
  drops (refused if it already exists, unless `--reuse-db`), with the add graph's checkpointer on it too
  (`checkpointer=auto`). `--sql sqlite` puts SQLite back for a side-by-side.
* `vector_backend=qdrant`, `qdrant_url=:memory:` (or `--qdrant-path DIR`): `QdrantServerVectorStore` over
  `QdrantClient` local mode. Local mode is Qdrant's pure-Python test engine: every search evaluates the
  payload filter in Python on every point of the collection (py-spy at 10k memories: ~98% of a search in
  qdrant_client/local's `calculate_payload_mask`), so its add and search figures measure that engine, not
  MemoryX or a Qdrant server (no server binary on this machine). `--vectors edge` puts the embedded engine
  back, which isolates what PostgreSQL and Bolt cost.
* `graph_backend=neo4j`, `neo4j_url=bolt://127.0.0.1:PORT`: `BoltTransport` (langchain-neo4j's driver)
  against an embedded FalkorDB this bench starts with its Bolt endpoint open (test-only; MemoryX never opens
  Bolt itself). `--graph native` uses the embedded FalkorDB over its native protocol, `--graph none` no graph.

Workloads (the same as bench_bulk / bench_add / bench_search):

1. ingest: `users x per_user` memories through `Memory.add_many(infer=False)` in calls of 5,000 items,
   one user after another (`--order interleaved`: round-robin) -> memories/s. Then a small graph per user (entities and relations written through
   the SQL store and projected: setup only, as in bench_search).
2. add: `Memory.add("I live in CityK and I like foodK", user_id=...)` on a user who already has `per_user`
   memories, with the offline rule-based model as an instant scripted model (its own time measured inside
   the model and subtracted: "overhead") -> p50 / p90 and overhead p50.
3. search: `Memory.search(q, user_id=random user, limit=10)` with the defaults, distinct queries (half
   name one of the user's entities so the graph path runs) -> p50 / p90 / p99.

Embeddings: `--embeddings instant` (default: the hashed bag-of-words of bench_add, ~0.05 ms, so that 100k
memories ingest in minutes and the figures show the stores, not the encoder) or `minilm` (the real
all-MiniLM-L6-v2; ingest is then bounded by the encoder, ~230/s on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see bench_add.py

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_add import InstantEmbeddings, TimedOffline  # noqa: E402
from bench_search import NAMES, PLACES, RELATIONS, make_queries, percentile, sentence  # noqa: E402

PG_ADMIN = os.environ.get("MEMORYX_BENCH_PG_ADMIN", "postgresql://postgres@127.0.0.1:5432/postgres")
DB_NAME = "memoryx_bench"


# --- the twins ------------------------------------------------------------------------------------------
def create_database(admin: str, name: str, reuse: bool) -> str:
    import psycopg

    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if exists and not reuse:
            raise SystemExit(f"database {name!r} already exists (an earlier run that did not finish?); drop it "
                             f"(DROP DATABASE {name} WITH (FORCE)) or pass --reuse-db / --db-name")
        if exists:
            conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    base = admin.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://", 1)
    return f"{base}/{name}"


def drop_database(admin: str, name: str) -> None:
    import psycopg

    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def twin_settings(args, data_dir: Path, sql_url: str | None, bolt_url: str | None) -> dict:
    """The settings a deployment would put in MEMORYX_* variables."""
    s: dict = {"data_dir": data_dir}
    if sql_url:
        s["sql_url"] = sql_url
    if args.vectors == "qdrant-local":
        s["vector_backend"] = "qdrant"
        s["qdrant_url"] = str(args.qdrant_path) if args.qdrant_path else ":memory:"
    if args.graph == "bolt":
        s["graph_backend"] = "neo4j"
        s["neo4j_url"] = bolt_url
        # FalkorDB's Bolt endpoint has no authentication: an empty user and password is how langchain-neo4j
        # is told so (the default user 'neo4j' with an empty password is refused before connecting)
        s["neo4j_username"] = s["neo4j_password"] = ""
    elif args.graph == "none":
        s["graph_backend"] = "none"
    return s


# --- workloads ------------------------------------------------------------------------------------------
def ingest(memory, args, rng: random.Random) -> tuple[list[str], dict[str, list[str]], float]:
    """add_many(infer=False) of users x per_user memories; returns (users, memory ids per user, memories/s)."""
    total = args.users * args.per_user
    pool = sorted({sentence(rng) for _ in range(4500)})[:1500]
    users = [f"bench-user-{u:04d}" for u in range(args.users)]
    ids: dict[str, list[str]] = {u: [] for u in users}
    chunk: list[dict] = []
    t0 = time.perf_counter()
    for n in range(total):  # numbered so the texts are distinct
        user = users[n % args.users] if args.order == "interleaved" else users[n // args.per_user]
        chunk.append({"messages": f"{pool[rng.randrange(len(pool))]} (note {n})", "user_id": user,
                      "metadata": {"topic": rng.choice(["home", "work", "travel"])}})
        if len(chunk) == args.chunk or n == total - 1:
            for item, res in zip(chunk, memory.add_many(chunk, infer=False)):
                if "error" in res:  # a figure over a partial store would mislead: stop
                    raise SystemExit(f"add_many failed for an item: {res['error']}")
                ids[item["user_id"]].extend(r["id"] for r in res["results"])
            chunk = []
            done = n + 1
            if done % 20_000 < args.chunk or done == total:
                el = time.perf_counter() - t0
                print(f"  ingested {done:,} / {total:,} ({done / el:.0f}/s)", file=sys.stderr, flush=True)
    return users, ids, total / (time.perf_counter() - t0)


def build_graphs(memory, args, users, ids, rng: random.Random) -> tuple[dict[str, list[str]], float]:
    """A small graph per user through the SQL store and the projector (setup, not timed as a workload)."""
    from memoryx.core.scope import Scope

    services = memory.services
    entities: dict[str, list[str]] = {}
    ent_batch, rel_batch = [], []
    t0 = time.perf_counter()
    for n_user, u in enumerate(users, 1):
        scope = Scope(user_id=u)
        names = rng.sample(NAMES, min(args.entities_per_user - 2, len(NAMES))) + rng.sample(PLACES, 2)
        ents = [services.sql.upsert_entity(scope=scope, name=n, entity_type="entity") for n in names]
        ent_batch.extend(e["id"] for e in ents)
        for _ in range(args.relations_per_user):
            a, b = rng.sample(ents, 2)
            rel_batch.append(services.sql.add_relation(scope=scope, source_id=a["id"], relation=rng.choice(RELATIONS),
                                                       target_id=b["id"], memory_id=rng.choice(ids[u]), trace_id=None))
        entities[u] = names
        if n_user % 100 == 0 or n_user == len(users):
            services.projector.sync_entities(ent_batch)
            if services.graph is not None:
                services.projector.sync_relations(rel_batch)
            ent_batch, rel_batch = [], []
    return entities, time.perf_counter() - t0


def time_adds(memory, model: TimedOffline, user: str, adds: int, warmup: int = 3) -> dict:
    totals, overheads = [], []
    for i in range(warmup + adds):
        model.reset()
        t0 = time.perf_counter()
        out = memory.add(f"I live in City{i % 7} and I like food{i}.", user_id=user)
        ms = (time.perf_counter() - t0) * 1000.0
        if not out.get("results"):
            raise SystemExit(f"add returned no results: {out}")
        if i >= warmup:
            totals.append(ms)
            overheads.append(ms - model.stats["ms"])
    return {"add_p50_ms": percentile(totals, 50), "add_p90_ms": percentile(totals, 90),
            "add_overhead_p50_ms": percentile(overheads, 50), "adds": adds}


def time_searches(memory, queries, warmup: int) -> dict:
    from memoryx.search.access import flush_access

    lat, graph_hits = [], 0
    for i, (u, q) in enumerate(queries):
        t0 = time.perf_counter()
        out = memory.search(q, user_id=u, limit=10)
        ms = (time.perf_counter() - t0) * 1000.0
        if i < warmup:
            continue
        lat.append(ms)
        graph_hits += any("graph" in (r.get("sources") or []) for r in out["results"])
    flush_access()
    return {"search_p50_ms": percentile(lat, 50), "search_p90_ms": percentile(lat, 90),
            "search_p99_ms": percentile(lat, 99), "search_mean_ms": statistics.fmean(lat),
            "queries": len(lat), "queries_with_graph_hits": graph_hits}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--users", type=int, default=1000)
    ap.add_argument("--per-user", type=int, default=100)
    ap.add_argument("--chunk", type=int, default=5000, help="items per add_many call")
    ap.add_argument("--order", choices=["by-user", "interleaved"], default="by-user",
                    help="by-user: one user's memories after another's (an export per user); interleaved: users "
                         "round-robin, so each bulk chunk (MEMORYX_BULK_CHUNK_SIZE=256 items) spans up to 256 users. "
                         "On PostgreSQL, add_many takes one advisory-lock connection per user of a chunk: "
                         "interleaved with more users than max_connections (100 by default) allows fails with "
                         "'too many clients' (reported; see the README's Numbers)")
    ap.add_argument("--entities-per-user", type=int, default=6)
    ap.add_argument("--relations-per-user", type=int, default=8)
    ap.add_argument("--adds", type=int, default=30, help="timed single adds with the instant scripted model")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--embeddings", choices=["instant", "minilm"], default="instant")
    ap.add_argument("--sql", choices=["postgres", "sqlite"], default="postgres")
    ap.add_argument("--pg-admin", default=PG_ADMIN, help="libpq URL of a database to CREATE/DROP the bench database from")
    ap.add_argument("--db-name", default=DB_NAME)
    ap.add_argument("--reuse-db", action="store_true", help="drop and recreate --db-name if it exists")
    ap.add_argument("--vectors", choices=["qdrant-local", "edge"], default="qdrant-local")
    ap.add_argument("--qdrant-path", type=Path, default=None, help="local mode on disk instead of ':memory:'")
    ap.add_argument("--graph", choices=["bolt", "native", "none"], default="bolt")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    print("parameters: " + json.dumps({k: str(v) for k, v in vars(args).items()}), flush=True)

    from memoryx import Memory
    from memoryx.stores.graph import EmbeddedFalkorDB
    from memoryx.stores.graph.falkordb_process import free_port  # below 32768: FalkorDB keeps the Bolt port in an int16

    rng = random.Random(args.seed)
    tmp = tempfile.TemporaryDirectory(prefix="memoryx-bench-prod-")
    data_dir = Path(tmp.name) / "data"
    sql_url = bolt_server = memory = None
    result: dict = {}
    try:
        if args.sql == "postgres":
            sql_url = create_database(args.pg_admin, args.db_name, args.reuse_db)
        bolt_url = None
        if args.graph == "bolt":
            bolt_server = EmbeddedFalkorDB(Path(tmp.name) / "bolt-falkordb", bolt_port=free_port())
            bolt_server.start()
            bolt_url = bolt_server.bolt_url
        model = TimedOffline()
        emb = InstantEmbeddings() if args.embeddings == "instant" else None
        settings = twin_settings(args, data_dir, sql_url, bolt_url)
        memory = Memory(llm=model, embeddings=emb, **settings)
        s = memory.services
        twins = {"sql": s.sql.engine.url.render_as_string(hide_password=True), "vectors": type(s.vectors).__name__,
                 "graph": type(s.graph.transport).__name__ if s.graph is not None else "none",
                 "graph_url": getattr(s.graph.transport, "url", "") if s.graph is not None else "",
                 "checkpointer": memory.settings.checkpointer}
        print("twins: " + json.dumps(twins), flush=True)

        # planner statistics: the store keeps them itself (SQLStore.refresh_statistics_if_grown)
        users, ids, rate = ingest(memory, args, rng)
        result["memories"] = args.users * args.per_user
        result["ingest_per_s"] = rate
        entities, graph_s = build_graphs(memory, args, users, ids, rng)
        print(f"  graph setup {len(users) * args.entities_per_user:,} entities / "
              f"{len(users) * args.relations_per_user:,} relations in {graph_s:.0f} s", file=sys.stderr, flush=True)
        result.update(time_adds(memory, model, users[0], args.adds))
        print(f"  adds: {json.dumps({k: round(v, 1) for k, v in result.items()})}", file=sys.stderr, flush=True)
        result.update(time_searches(memory, make_queries(users, entities, args.warmup + args.queries, rng),
                                    args.warmup))
    finally:
        if memory is not None:
            memory.close()
        if bolt_server is not None:
            bolt_server.stop()
        if sql_url:
            drop_database(args.pg_admin, args.db_name)
        tmp.cleanup()

    print(f"\nProduction twins ({args.sql}, {args.vectors}, graph {args.graph}, {args.embeddings} embeddings), "
          f"{result['memories']:,} memories / {args.users:,} users:\n")
    print("| metric | value |\n|---|---|")
    print(f"| ingest, add_many(infer=False) | {result['ingest_per_s']:,.0f} memories/s |")
    print(f"| add p50 / p90 (instant scripted model), {args.per_user} memories of the user | "
          f"{result['add_p50_ms']:.1f} / {result['add_p90_ms']:.1f} ms |")
    print(f"| add overhead p50 (model time subtracted) | {result['add_overhead_p50_ms']:.1f} ms |")
    print(f"| search p50 / p90 / p99 ({result['queries']} queries, {result['queries_with_graph_hits']} with graph "
          f"hits) | {result['search_p50_ms']:.1f} / {result['search_p90_ms']:.1f} / {result['search_p99_ms']:.1f} ms |")
    print("\n" + json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in result.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
