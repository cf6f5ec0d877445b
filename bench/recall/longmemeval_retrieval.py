"""LongMemEval_S retrieval through the public API: do the evidence turns and sessions come back?

    python bench/recall/longmemeval_retrieval.py [--data ../shared/data/longmemeval_s_dev.json] [--questions 20]
        [--data-dir DIR] [--baselines] [--json-out rows.json]

Ingestion, as a user would replay a chat history (no model): each question is one user's history
(`user_id="lme-<question_id>"`); every turn of its haystack, user and assistant alike, is one message
{"role", "content", "timestamp": the session's date (+ the turn's index in seconds, so a session keeps its
order)} written with `Memory.add_many(items, infer=False)`, one item (and so one memory) per turn, with
metadata {"session", "turn"}.

Evaluation: `Memory.search(question, user_id=..., limit=30, now=question_date)` with the defaults otherwise -
the question is answered as of its own date. LongMemEval's official metrics (xiaowu0162/LongMemEval,
src/retrieval/eval_utils.py) on the returned ranking: turn level, the evidence units are the user turns marked
`has_answer` in the answer sessions; session level, the turn ranking maps to sessions by each session's first
turn in it, the evidence units are the answer sessions. recall_all@k (every evidence unit in the top k),
recall_any@k, ndcg_any@k. The assistant's turns are indexed too (a user adds both sides of a chat), so they
compete for the top k and never count as evidence.

Beside each figure: plain BM25 over the same turns (k1 1.5, b 0.75, lowercased whitespace tokens, the
benchmark's baseline), and with --baselines the dense path alone (`mode="vector"`) and our keyword path
alone (`mode="keyword"`) through the same API. Per question type, and the time per search (ms).

--data-dir keeps the store between runs (questions already ingested there are not added again): a change to
ranking only is measured without re-ingesting; a change to indexing needs a fresh directory.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the embedding cache
from embedding_cache import CachedEmbeddings  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = next((p for p in (HERE.parents[2] / "shared" / "data" / "longmemeval_s_dev.json",
                                 Path("/work/shared/data/longmemeval_s_dev.json")) if p.exists()),
                    HERE.parents[2] / "shared" / "data" / "longmemeval_s_dev.json")
SEARCH_LIMIT = 30  # deep enough for ten distinct sessions
KS = (5, 10)


# ------------------------------------------------------------------------------------------------ data


def parse_date(text: str) -> datetime:
    """LongMemEval's "2023/05/20 (Sat) 15:08" as a UTC datetime."""
    return datetime.strptime(re.sub(r"\s*\(\w+\)\s*", " ", text).strip(), "%Y/%m/%d %H:%M").replace(tzinfo=timezone.utc)


def spread(questions: list[dict], n: int | None) -> list[dict]:
    """n questions taken evenly through the file (it is stratified by type), or all."""
    if not n or n >= len(questions):
        return questions
    step = len(questions) / n
    return [questions[int(i * step)] for i in range(n)]


def items_of(q: dict) -> list[dict]:
    """add_many items, one per turn of the question's haystack."""
    user = f"lme-{q['question_id']}"
    out = []
    for sid, date, session in zip(q["haystack_session_ids"], q["haystack_dates"], q["haystack_sessions"]):
        start = parse_date(date)
        for i, turn in enumerate(session):
            if not (turn.get("content") or "").strip():
                continue
            ts = (start + timedelta(seconds=i)).isoformat()
            out.append({"messages": [{"role": turn["role"], "content": turn["content"], "timestamp": ts}],
                        "user_id": user, "metadata": {"session": sid, "turn": i}})
    return out


def turn_id(sid: str, i: int) -> str:
    return f"{sid}_{i + 1}"


def evidence(q: dict) -> tuple[set[str], set[str]]:
    """(evidence turn ids, evidence session ids) as the official evaluation names them."""
    sessions = {sid for sid in q["haystack_session_ids"] if "answer" in sid}
    turns = {turn_id(sid, i) for sid, session in zip(q["haystack_session_ids"], q["haystack_sessions"])
             if sid in sessions for i, t in enumerate(session) if t.get("has_answer") and t["role"] == "user"}
    return turns, sessions


# ------------------------------------------------------------------------------------------- metrics


def dcg(rel: list[float], k: int) -> float:
    rel = rel[:k]
    if not rel:
        return 0.0
    return rel[0] + sum(r / math.log2(i + 1) for i, r in enumerate(rel[1:], start=2))


