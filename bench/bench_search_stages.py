"""What each stage of a search costs, through the public API on the embedded defaults, on two kinds of store:

    python bench/bench_search_stages.py lme   [--dir /work/bench-h2/lme-dev] [--questions 20] [--turns user|all]
    python bench/bench_search_stages.py scale [--dir /work/bench-h2/scale-100k] [--users 1000 --per-user 100]

* lme: LongMemEval_S dev haystacks (../shared/data), one user per question holding its haystack's turns, ingested
  through `Memory.add_many(items, infer=False)` exactly as the recall harness does it (bench/recall/sets.py
  `lme_items`, the harness's settings: bench/recall/stores.py); searched with each question at its date, limit 30,
  as bench/recall/run.py searches. `--turns user` (the harness's default) keeps the user turns (~240 a user);
  `all` the assistant's replies too (~490 a user, the long replies in chunks).
* scale: bench_search.py's store (memories spread over many users, a small graph each; its --data-dir is reused
  as it is) and its queries: half name one of the user's entities.

The store is built on the first run into --dir and reused after. Each search is run three times, the
query-vector cache cleared before each pass: first through `Memory.search` (the figure of record: total ms, p50 /
p90 / p99), then through the same steps `Memory.search` runs (graphs/search_steps.py; LangGraph only when
traced), keeping the per-stage `timings` the steps record, then through `Memory.search` again. The first pass
is each search's first run in the process: it pays the process's one-offs (the date parser's first load, ~0.3 s,
in whichever search first names a relative date) and any of the store's file pages the kernel no longer holds
(the vector shard's mmapped segments: "major page faults"; the store is opened as the server opens it, its
shards read ahead, stores/vectors/readahead.py, so a pass soon after the open should take none). The later passes
find them in memory, so compare the staged total with the second `Memory.search`, not the first. What the page cache
held of the SQL database and of the vector shard before the open is printed beside the load (`resident_share`): a
store left idle for a minute or so on a host that reclaims cold pages (this VM's DAMON) starts mostly on disk. The
stages nest as the search runs them:

    analyze_query                       plan + the one read transaction; starts the query's embedding
    recall: keyword_recall, graph_recall, dense_recall (embed_query: the wait for the vector, then the top-k)
    rank:   fuse, expand_context, rank (companion, features, model, blend), finalize
    other:  the rest of the total (input checks, step hand-offs, the access event, garbage collection)

`companion` / `features` / `model` (inside rank) are the companion vectors' read with their cosines to the
question (waiting for the companion encoder's query vector if need be), and the fitted ranking's feature building
and scoring, timed around the three calls. `encoder alone` is the main encoder embedding each query with nothing else running: what the overlap
with the other stages hides. Measure on a quiet machine (`uptime` load < 0.6); CPU columns are also printed.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import mmap
import os
import random
import resource
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH / "recall"))

TOP = ("analyze_query", "keyword_recall", "graph_recall", "dense_recall", "fuse", "expand_context", "rank",
       "rerank", "finalize")
ORDER = ("analyze_query", "keyword_recall", "graph_recall", "embed_query", "dense_recall", "fuse", "expand_context",
         "rank", "companion", "features", "model", "rerank", "finalize", "other")
INSIDE = {"embed_query": "dense_recall", "companion": "rank", "features": "rank", "model": "rank"}


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    k = (len(s) - 1) * q / 100.0
    lo, hi = int(k), min(len(s) - 1, int(k) + 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


# ------------------------------------------------------------------------------------------------ stores


def lme_store(args) -> tuple[object, list[dict]]:
    """The LongMemEval store (built on first use) and its searches."""
    import sets
    from stores import settings_for

    from memoryx import Memory

    sets.LME_ROLES = ("user",) if args.turns == "user" else ("user", "assistant")
    data = sets.spread(sets.read_lme("lme-dev"), args.questions)
    args.dir.mkdir(parents=True, exist_ok=True)
    manifest = args.dir / "bench_manifest.json"
    saved = json.loads(manifest.read_text()) if manifest.exists() else {"turns": args.turns, "questions": []}
    if saved["turns"] != args.turns:
        raise SystemExit(f"{args.dir} holds --turns {saved['turns']}; give that or another --dir")
    memory = Memory(settings_for("lme-dev", args.dir), llm="offline", vector_readahead=True)  # as the server
    done = set(saved["questions"])
    t0, n_items = time.perf_counter(), 0
    for q in data:
        if q["question_id"] in done:
            continue
        items = sets.lme_items(q)
        failed = [r for r in memory.add_many(items, infer=False) if r.get("error")]
        if failed:
            raise SystemExit(f"{len(failed)} adds failed, first: {failed[0]['error']}")
        n_items += len(items)
        saved["questions"].append(q["question_id"])
        manifest.write_text(json.dumps(saved))
        print(f"  ingested {len(saved['questions'])}/{len(data)}: {n_items} items, "
              f"{time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    held = set(saved["questions"])
    searches = [{"query": q["question"], "user_id": f"lme-{q['question_id']}", "limit": args.limit,
                 "now": sets.parse_date(q["question_date"]).isoformat()} for q in data if q["question_id"] in held]
    turns = sum(len(sets.lme_docs(q)) for q in data if q["question_id"] in held)
    print(f"store: {args.dir}, {len(held)} LongMemEval dev users, {turns / max(1, len(held)):.0f} turns a user "
          f"({args.turns}), limit {args.limit}", flush=True)
    return memory, searches


def scale_store(args) -> tuple[object, list[dict]]:
    """bench_search.py's store (built on first use, or reused from its --data-dir) and its queries."""
    import bench_search

    from memoryx import Memory

    embeddings = None
    if args.embeddings == "instant":
        from bench_add import InstantEmbeddings

        embeddings = InstantEmbeddings()
    args.dir.mkdir(parents=True, exist_ok=True)
    memory = Memory(data_dir=args.dir, llm="offline", embeddings=embeddings, vector_readahead=True)  # as the server
    manifest = args.dir / "bench_manifest.json"
    rng = random.Random(args.seed)
    if manifest.exists():
        saved = json.loads(manifest.read_text())
        if saved.get("embeddings", "minilm") != args.embeddings:
            raise SystemExit(f"{args.dir} holds {saved.get('embeddings', 'minilm')} vectors")
        users, entities, per_user = saved["users"], saved["user_entities"], saved["per_user"]
    else:
        setup = argparse.Namespace(users=args.users, per_user=args.per_user, entities_per_user=6,
                                   relations_per_user=8, pool=1500)
        users, entities, _ = bench_search.setup(memory, setup, rng)
        per_user = args.per_user
        manifest.write_text(json.dumps({"users": users, "user_entities": entities, "per_user": per_user,
                                        "embeddings": args.embeddings}))
    queries = bench_search.make_queries(users, entities, args.queries + args.warmup, rng)
    print(f"store: {args.dir}, {len(users) * per_user:,} memories / {len(users):,} users "
          f"({args.embeddings} embeddings), limit 10", flush=True)
    return memory, [{"query": q, "user_id": u, "limit": 10} for u, q in queries]


