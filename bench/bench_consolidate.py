"""A synthetic year of one user's life through one consolidation pass: duplicates left, answers kept, time.

    HF_HUB_OFFLINE=1 python3 bench/bench_consolidate.py --n 10000

N memories over 365 days: ~70 % distinct facts, preferences and episodes (templates x slots), ~20 %
paraphrased duplicates of earlier ones, ~10 % superseded facts (a new value of an earlier attribute). The
memories are written the way bulk ingest writes them (SQL rows, then one batched projection) with their
timestamps, then `Memory.consolidate` runs once (offline model: the model calls are counted, not timed
against a real model). Reported: duplicates left (paraphrase twins both still visible), 200 fixed
questions answered in the top 5 by `Memory.search` (the latest value of a fact, a preference, a recent
episode), time of the pass per 10,000 memories and model calls per 1,000 memories.

    HF_HUB_OFFLINE=1 python3 bench/bench_consolidate.py --locomo [--limit-qas N]

LoCoMo dev before and after consolidation (a pass must not lower frac@10): the turns are ingested and the
questions asked exactly as bench/recall/locomo_retrieval.py does (its functions, imported: add_many infer=False,
one group per conversation, search defaults), then `Memory.consolidate(user_id=<speaker>,
group_id=<conversation>)` runs once per participant scope (offline model), and the questions are asked
again. Searches record accesses by default, and ranking reads them: the first round of questions would
change the second's ranking (and what the pass promotes) whether or not a pass ran in between. Both rounds
therefore run with MEMORYX_SEARCH_RECORD_ACCESS off, on the same store, so `after` - `before` is the effect
of the pass alone (two rounds without a pass give identical figures). Printed with the pass reports' totals
and the questions whose frac@10 moved.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
NAMES = ["Anna", "Ben", "Chloe", "David", "Emma", "Felix", "Grace", "Hugo", "Iris", "Jonas", "Kara", "Leo", "Mia",
         "Noah", "Olga", "Paul", "Rita", "Sam", "Tara", "Umar", "Vera", "Will", "Yara", "Zoe"]
PLACES = ["Paris", "Berlin", "Lisbon", "Oslo", "Vienna", "Prague", "Dublin", "Madrid", "Rome", "Warsaw", "Athens", "Helsinki"]
THINGS = ["jazz", "sushi", "hiking", "chess", "tennis", "opera", "pottery", "salsa", "kayaking", "ramen", "poetry",
          "cycling", "baking", "sailing", "climbing", "yoga", "knitting", "surfing", "gardening", "birdwatching"]
FACTS = [("My friend {n} lives in {p}", "Where does {n} live?"),
         ("My cousin {n} works as a teacher in {p}", "What does my cousin {n} do?"),
         ("{n} from my book club was born in {p}", "Where was {n} born?")]
PREFS = [("I really enjoy {t}", "Do I enjoy {t}?"), ("My favourite weekend activity is {t}", "favourite weekend activity {t}")]
EPISODES = ["I met {n} for coffee in {p}", "I had dinner with {n} near the station in {p}",
            "I went to a {t} class with {n}", "I watched a {t} documentary with {n}"]
PARAPHRASE = [("My friend {n} lives in {p}", "My friend {n} is living in {p}"),
              ("I really enjoy {t}", "I really do enjoy {t}"),
              ("My favourite weekend activity is {t}", "My favorite weekend activity is {t}"),
              ("My cousin {n} works as a teacher in {p}", "My cousin {n} is working as a teacher in {p}"),
              ("{n} from my book club was born in {p}", "{n} from my book club was born in {p}.")]


def synth(n: int, seed: int = 7) -> tuple[list[dict], list[tuple[str, str]], list[tuple[str, str]]]:
    """(memories, questions [(query, expected text)], duplicate twins [(original text, paraphrase text)])."""
    rnd = random.Random(seed)
    mems, twins, latest = [], [], {}
    n_dup, n_sup = int(n * 0.2), int(n * 0.1)
    n_base = n - n_dup - n_sup
    seen = set()
    while len(mems) < n_base:
        kind = rnd.random()
        s = {"n": f"{rnd.choice(NAMES)}{rnd.randint(1, 400)}", "p": rnd.choice(PLACES), "t": rnd.choice(THINGS)}
        if kind < 0.45:
            tpl, q = rnd.choice(FACTS)
            text, mtype, imp, key = tpl.format(**s), "semantic", 0.6, (tpl, s["n"])
        elif kind < 0.6:
            tpl, q = rnd.choice(PREFS)
            s["t"] = f"{s['t']} {s['n']}"  # one preference per slot: distinct texts
            text, mtype, imp, key = tpl.format(**s), "preference", 0.6, None
        else:
            tpl, q = rnd.choice(EPISODES), None
            text, mtype, imp, key = tpl.format(**s), "episodic", 0.3, None
        if text in seen:
            continue
        seen.add(text)
        day = rnd.uniform(0, 365)
        mems.append({"text": text, "memory_type": mtype, "importance": imp, "day": day, "tpl": tpl, "slots": s, "q": q})
        if key:
            latest[key] = mems[-1]
    base = list(mems)
    para = {a: b for a, b in PARAPHRASE}
    dup_src = [m for m in base if m["tpl"] in para]
    for m in rnd.sample(dup_src, min(n_dup, len(dup_src))):
        text = para[m["tpl"]].format(**m["slots"])
        mems.append({**m, "text": text, "day": min(365, m["day"] + rnd.uniform(1, 30)), "q": None})
        twins.append((m["text"], text))
    facts = [m for m in base if m["memory_type"] == "semantic"]
    for m in rnd.sample(facts, min(n_sup, len(facts))):
        s = {**m["slots"], "p": rnd.choice([p for p in PLACES if p != m["slots"]["p"]])}
        new = {**m, "text": m["tpl"].format(**s), "slots": s, "day": min(365, m["day"] + rnd.uniform(5, 60))}
        mems.append(new)
        latest[(m["tpl"], m["slots"]["n"])] = new
    pool = [m for m in latest.values() if m["q"]] + [m for m in base if m["memory_type"] == "preference"]
    questions = [(m["q"].format(**m["slots"]), m["text"]) for m in rnd.sample(pool, min(200, len(pool)))]
    return mems, questions, twins


def locomo(limit_qas: int | None) -> None:
    """frac@5 / frac@10 on LoCoMo dev before and after one consolidation pass per participant scope."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.path.insert(0, str(Path(__file__).resolve().parent / "recall"))  # the quality benches
    from embedding_cache import CachedEmbeddings  # noqa: E402
    from locomo_retrieval import DEFAULT_DATA, evaluate, ingest, load  # noqa: E402

    from memoryx import Memory
    from memoryx.models.embeddings import make_embeddings
    from memoryx.settings import Settings

    items, qas = load(DEFAULT_DATA)
    qas = qas[:limit_qas] if limit_qas else qas
    with tempfile.TemporaryDirectory(prefix="memoryx-locomo-consolidate-") as tmp:
        settings = Settings(data_dir=Path(tmp) / "consolidated", graph_backend="none", search_record_access=False)
        embeddings = CachedEmbeddings(make_embeddings(settings), Path(tempfile.gettempdir()) / "memoryx-bench-cache")
        m = Memory(settings, llm="offline", embeddings=embeddings)
        try:
            id_to_dia = ingest(m, items, one_by_one=False)
            before = evaluate(m, qas, id_to_dia)
            owners = sorted({(msg.get("name"), it["group_id"]) for it in items for msg in it["messages"]})
            totals: dict[str, float] = {}
            t = time.perf_counter()
            for speaker, group in owners:
                report = m.consolidate(user_id=speaker, group_id=group)
                for k in ("memories", "merged", "merged_by_model", "compressed", "summarized_sources", "archived",
                          "entities_merged", "links_found", "promoted", "model_calls"):
                    totals[k] = totals.get(k, 0) + (report.get(k) or 0)
            pass_s = time.perf_counter() - t
            after = evaluate(m, qas, id_to_dia)
        finally:
            m.close()
    mean = lambda rows, k: round(sum(r[k] for r in rows) / max(1, len(rows)), 4)  # noqa: E731
    moved = [{"question": b["question"], "before": round(b["f10"], 3), "after": round(a["f10"], 3)}
             for b, a in zip(before, after) if abs(a["f10"] - b["f10"]) > 1e-9]
    print(json.dumps({"questions": len(qas), "turns": len(items), "scopes": len(owners),
                      "before": {"frac@5": mean(before, "f5"), "frac@10": mean(before, "f10")},
                      "after": {"frac@5": mean(after, "f5"), "frac@10": mean(after, "f10")},
                      "consolidation": totals, "pass_s": round(pass_s, 1),
                      "moved_frac@10": {"up": sum(1 for x in moved if x["after"] > x["before"]),
                                        "down": sum(1 for x in moved if x["after"] < x["before"])},
                      "moved": moved[:40]}, indent=2))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--locomo", action="store_true", help="LoCoMo dev frac@10 before and after consolidation")
    ap.add_argument("--limit-qas", type=int, default=None, help="--locomo: only the first N questions")
    ap.add_argument("--embed-cache", default=None,
                    help="development only: keep document vectors in this folder between runs (timings then "
                         "leave the embedding out)")
    args = ap.parse_args()
    if args.locomo:
        return locomo(args.limit_qas)
    from memoryx import Memory
    from memoryx.core.scope import Scope
    from memoryx.settings import Settings

    mems, questions, twins = synth(args.n)
    data = Path(args.dir or tempfile.mkdtemp(prefix="bench_consolidate_"))
    settings = Settings(data_dir=data, graph_backend="none", checkpointer="sqlite")
    embeddings = None
    if args.embed_cache:
        import sys

        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from embedding_cache import CachedEmbeddings  # noqa: E402

        from memoryx.models.embeddings import make_embeddings

        embeddings = CachedEmbeddings(make_embeddings(settings), Path(args.embed_cache))
    m = Memory(settings, llm="offline", embeddings=embeddings)
    scope, sql = Scope(user_id="bench"), m.services.sql
    t = time.perf_counter()
    ids = [sql.insert_memory(scope=scope, text=x["text"], memory_type=x["memory_type"], importance=x["importance"],
                             created_at=T0 + timedelta(days=x["day"]))["id"] for x in mems]
    for i in range(0, len(ids), 512):
        m.services.projector.sync_memories(ids[i:i + 512])
    load_s = time.perf_counter() - t
    now = T0 + timedelta(days=366)
    t = time.perf_counter()
    report = m.consolidate(user_id="bench", now=now)
    pass_s = time.perf_counter() - t
    visible = {}
    for r in sql.list_memories(scope, limit=None):
        if r["status"] not in ("merged", "archived"):
            visible[r["memory"]] = r["id"]
    dups_left = sum(1 for a, b in twins if a in visible and b in visible)
    answered, missed = 0, []
    status = {r["memory"]: r["status"] for r in sql.list_memories(scope, limit=None)}
    for query, expected in questions:
        top = [r["memory"] for r in m.search(query, user_id="bench", limit=5)["results"]]
        ok = expected in top or any(expected.rstrip(".") in x for x in top)
        answered += ok
        if not ok:
            missed.append({"query": query, "expected": expected, "status": status.get(expected), "top5": top})
    out = {"n": len(mems), "duplicates_planted": len(twins), "duplicates_left": dups_left,
           "duplicates_left_pct": round(100 * dups_left / max(1, len(mems)), 2),
           "questions": len(questions), "answered_top5": answered,
           "pass_s": round(pass_s, 1), "pass_s_per_10k": round(pass_s * 10000 / len(mems), 1),
           "model_calls": report["model_calls"], "model_calls_per_1k": round(report["model_calls"] * 1000 / len(mems), 2),
           "merged": report["merged"], "merged_by_model": report["merged_by_model"], "compressed": report["compressed"],
           "archived": report["archived"], "ingest_s": round(load_s, 1), "timings_ms": report["timings_ms"], "missed": missed}
    print(json.dumps(out, indent=2))
    m.close()


if __name__ == "__main__":
    main()