def metrics(ranked: list[str], correct: set[str], k: int, corpus_size: int) -> dict[str, float]:
    """recall_any@k, recall_all@k, ndcg_any@k of a best-first id list (LongMemEval's eval_utils)."""
    top = set(ranked[:k])
    rel = [1.0 if u in correct else 0.0 for u in ranked]
    ideal = dcg([1.0] * min(len(correct), corpus_size), k)
    return {f"recall_any@{k}": float(any(c in top for c in correct)),
            f"recall_all@{k}": float(all(c in top for c in correct)),
            f"ndcg_any@{k}": dcg(rel, k) / ideal if ideal > 0 else 0.0}


def sessions_of(turns: list[str]) -> list[str]:
    """A turn ranking as a session ranking: each session at its first turn's place."""
    return list(dict.fromkeys(t.rsplit("_", 1)[0] for t in turns))


def scored(ranked_turns: list[str], q: dict, n_turns: int) -> dict[str, float]:
    ev_turns, ev_sessions = evidence(q)
    out: dict[str, float] = {}
    for k in KS:
        out.update({f"turn_{m}": v for m, v in metrics(ranked_turns, ev_turns, k, n_turns).items()})
        out.update({f"session_{m}": v for m, v in metrics(sessions_of(ranked_turns), ev_sessions, k,
                                                          len(q["haystack_session_ids"])).items()})
    return out


# ------------------------------------------------------------------------------------------ BM25 baseline


def bm25_ranking(q: dict, k1: float = 1.5, b: float = 0.75, depth: int = SEARCH_LIMIT) -> list[str]:
    """Okapi BM25 over the question's turns (lowercased whitespace tokens): the benchmark's baseline."""
    ids, docs = [], []
    for sid, session in zip(q["haystack_session_ids"], q["haystack_sessions"]):
        for i, t in enumerate(session):
            if (t.get("content") or "").strip():
                ids.append(turn_id(sid, i))
                docs.append(t["content"].lower().split())
    n = len(docs)
    avg = sum(len(d) for d in docs) / max(1, n)
    df = Counter(w for d in docs for w in set(d))
    terms = set(q["question"].lower().split())
    idf = {w: math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5)) for w in terms if df[w]}
    scores = []
    for i, d in enumerate(docs):
        tf = Counter(w for w in d if w in idf)
        s = sum(idf[w] * c * (k1 + 1) / (c + k1 * (1 - b + b * len(d) / avg)) for w, c in tf.items())
        scores.append((s, -i))
    order = sorted(range(n), key=lambda i: scores[i], reverse=True)
    return [ids[i] for i in order[:depth]]


# -------------------------------------------------------------------------------------------- the run