def resident_share(paths: list[Path]) -> float | None:
    """The share of these files' pages in the page cache (mincore), None when none can be read. A store left
    idle loses its pages on hosts that reclaim cold memory (DAMON pageout: about a minute here), and the first
    searches then read them from disk: said beside the figures, as it moves them."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    held = total = 0
    for path in paths:
        size = path.stat().st_size if path.is_file() else 0
        if not size:
            continue
        fd = os.open(path, os.O_RDONLY)
        try:
            addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
            if addr in (None, ctypes.c_void_p(-1).value):
                continue
            pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
            vec = (ctypes.c_ubyte * pages)()
            if libc.mincore(addr, size, vec) == 0:
                held += sum(v & 1 for v in vec)
                total += pages
            libc.munmap(addr, size)
        finally:
            os.close(fd)
    return held / total if total else None


def store_residency(data_dir: Path) -> str:
    """How much of the SQL database and of the memories' vector shard the page cache holds, before the open."""
    shard = sorted((data_dir / "qdrant" / "memoryx_memories" / "segments").glob("*/**/*"))
    parts = [(name, resident_share(files)) for name, files in (("SQL database", [data_dir / "memoryx.db"]),
                                                               ("vector shard", shard))]
    return ", ".join(f"{name} {share:.0%}" for name, share in parts if share is not None) or "no store files"


# ------------------------------------------------------------------------------------------------ timing


