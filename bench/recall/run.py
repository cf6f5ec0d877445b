"""The recall harness: LoCoMo dev, LongMemEval_S dev and validation and the everyday lives through the public API
with its defaults, per question type, with plain BM25 and the dense path alone beside, and the time per search.

    python bench/recall/run.py [--sets locomo-dev,lme-dev,lme-val,lives] [--stores DIR] [--rerank-only]
        [--questions N] [--jobs J] [--lme-turns user|all] [--json-out FILE]

Each set is ingested once into DIR/<set> (default bench/recall/.stores, gitignored; build.py says how) and kept:
a later run re-ranks the kept store without ingesting (--rerank-only refuses to ingest). --questions N takes N
questions spread through each set (a quick look; a store built so holds only those questions' data).

Searches: `Memory.search(query, ..., now=the question's date)`, limit 10 (LoCoMo, no date: the benchmark gives
none), 30 (LongMemEval), 3 (lives); the dense path alone is the same call with mode="vector". Figures: LoCoMo
frac@10 (the fraction of the evidence turns in the top 10); LongMemEval session recall_all@5, recall_any@5 and
turn recall_all@5 (LongMemEval's eval_utils: a turn ranking maps to sessions by each session's first turn;
with one standard error of dev, validation and their gap);
lives top-1 / top-3 (a result answers when it holds every expected word) per language and per kind, with
extraction on (offline model) and as said. BM25: k1 1.5, b 0.75, lowercased whitespace tokens over the turns
(lives: the statements and replies). ms per search: the default search, mean / median / p99.

If bench/recall/cv_figures.json exists (fit_ranker.py writes it: {set: {question type or "all": {metric:
value}}}), its cross-validated figures are printed beside.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

if os.environ.get("PYTHONHASHSEED") != "0":  # candidates tied in score fall the same way on every run
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable, *sys.argv])

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import build  # noqa: E402
import everyday  # noqa: E402
import report  # noqa: E402
import sets  # noqa: E402
from stores import DEFAULT_STORES, is_kept, load_questions, open_store  # noqa: E402

ALL_SETS = ("locomo-dev", "lme-dev", "lme-val", "lives")
LIMITS = {"locomo-dev": 10, "lme-dev": 30, "lme-val": 30, "lives": 3}


def _timed_search(m, q: dict, limit: int, mode: str | None) -> tuple[list[dict], float]:
    t0 = time.perf_counter()
    found = m.search(q["query"], user_id=q["user_id"], group_id=q.get("group_id"), limit=limit, mode=mode,
                     now=q["now"])["results"]
    return found, (time.perf_counter() - t0) * 1000


def _docs(set_name: str, questions: list[dict], stored_roles: list[str]) -> dict[str, list[tuple[str, str]]]:
    """BM25's documents per question id: the turns (LoCoMo: the conversation's; LongMemEval: the haystack's turns
    of the roles its store holds)."""
    if set_name == "locomo-dev":
        items, _ = sets.locomo()
        by_group: dict[str, list[tuple[str, str]]] = {}
        for it in items:
            by_group.setdefault(it["group_id"], []).append((it["metadata"]["dia_id"], it["messages"][0]["content"]))
        return {q["qid"]: by_group[q["group_id"]] for q in questions}
    if set_name.startswith("lme-"):
        wanted = {q["qid"] for q in questions}
        return {d["question_id"]: sets.lme_docs(d, tuple(stored_roles)) for d in sets.read_lme(set_name)
                if d["question_id"] in wanted}
    lives = {life["name"]: life for life in everyday.load_lives()}
    return {q["qid"]: [(str(i), t) for i, t in enumerate(t for s in lives[q["life"]]["statements"]
                                                        for t in [s["text"], *s.get("replies", [])])]
            for q in questions}


def _score(set_name: str, q: dict, ranked_units: list[str | None], texts: list[str] | None = None) -> dict:
    if set_name == "locomo-dev":
        return {"frac@5": sets.frac(ranked_units, q["gold_units"], 5), "frac@10": sets.frac(ranked_units,
                                                                                         q["gold_units"], 10)}
    if set_name.startswith("lme-"):
        return sets.lme_scores([u for u in ranked_units if u], set(q["gold_units"]), set(q["gold_sessions"]),
                               q["n_turns"], q["n_sessions"])
    k = next((i for i, t in enumerate(texts or [], 1) if everyday.holds(t, q["expected"])), None)
    return {"top1": float(k == 1), "top3": float(k is not None and k <= 3)}


def evaluate(set_name: str, set_dir: Path, n: int | None) -> list[dict]:
    questions = load_questions(set_dir)
    if n and set_name.startswith("lme-"):  # the same questions as a store built with --questions n
        wanted = {d["question_id"] for d in sets.spread(sets.read_lme(set_name), n)}
        questions = [q for q in questions if q["qid"] in wanted]
    else:
        questions = sets.spread(questions, n)
    units = build.load_units(set_dir)
    stored = json.loads((Path(set_dir) / "store.json").read_text())
    docs = _docs(set_name, questions, stored.get("roles", ["user", "assistant"]))
    limit = LIMITS[set_name]
    rows = []
    m = open_store(set_dir)
    try:
        for q in questions:
            row = {k: q[k] for k in ("set", "split", "qid", "qtype", "query")}
            row.update({k: q[k] for k in ("language", "kind", "blind", "written", "infer", "life") if k in q})
            for system, mode in (("memoryx", None), ("dense", "vector")):
                found, ms = _timed_search(m, q, limit, mode)
                row[system] = _score(set_name, q, [units.get(r["id"]) for r in found], [r["memory"] for r in found])
                if system == "memoryx":
                    row["ms"] = ms
                    row["top_ids"] = [r["id"] for r in found]
            ranked = sets.bm25(q["query"], docs[q["qid"]], depth=limit)
            texts = dict(docs[q["qid"]])
            row["bm25"] = _score(set_name, q, ranked, [texts[i] for i in ranked])
            rows.append(row)
    finally:
        m.close()
    return rows


def _evaluate_timed(set_name: str, set_dir: Path, n: int | None) -> tuple[list[dict], float]:
    t0 = time.perf_counter()
    rows = evaluate(set_name, set_dir, n)
    seconds = round(time.perf_counter() - t0, 1)
    print(f"[{set_name}] searched in {seconds} s", file=sys.stderr, flush=True)
    return rows, seconds


def _build_timed(set_name: str, set_dir: Path, n: int | None, fresh: bool, kept_only: bool) -> dict:
    t0 = time.perf_counter()
    meta = json.loads((set_dir / "store.json").read_text()) if kept_only else build.build(set_name, set_dir, n,
                                                                                           fresh=fresh)
    return {"ingest_s": meta.get("ingest_s"), "build_wall_s": round(time.perf_counter() - t0, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default=",".join(ALL_SETS), help="comma-separated: " + ",".join(ALL_SETS))
    ap.add_argument("--stores", type=Path, default=DEFAULT_STORES, help="where the ingested stores are kept")
    ap.add_argument("--rerank-only", action="store_true", help="search the kept stores; never ingest")
    ap.add_argument("--questions", type=int, default=None, help="N questions spread through each set")
    ap.add_argument("--fresh", action="store_true", help="ingest again even where a store is kept")
    ap.add_argument("--ingest-only", action="store_true", help="build the stores and questions, search nothing")
    ap.add_argument("--jobs", type=int, default=1, help="sets ingested and searched in parallel, one process each "
                    "(the ms per search of record use 1)")
    ap.add_argument("--embed-cache", type=Path, default=None,
                    help="keep document vectors here between ingests (re-ingest after an index change; the ingest "
                         "times of record use none)")
    ap.add_argument("--lme-turns", choices=("user", "all"), default="user",
                    help="LongMemEval haystacks hold the user turns (as LongMemEval's retrieval indexes them) or every "
                         "turn (the assistant's replies as distractors; ~7x the encoder work)")
    ap.add_argument("--json-out", type=Path, default=None, help="write every question's row and the summary here")
    args = ap.parse_args(argv)
    chosen = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = sorted(set(chosen) - set(ALL_SETS))
    if unknown:
        ap.error(f"unknown set(s) {unknown}; choose from {', '.join(ALL_SETS)}")

    build.EMBED_CACHE = args.embed_cache
    sets.LME_ROLES = ("user",) if args.lme_turns == "user" else ("user", "assistant")
    timings: dict[str, dict] = {}
    for set_name in chosen:
        if args.rerank_only and not is_kept(args.stores / set_name):
            ap.error(f"no kept store at {args.stores / set_name}; run without --rerank-only first to ingest it")
    t0 = time.perf_counter()
    builds = [(s, args.stores / s, args.questions, args.fresh, args.rerank_only) for s in chosen]
    if args.jobs > 1 and len(builds) > 1 and not args.rerank_only:  # each set its own process and store
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(min(args.jobs, len(builds))) as pool:
            built = pool.starmap(_build_timed, builds)
    else:
        built = [_build_timed(*b) for b in builds]
    timings.update(dict(zip(chosen, built)))
    timings["ingest"] = {"build_wall_s": round(time.perf_counter() - t0, 1), "jobs": args.jobs}
    if not args.rerank_only:
        print(f"built {', '.join(chosen)} in {timings['ingest']['build_wall_s']} s ({args.jobs} job(s))",
              file=sys.stderr, flush=True)
    if args.ingest_only:
        return 0
    t0 = time.perf_counter()
    jobs = [(s, args.stores / s, args.questions) for s in chosen]
    if args.jobs > 1 and len(jobs) > 1:  # one process per set (each store admits one process at a time)
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(min(args.jobs, len(jobs))) as pool:
            results = pool.starmap(_evaluate_timed, jobs)
    else:
        results = [_evaluate_timed(*job) for job in jobs]
    all_rows: list[dict] = []
    for set_name, (rows, seconds) in zip(chosen, results):
        all_rows += rows
        timings[set_name]["rerank_s"] = seconds
    timings["all"] = {"rerank_wall_s": round(time.perf_counter() - t0, 1), "jobs": args.jobs}
    print(f"searched {', '.join(chosen)} in {timings['all']['rerank_wall_s']} s ({args.jobs} job(s))",
          file=sys.stderr, flush=True)
    cv_path = HERE / "cv_figures.json"
    cv = json.loads(cv_path.read_text()) if cv_path.exists() else None
    summary = report.summarize(all_rows, cv)
    print(report.render(summary, timings))
    if args.json_out:
        args.json_out.write_text(json.dumps({"summary": summary, "timings": timings, "rows": all_rows},
                                            ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
