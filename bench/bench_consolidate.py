"""A synthetic year of one user's life through one consolidation pass (issue 10 numbers).

    HF_HUB_OFFLINE=1 python3 bench/bench_consolidate.py --n 10000

N memories over 365 days: ~70 % distinct facts, preferences and episodes (templates x slots), ~20 %
paraphrased duplicates of earlier ones, ~10 % superseded facts (a new value of an earlier attribute). The
memories are written the way bulk ingest writes them (SQL rows, then one batched projection) with their
timestamps, then `Memory.consolidate` runs once (offline model: the model calls are counted, not timed
against a real model). Reported: duplicates left (paraphrase twins both still visible), 200 fixed
questions answered in the top 5 by `Memory.search` (the latest value of a fact, a preference, a recent
episode), time of the pass per 10,000 memories and model calls per 1,000 memories.
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    from memoryx.memory import Memory
    from memoryx.scope import Scope

    mems, questions, twins = synth(args.n)
    data = Path(args.dir or tempfile.mkdtemp(prefix="bench_consolidate_"))
    m = Memory(data_dir=data, graph_backend="none", checkpointer="sqlite", llm="offline")
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
    answered = 0
    for query, expected in questions:
        top = [r["memory"] for r in m.search(query, user_id="bench", limit=5, record_access=False)["results"]] \
            if "record_access" in m.search.__code__.co_varnames else \
            [r["memory"] for r in m.search(query, user_id="bench", limit=5)["results"]]
        answered += expected in top or any(expected.rstrip(".") in x for x in top)
    out = {"n": len(mems), "duplicates_planted": len(twins), "duplicates_left": dups_left,
           "duplicates_left_pct": round(100 * dups_left / max(1, len(mems)), 2),
           "questions": len(questions), "answered_top5": answered,
           "pass_s": round(pass_s, 1), "pass_s_per_10k": round(pass_s * 10000 / len(mems), 1),
           "model_calls": report["model_calls"], "model_calls_per_1k": round(report["model_calls"] * 1000 / len(mems), 2),
           "merged": report["merged"], "merged_by_model": report["merged_by_model"], "compressed": report["compressed"],
           "archived": report["archived"], "ingest_s": round(load_s, 1), "timings_ms": report["timings_ms"]}
    print(json.dumps(out, indent=2))
    m.close()


if __name__ == "__main__":
    main()