class RankingClock:
    """The companion read and the fitted ranking's two calls inside the rank stage, timed (the bench's own
    wrappers; same results)."""

    def __init__(self):
        import memoryx.nodes.rank as rank_node
        from memoryx.search.ranker import FittedModel

        self.spent = {"companion": 0.0, "features": 0.0, "model": 0.0}
        name = "feature_matrix" if hasattr(rank_node, "feature_matrix") else "features"  # an older checkout: lists
        build = getattr(rank_node, name)
        # the model's whole cost: the linear part and the trees (an older checkout has the linear part alone)
        method = "relevance" if hasattr(FittedModel, "relevance") else "scores"
        scores = getattr(FittedModel, method)

        companion = getattr(rank_node, "_companion_cosines", None)  # an older checkout has none

        def timed(key: str, call):
            def run(*a, **k):
                t = time.perf_counter()
                try:
                    return call(*a, **k)
                finally:
                    self.spent[key] += (time.perf_counter() - t) * 1000
            return run

        setattr(rank_node, name, timed("features", build))
        setattr(FittedModel, method, timed("model", scores))
        if companion is not None:
            rank_node._companion_cosines = timed("companion", companion)
        self._restore = lambda: (setattr(rank_node, name, build), setattr(FittedModel, method, scores),
                                 companion is not None and setattr(rank_node, "_companion_cosines", companion))

    def take(self) -> dict[str, float]:
        out, self.spent = self.spent, {"companion": 0.0, "features": 0.0, "model": 0.0}
        return out

    def close(self) -> None:
        self._restore()


def staged_search(memory, kw: dict) -> tuple[float, dict[str, float]]:
    """Memory.search's own calls (search_input, the search steps, searched), keeping the steps' timings."""
    from memoryx.api.searching import empty_result
    from memoryx.graphs.search_steps import SEARCH_STEPS, StepRuntime

    core = memory._core
    t0 = time.perf_counter()
    extra = {k: v for k, v in kw.items() if k not in ("query", "user_id", "limit")}
    inp = core.search_input(kw["query"], kw["user_id"], None, None, kw.get("limit", 10), None, None, extra)
    state, runtime, timings = dict(inp), StepRuntime(core.context()), {}
    for name, step in SEARCH_STEPS:
        cpu = time.thread_time()
        update = dict(step(state, runtime) or {})
        timings[f"{name} step, caller-thread CPU"] = (time.thread_time() - cpu) * 1000
        timings.update(update.pop("timings", None) or {})
        state.update(update)
    core.searched(inp, dict(state.get("result") or empty_result()))
    return (time.perf_counter() - t0) * 1000, timings


def public_pass(memory, timed: list[dict]) -> tuple[list[float], list[float], int]:
    """`Memory.search` over `timed` (the query vectors not cached): wall and process-CPU ms per search, and the
    major page faults the pass took (file pages read from disk: the stores' cold pages)."""
    from memoryx.search import query_vectors
    from memoryx.search.access import flush_access

    query_vectors.clear()
    wall, cpu = [], []
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_majflt
    for kw in timed:
        t, c = time.perf_counter(), time.process_time()
        memory.search(**kw)
        wall.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_majflt - faults
    flush_access()
    return wall, cpu, faults