def ingest(m, questions: list[dict], done_file: Path) -> dict[str, dict[str, str]]:
    """Each question's turns added through the public API (those not already in the store); returns
    question id -> {memory id -> turn id}."""
    done: dict[str, dict[str, str]] = json.loads(done_file.read_text()) if done_file.exists() else {}
    todo = [q for q in questions if q["question_id"] not in done]
    t0 = time.perf_counter()
    n_turns = 0
    for j, q in enumerate(todo, 1):
        items = items_of(q)
        results = m.add_many(items, infer=False)
        ids: dict[str, str] = {}
        for it, res in zip(items, results):
            if res.get("error"):
                raise RuntimeError(f"add failed: {res['error']}")
            for r in res.get("results") or []:
                ids[r["id"]] = turn_id(it["metadata"]["session"], it["metadata"]["turn"])
        done[q["question_id"]] = ids
        done_file.write_text(json.dumps(done))
        n_turns += len(items)
        print(f"  ingested {j}/{len(todo)} ({n_turns} turns, {time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    return done


def search_ranking(m, q: dict, ids: dict[str, str], mode: str | None, now: datetime) -> tuple[list[str], float]:
    t0 = time.perf_counter()
    found = m.search(q["question"], user_id=f"lme-{q['question_id']}", limit=SEARCH_LIMIT, mode=mode, now=now)
    ms = (time.perf_counter() - t0) * 1000
    return [ids[r["id"]] for r in found["results"] if r["id"] in ids], ms


SYSTEMS = ("memoryx", "bm25", "dense", "keyword")


def evaluate(m, questions: list[dict], done: dict[str, dict[str, str]], baselines: bool) -> list[dict]:
    rows = []
    for q in questions:
        ids = done[q["question_id"]]
        now = parse_date(q["question_date"])
        row = {"question_id": q["question_id"], "type": q["question_type"], "question": q["question"]}
        n_turns = len(ids)
        ranked, ms = search_ranking(m, q, ids, None, now)
        row["memoryx"], row["ms"], row["memoryx_top"] = scored(ranked, q, n_turns), ms, ranked[:10]
        row["bm25"] = scored(bm25_ranking(q), q, n_turns)
        if baselines:
            for name, mode in (("dense", "vector"), ("keyword", "keyword")):
                row[name] = scored(search_ranking(m, q, ids, mode, now)[0], q, n_turns)
        rows.append(row)
    return rows


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


HEADLINE = ("session_recall_all@5", "session_recall_any@5", "turn_recall_all@5", "session_recall_all@10",
            "turn_recall_all@10", "session_ndcg_any@10", "turn_ndcg_any@10")


def report(rows: list[dict]) -> str:
    systems = [s for s in SYSTEMS if s in rows[0]]
    lines = ["| metric | " + " | ".join(systems) + " |", "|---|" + "---|" * len(systems)]
    for metric in HEADLINE:
        lines.append(f"| {metric} | " + " | ".join(f"{_mean([r[s][metric] for r in rows]):.3f}" for s in systems)
                     + " |")
    types = sorted({r["type"] for r in rows})
    lines += ["", "| question type | n | " + " | ".join(f"{s} s_all@5 / t_all@5" for s in systems) + " |",
              "|---|---|" + "---|" * len(systems)]
    for t in types:
        sel = [r for r in rows if r["type"] == t]
        lines.append(f"| {t} | {len(sel)} | " + " | ".join(
            f"{_mean([r[s]['session_recall_all@5'] for r in sel]):.3f} / "
            f"{_mean([r[s]['turn_recall_all@5'] for r in sel]):.3f}" for s in systems) + " |")
    ms = sorted(r["ms"] for r in rows)
    lines.append(f"\nsearch (limit {SEARCH_LIMIT}, defaults): p50 {ms[len(ms) // 2]:.1f} ms, "
                 f"p90 {ms[int(len(ms) * 0.9)]:.1f} ms, mean {_mean(ms):.1f} ms over {len(ms)} questions")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--questions", type=int, default=None, help="n questions spread through the file (default all)")
    ap.add_argument("--type", default=None, help="only the questions of this question_type (e.g. temporal-reasoning), "
                    "taken before --questions spreads")
    ap.add_argument("--data-dir", type=Path, default=None, help="store directory kept between runs (default: temporary)")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "memoryx-bench-cache",
                    help="where turn embeddings are cached between runs ('' to disable)")
    ap.add_argument("--baselines", action="store_true", help="also the dense path alone and our keyword path alone")
    ap.add_argument("--json-out", type=Path, default=None, help="write the per-question rows here")
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=JSON",
                    help="a settings override for diagnostics (the figures of record use none)")
    args = ap.parse_args(argv)

    from memoryx import Memory
    from memoryx.models.embeddings import make_embeddings
    from memoryx.settings import Settings

    questions = [q for q in json.loads(args.data.read_text()) if args.type in (None, q["question_type"])]
    questions = spread(questions, args.questions)
    tmp = None
    if args.data_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="memoryx-lme-")
        data_dir = Path(tmp.name)
    else:
        data_dir = args.data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
    overrides = {k: json.loads(v) for k, v in (s.split("=", 1) for s in args.set)}
    settings = Settings(data_dir=data_dir, graph_backend="none", **overrides)  # infer=False adds no graph
    embeddings = CachedEmbeddings(make_embeddings(settings), Path(args.cache) if str(args.cache) else None,
                                  name="longmemeval-docs")
    m = Memory(settings, llm="offline", embeddings=embeddings)
    try:
        done = ingest(m, questions, data_dir / "lme-ingested.json")
        rows = evaluate(m, questions, done, args.baselines)
        print(f"LongMemEval_S retrieval through the public API (add_many infer=False, one memory per turn; search "
              f"defaults, now = question date), {len(questions)} questions, embeddings {settings.embedding_model}, "
              f"no LLM\n")
        print(report(rows))
        if args.json_out:
            args.json_out.write_text(json.dumps(rows, ensure_ascii=False, indent=1))
    finally:
        m.close()
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
