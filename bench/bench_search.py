"""Search latency through the public API (`Memory.search`) on the embedded defaults: SQLite + Qdrant edge +
embedded FalkorDB + MiniLM, no LLM.

    python bench/bench_search.py [--users 1000] [--per-user 100] [--queries 300]     # the full size: 100k / 1,000
    python bench/bench_search.py --users 100 --per-user 100 --queries 200           # 10k

Setup: `users` x `per_user` memories (default 100,000 across 1,000 users) ingested through
`Memory.add_many(infer=False)` (real MiniLM embeddings of every text, batched), and a small knowledge graph
per user (entities and relations attached to memories, written through the SQL store and projected: the
setup only, the timed path is the public one). Then `Memory.search(query, user_id=..., limit=10)` with the
settings' defaults (query embedding, dense + keyword + graph paths, graph depth 1, fusion, context expansion,
ranking, access recording in the background), each in a random user's scope; half of the queries name one of
the user's entities so that the graph path runs. Queries are distinct, so the query-embedding cache never
hits. Prints the parameters and p50/p90/p99, then each stage's p50/p90 (the search graph's per-node
`timings`) from a second pass over the same queries.
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

SUBJECTS = ["I", "My sister", "My boss", "My friend Sam", "My partner", "My son", "My neighbour", "Our team"]
VERBS = ["love", "hate", "started", "visited", "bought", "planned", "learned", "cooked", "booked", "fixed",
         "painted", "read", "watched", "joined", "sold", "borrowed"]
OBJECTS = ["a trip to Lisbon", "sourdough bread", "the blue bicycle", "a jazz concert", "the Python course",
           "a vegan lasagna", "the garden shed", "a new laptop", "the marathon", "a pottery class",
           "a science fiction novel", "the piano", "a hiking trail in the Alps", "a Japanese lesson",
           "the chess club", "a camping tent", "the old camera", "a yoga retreat", "the budget spreadsheet",
           "a birthday party", "the dentist appointment", "a kayak", "the quarterly report", "a puppy"]
WHEN = ["yesterday", "last week", "in May", "on Sunday", "two years ago", "this morning", "last summer", ""]
NAMES = ["Alice", "Bruno", "Chen Wei", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivo", "Jun", "Kofi", "Lena",
         "Marta", "Nikos", "Oren", "Priya", "Quinn", "Rosa", "Sven", "Tomoko"]
PLACES = ["Acme", "Berlin", "Globex", "Kyoto", "Lisbon", "Initech", "Oslo", "Umbrella", "Toronto", "Hooli"]
RELATIONS = ["works_at", "lives_in", "friend_of", "sister_of", "manages", "visited"]
QUESTIONS = ["What did I {v}?", "When did we talk about {o}?", "Do I like {o}?", "What do I know about {o}?",
             "What happened {w}?", "Tell me about {n}", "Where does {n} work?", "Who is {n}?"]


def sentence(rng: random.Random) -> str:
    return " ".join(x for x in (rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(OBJECTS), rng.choice(WHEN)) if x) + "."


def percentile(values: list[float], pct: float) -> float:
    s = sorted(values)
    k = (len(s) - 1) * pct / 100.0
    lo, hi = int(k), min(len(s) - 1, int(k) + 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def setup(memory, args, rng: random.Random) -> tuple[list[str], dict[str, list[str]], int]:
    """Write the memories and the per-user graphs; returns (users, entity names per user, memory count)."""
    from memoryx.core.scope import Scope

    services = memory.services

    total = args.users * args.per_user
    t0 = time.perf_counter()
    pool = sorted({sentence(rng) for _ in range(args.pool * 3)})[: args.pool]
    users = [f"bench-user-{u:04d}" for u in range(args.users)]
    user_memories: dict[str, list[str]] = {u: [] for u in users}
    chunk: list[dict] = []
    for n in range(total):  # users interleaved, as a real import would be; numbered so the texts are distinct
        chunk.append({"messages": f"{pool[rng.randrange(len(pool))]} (note {n})", "user_id": users[n % args.users],
                      "metadata": {"topic": rng.choice(["home", "work", "travel"])}})
        if len(chunk) == 5000 or n == total - 1:
            for item, res in zip(chunk, memory.add_many(chunk, infer=False)):
                user_memories[item["user_id"]].extend(r["id"] for r in res["results"])
            chunk = []
    t_mem = time.perf_counter() - t0
    print(f"setup: {total} memories via add_many(infer=False) in {t_mem:.0f} s", file=sys.stderr, flush=True)

    t2 = time.perf_counter()
    user_entities: dict[str, list[str]] = {}
    n_rel = 0
    ent_batch: list[str] = []
    rel_batch: list[dict] = []
    for n_user, u in enumerate(users, 1):
        scope = Scope(user_id=u)
        names = rng.sample(NAMES, min(args.entities_per_user - 2, len(NAMES))) + rng.sample(PLACES, 2)
        ents = [services.sql.upsert_entity(scope=scope, name=n, entity_type="entity") for n in names]
        ent_batch.extend(e["id"] for e in ents)
        items = []
        for _ in range(args.relations_per_user):
            a, b = rng.sample(ents, 2)
            items.append({"source_id": a["id"], "relation": rng.choice(RELATIONS), "target_id": b["id"],
                          "memory_id": rng.choice(user_memories[u])})
        rel_batch.extend(services.sql.add_relations(scope=scope, items=items, trace_id=None))  # one transaction
        user_entities[u] = names
        if n_user % 100 == 0 or n_user == len(users):  # project in batches (one embedding call per batch)
            services.projector.sync_entities(ent_batch)
            services.projector.sync_relations(rel_batch)
            n_rel += len(rel_batch)
            ent_batch, rel_batch = [], []
    t_graph = time.perf_counter() - t2
    print(f"setup: {total} memories for {len(users)} users via add_many(infer=False) in {t_mem:.0f} s "
          f"({total / max(t_mem, 1e-9):.0f}/s), graph {len(users) * args.entities_per_user} entities / {n_rel} relations "
          f"in {t_graph:.0f} s", file=sys.stderr)

    return users, user_entities, total


def make_queries(users, entities, n: int, rng: random.Random) -> list[tuple[str, str]]:
    """Distinct queries (the query-embedding cache must not flatter the figures); half name an entity."""
    out, seen = [], set()
    for i in range(n):
        u = rng.choice(users)
        while True:
            template = rng.choice(QUESTIONS)
            q = template.format(v=rng.choice(VERBS), o=rng.choice(OBJECTS), w=rng.choice(WHEN[:-1]),
                                n=rng.choice(entities[u]))
            q = f"{q} {rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}"
            if i % 2 == 0 and "{n}" not in template:
                q = f"{q} {rng.choice(entities[u])}"
            elif i % 2 == 1 and "{n}" in template:
                continue
            if q not in seen:
                seen.add(q)
                break
        out.append((u, q))
    return out



def stage_timings(memory, queries: list[tuple[str, str]], mode: str | None) -> dict[str, list[float]]:
    """Each search stage's milliseconds (the graph's per-node `timings`, which the public result leaves out),
    from a second pass over the queries through the search graph itself. Empty when the graph does not
    answer in that shape."""
    core = memory._core
    stages: dict[str, list[float]] = {}
    try:
        for u, q in queries:
            inp = core.search_input(q, u, None, None, 10, None, None, {"mode": mode})
            out = core.search_graph().invoke(inp, core.search_config(), context=core.context(),
                                             output_keys=["result", "timings"])
            for name, ms in (out.get("timings") or {}).items():
                stages.setdefault(name, []).append(float(ms))
    except Exception as exc:  # a bench of another shape of the search: the totals above still hold
        print(f"per-stage timings unavailable: {exc}", file=sys.stderr)
        return {}
    return dict(sorted(stages.items(), key=lambda kv: -statistics.median(kv[1])))


def main(argv: list[str] | None = None) -> int:
    from memoryx.search.recipes import RECIPES

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--users", type=int, default=1000)
    ap.add_argument("--per-user", type=int, default=100)
    ap.add_argument("--entities-per-user", type=int, default=6)
    ap.add_argument("--relations-per-user", type=int, default=8)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--pool", type=int, default=1500, help="distinct template sentences (each text is one of them + a number)")
    ap.add_argument("--data-dir", type=Path, default=None)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--torch-threads", type=int, default=None,
                    help="torch intra-op threads for the query embedding (deployment knob; default: torch's own)")
    ap.add_argument("--embeddings", choices=["minilm", "instant"], default="minilm",
                    help="minilm: the real local all-MiniLM-L6-v2 (default, what users run); instant: a hashed "
                         "bag-of-words embedding (~0.05 ms, bench_add.InstantEmbeddings) that takes the encoder out "
                         "of the figure, leaving the rest of the search path")
    ap.add_argument("--profile", type=int, default=0, metavar="N",
                    help="after timing, print the N most expensive functions (cProfile, cumulative) of the timed "
                         "queries run once more")
    ap.add_argument("--profile-out", type=Path, default=None, metavar="FILE",
                    help="with --profile: also write the cProfile statistics to FILE")
    ap.add_argument("--mode", choices=sorted(RECIPES), default=None,
                    help="search recipe of every query (default: the settings' search_mode)")
    args = ap.parse_args(argv)

    from memoryx import Memory
    from memoryx.search.access import flush_access

    if args.torch_threads:
        import torch

        torch.set_num_threads(args.torch_threads)
    rng = random.Random(args.seed)
    tmp = None
    if args.data_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="memoryx-bench-search-")
        data_dir = Path(tmp.name)
    else:
        data_dir = args.data_dir
    print("parameters: " + json.dumps({k: str(v) for k, v in vars(args).items()}), flush=True)
    embeddings = None
    if args.embeddings == "instant":
        from bench_add import InstantEmbeddings  # bench/ is on sys.path when run as a script

        embeddings = InstantEmbeddings()
    # every other setting: the defaults (MEMORYX_* env)
    memory = Memory(data_dir=data_dir, llm="offline", embeddings=embeddings)
    settings = memory.settings
    total = args.users * args.per_user
    manifest = data_dir / "bench_manifest.json"
    try:
        if manifest.exists():  # --data-dir of an earlier run: reuse its stores
            saved = json.loads(manifest.read_text())
            users, user_entities = saved["users"], saved["user_entities"]
            if saved.get("embeddings", "minilm") != args.embeddings:
                raise SystemExit(f"{data_dir} holds {saved.get('embeddings', 'minilm')} vectors; run with "
                                 f"--embeddings {saved.get('embeddings', 'minilm')} or another --data-dir")
            total = len(users) * saved["per_user"]
            print(f"reusing {total} memories for {len(users)} users in {data_dir}", file=sys.stderr)
        else:
            users, user_entities, total = setup(memory, args, rng)
            manifest.write_text(json.dumps({"users": users, "user_entities": user_entities,
                                            "per_user": args.per_user, "embeddings": args.embeddings}))

        queries = make_queries(users, user_entities, args.warmup + args.queries, rng)  # drawn before timing
        lat: list[float] = []
        cpu: list[float] = []  # CPU time of the calling thread: less sensitive to a loaded machine than wall time
        # CPU time of the whole process: the query embedding runs on a worker thread (search.query_vectors), and
        # the access recording of the previous search may run meanwhile
        pcpu: list[float] = []
        graph_runs = 0
        for i, (u, q) in enumerate(queries):
            s, c, pc = time.perf_counter(), time.thread_time(), time.process_time()
            out = memory.search(q, user_id=u, limit=10, mode=args.mode)
            ms = (time.perf_counter() - s) * 1000.0
            if i < args.warmup:
                continue
            lat.append(ms)
            cpu.append((time.thread_time() - c) * 1000.0)
            pcpu.append((time.process_time() - pc) * 1000.0)
            if any("graph" in (r.get("sources") or []) for r in out["results"]):
                graph_runs += 1
        flush_access()
        from memoryx.search import query_vectors

        query_vectors.clear()  # the same queries again: no cached query vectors
        stages = stage_timings(memory, queries[args.warmup:], args.mode)
        if args.profile:
            import cProfile
            import pstats


            query_vectors.clear()  # the same queries again: no cached query vectors
            prof = cProfile.Profile()
            prof.enable()
            for u, q in queries[args.warmup:]:
                memory.search(q, user_id=u, limit=10, mode=args.mode)
            prof.disable()
            flush_access()
            pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(args.profile)
            if args.profile_out:  # for `python -m pstats` or a sort by tottime
                prof.dump_stats(str(args.profile_out))

        extra = (f", torch threads {args.torch_threads}" if args.torch_threads else "") + (
            ", instant hashed embeddings (encoder excluded)" if args.embeddings == "instant" else "")
        print(f"\nSearch latency, {total:,} memories / {len(users):,} users, embedded defaults{extra} "
              f"(fusion={settings.fusion}, search_mode={args.mode or settings.search_mode}, graph depth "
              f"{settings.graph_expand_depth}), {len(lat)} queries ({graph_runs} with graph hits):\n")
        print("| metric | ms |\n|---|---|")
        for name, value in (("p50", percentile(lat, 50)), ("p90", percentile(lat, 90)), ("p99", percentile(lat, 99)),
                            ("mean", statistics.fmean(lat)), ("max", max(lat))):
            print(f"| {name} | {value:.1f} |")
        print(f"| caller-thread CPU p50 | {percentile(cpu, 50):.1f} |")
        print(f"| process CPU p50 | {percentile(pcpu, 50):.1f} |")
        if stages:
            print(f"\nPer stage, the same queries again (embed_query: the wait for the query vector, embedded on a "
                  f"worker thread while the keyword and graph paths run), ms:\n\n| stage | p50 | p90 | mean |\n|---|---|---|---|")
            for name, values in stages.items():
                print(f"| {name} | {percentile(values, 50):.2f} | {percentile(values, 90):.2f} | "
                      f"{statistics.fmean(values):.2f} |")
        ok = percentile(lat, 50) <= 15.0 and percentile(lat, 99) <= 40.0
        print(f"\ntarget p50 <= 15 ms and p99 <= 40 ms (at 100,000 / 1,000): {'met' if ok else 'NOT met'}")
    finally:
        memory.close()
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