def measure(memory, searches: list[dict], warmup: int) -> None:
    from memoryx.search import query_vectors
    from memoryx.search.access import flush_access

    for kw in searches[:warmup]:
        memory.search(**kw)
    timed = searches[warmup:] if len(searches) > warmup else searches
    wall, cpu, faults = public_pass(memory, timed)  # the figure of record: each search's first run

    query_vectors.clear()
    clock = RankingClock()
    cpu_steps = [f"{name} step, caller-thread CPU" for name in ("analyze_query", "recall", "rank")]
    stages: dict[str, list[float]] = {name: [] for name in (*ORDER, *cpu_steps)}
    totals = []
    try:
        for kw in timed:
            total, timings = staged_search(memory, kw)
            timings.update(clock.take())
            totals.append(total)
            for name in stages:
                stages[name].append(timings.get(name, 0.0))
            stages["other"][-1] = total - sum(timings.get(name, 0.0) for name in TOP)
    finally:
        clock.close()
    flush_access()

    # the same public calls again, after the staged pass: as warm as it, so the two totals compare
    wall_again, cpu_again, faults_again = public_pass(memory, timed)

    query_vectors.clear()
    embeddings = memory.services.embeddings
    alone = []
    for kw in timed[:50]:
        t = time.perf_counter()
        embeddings.embed_query(kw["query"])
        alone.append((time.perf_counter() - t) * 1000)

    print(f"\n{len(timed)} searches, ms (load average {os.getloadavg()[0]:.2f} at the end)\n")
    print("| search | median | p90 | p99 | mean |\n|---|---|---|---|---|")
    print(f"| Memory.search, total | {pct(wall, 50):.1f} | {pct(wall, 90):.1f} | {pct(wall, 99):.1f} | "
          f"{statistics.fmean(wall):.1f} |")
    print(f"| Memory.search, process CPU | {pct(cpu, 50):.1f} | {pct(cpu, 90):.1f} | {pct(cpu, 99):.1f} | "
          f"{statistics.fmean(cpu):.1f} |")
    print(f"| the same steps, timed by stage: total | {pct(totals, 50):.1f} | {pct(totals, 90):.1f} | "
          f"{pct(totals, 99):.1f} | {statistics.fmean(totals):.1f} |")
    print(f"| Memory.search again, total | {pct(wall_again, 50):.1f} | {pct(wall_again, 90):.1f} | "
          f"{pct(wall_again, 99):.1f} | {statistics.fmean(wall_again):.1f} |")
    print(f"| Memory.search again, process CPU | {pct(cpu_again, 50):.1f} | {pct(cpu_again, 90):.1f} | "
          f"{pct(cpu_again, 99):.1f} | {statistics.fmean(cpu_again):.1f} |")
    print(f"| encoder alone (main, one query) | {pct(alone, 50):.1f} | {pct(alone, 90):.1f} | {pct(alone, 99):.1f} | "
          f"{statistics.fmean(alone):.1f} |")
    print(f"\nmajor page faults (file pages read from disk): {faults} in the first pass, {faults_again} again")
    print("\n| stage | median | p90 | mean | share of mean total |\n|---|---|---|---|---|")
    mean_total = statistics.fmean(totals)
    for name in (*ORDER, *cpu_steps):
        values = stages[name]
        if not any(values):
            continue
        label = f"  {name} (in {INSIDE[name]})" if name in INSIDE else name
        if name == cpu_steps[0]:
            print("| (the steps' CPU in the caller's thread: the encoder's worker and the wait for it excluded) |"
                  " | | | |")
        print(f"| {label} | {pct(values, 50):.2f} | {pct(values, 90):.2f} | {statistics.fmean(values):.2f} | "
              f"{100 * statistics.fmean(values) / mean_total:.0f} % |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="store", required=True)
    lme = sub.add_parser("lme", help="LongMemEval dev haystacks")
    lme.add_argument("--dir", type=Path, default=Path("/work/bench-h2/lme-dev"))
    lme.add_argument("--questions", type=int, default=20, help="LongMemEval dev questions (users), spread by type")
    lme.add_argument("--turns", choices=["user", "all"], default="user")
    lme.add_argument("--limit", type=int, default=30)
    lme.add_argument("--warmup", type=int, default=3)
    scale = sub.add_parser("scale", help="bench_search.py's store: many users")
    scale.add_argument("--dir", type=Path, default=Path("/work/bench-h2/scale-100k"))
    scale.add_argument("--users", type=int, default=1000)
    scale.add_argument("--per-user", type=int, default=100)
    scale.add_argument("--queries", type=int, default=300)
    scale.add_argument("--warmup", type=int, default=20)
    scale.add_argument("--seed", type=int, default=7)
    scale.add_argument("--embeddings", choices=["minilm", "instant"], default="minilm",
                       help="instant: bench_add.InstantEmbeddings, the encoder out of the figure")
    for sp in (lme, scale):
        sp.add_argument("--build-only", action="store_true", help="build the store and stop (measure later, quiet)")
    args = ap.parse_args(argv)
    resident = store_residency(args.dir) if args.dir.exists() else ""
    memory, searches = lme_store(args) if args.store == "lme" else scale_store(args)
    if args.build_only:
        memory.close()
        return 0
    try:
        print(f"uptime: {os.popen('uptime').read().strip()}", flush=True)
        if resident:
            print(f"in the page cache before the open: {resident}", flush=True)
        measure(memory, searches, args.warmup)
    finally:
        memory.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
