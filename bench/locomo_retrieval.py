"""LoCoMo retrieval benchmark: does the right conversation turn come back?

    python bench/locomo_retrieval.py [--data ../shared/data/locomo_dev.json] [--ablations]

Ingestion (infer=False semantics, no model): one memory per turn, text "Speaker: text", one scope per
conversation (user_id = "locomo-<sample_id>"), written straight to the system of record
(SQLStore.insert_memory) and projected with batch embeddings (Projector.sync_memories). Each turn keeps its
turn id (metadata.dia_id), session number and session date (metadata.session_date); its created_at is the
session's date and time (+30 s per turn, so the turns of a session keep their order), as a replayed chat log
would have it.

Evaluation: every QA of categories 1-4 (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop) with evidence,
the question as the query, top 10. Score = mean fraction of the evidence turns found in the top 5 / top 10.
Rows: each recall path alone (the same store calls the search graph makes), plain RRF of dense + keyword
(the earlier baseline), and the full search graph (memoryx.graphs.search) on the embedded defaults. No LLM,
offline all-MiniLM-L6-v2 embeddings. Access recording is switched off so that the questions do not change
each other's ranking.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from datetime import timedelta
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = next((p for p in (HERE.parent.parent / "shared" / "data" / "locomo_dev.json",
                                 HERE.parent / "data" / "locomo_dev.json",
                                 Path("/work/shared/data/locomo_dev.json")) if p.exists()),
                    HERE.parent.parent / "shared" / "data" / "locomo_dev.json")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def load(path: Path) -> tuple[list[dict], list[dict]]:
    from memoryx import locomo

    turns, qas = [], []
    for sample in json.loads(path.read_text()):
        scope = f"locomo-{sample['sample_id']}"
        for session in locomo.sessions(sample):
            start = locomo.parse_session_date(session.date)
            for i, t in enumerate(session.turns):
                turns.append({"scope": scope, "dia_id": t["dia_id"], "session": session.number,
                              "session_date": session.date, "speaker": t["speaker"],
                              "text": f"{t['speaker']}: {t['text']}", "created_at": start + timedelta(seconds=30 * i)})
        for qa in locomo.questions(sample):
            if qa.get("category") in CATEGORIES and qa["evidence"]:
                qas.append({"scope": scope, "question": qa["question"], "category": qa["category"],
                            "evidence": qa["evidence"]})
    return turns, qas


def open_services(data_dir: Path, *, graph: bool = False):
    """Services on the embedded defaults in `data_dir` (FalkorDB only when asked: infer=False adds no graph)."""
    from memoryx.services import build_services
    from memoryx.settings import Settings

    overrides = {"data_dir": data_dir}
    if not graph:
        overrides["graph_backend"] = "none"
    return build_services(Settings(**overrides), llm="offline")


def embed_cached(services, texts: list[str], cache: Path | None) -> list[list[float]]:
    import numpy as np

    key = hashlib.sha1(("\n".join(texts) + "|" + services.settings.embedding_model).encode()).hexdigest()[:16]
    file = cache / f"locomo-{key}.npy" if cache else None
    if file is not None and file.exists():
        return np.load(file).tolist()
    vecs = services.embeddings.embed_documents(texts)
    if file is not None:
        file.parent.mkdir(parents=True, exist_ok=True)
        np.save(file, np.asarray(vecs, dtype="float32"))
    return vecs


def ingest(services, turns: list[dict], cache: Path | None) -> dict[str, str]:
    """Write the turns; returns memory id -> dia_id."""
    from memoryx.scope import Scope

    t0 = time.perf_counter()
    vecs = embed_cached(services, [t["text"] for t in turns], cache)
    t1 = time.perf_counter()
    id_to_dia: dict[str, str] = {}
    ids: list[str] = []
    for t in turns:
        row = services.sql.insert_memory(
            scope=Scope(user_id=t["scope"]), text=t["text"], memory_type="episodic", importance=0.5,
            metadata={"dia_id": t["dia_id"], "session": t["session"], "session_date": t["session_date"],
                      "speaker": t["speaker"]},
            created_at=t["created_at"])
        id_to_dia[row["id"]] = t["dia_id"]
        ids.append(row["id"])
    for i in range(0, len(ids), 512):
        services.projector.sync_memories(ids[i : i + 512], vectors=vecs[i : i + 512])
    print(f"ingested {len(turns)} turns in {time.perf_counter() - t0:.1f} s (embedding {t1 - t0:.1f} s)",
          file=sys.stderr)
    return id_to_dia


def frac(found: list[str], evidence: list[str], k: int) -> float:
    top = set(found[:k])
    return sum(1 for e in evidence if e in top) / len(evidence)


def rrf(lists: list[list[str]], k: int = 60) -> list[str]:
    score: dict[str, float] = defaultdict(float)
    for lst in lists:
        for r, i in enumerate(lst):
            score[i] += 1.0 / (k + r + 1)
    return sorted(score, key=lambda i: -score[i])


def evaluate(services, qas: list[dict], id_to_dia: dict[str, str], variants: dict) -> dict:
    """variants: name -> function(question dict) -> ranked memory ids. Returns name -> cat -> [(f5, f10)]."""
    out: dict[str, dict] = {}
    for name, fn in variants.items():
        per: dict = defaultdict(list)
        t0 = time.perf_counter()
        for qa in qas:
            ids = fn(qa)
            dias = [id_to_dia.get(i) for i in ids]
            row = (frac(dias, qa["evidence"], 5), frac(dias, qa["evidence"], 10))
            per[qa["category"]].append(row)
            per["all"].append(row)
        per["_ms"] = (time.perf_counter() - t0) * 1000.0 / max(1, len(qas))
        out[name] = per
    return out


def table(results: dict) -> str:
    cats = [1, 2, 3, 4]
    head = ("| run | " + " | ".join(f"{CATEGORIES[c]} (n={len(next(iter(results.values()))[c])})" for c in cats)
            + f" | overall @5 | overall @10 (n={len(next(iter(results.values()))['all'])}) |")
    lines = [head, "|" + "---|" * (len(cats) + 3)]
    for name, per in results.items():
        cells = [f"{sum(r[1] for r in per[c]) / len(per[c]):.3f}" if per[c] else "-" for c in cats]
        all5 = sum(r[0] for r in per["all"]) / len(per["all"])
        all10 = sum(r[1] for r in per["all"]) / len(per["all"])
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {all5:.3f} | **{all10:.3f}** |")
    return "\n".join(lines) + "\n(per-category columns: fraction of evidence turns in the top 10)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--data-dir", type=Path, default=None, help="store directory (default: a temporary one)")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "memoryx-bench-cache",
                    help="where turn embeddings are cached between runs ('' to disable)")
    ap.add_argument("--ablations", action="store_true", help="also run the search graph with single techniques off")
    ap.add_argument("--limit-qas", type=int, default=None, help="evaluate only the first N questions (smoke runs)")
    ap.add_argument("--bm25-b", type=float, default=None,
                    help="preview of a different BM25 length normalisation (memoryx.text.BM25_B, applied at ingest)")
    args = ap.parse_args(argv)

    from dataclasses import replace

    from memoryx.graphs.search import graph as search_graph
    from memoryx.context import Context
    from memoryx.scope import Scope

    if args.bm25_b is not None:
        import memoryx.text

        memoryx.text.BM25_B = args.bm25_b
    turns, qas = load(args.data)
    if args.limit_qas:
        qas = qas[: args.limit_qas]
    tmp = None
    if args.data_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="memoryx-locomo-")
        data_dir = Path(tmp.name)
    else:
        data_dir = args.data_dir
    services = open_services(data_dir)
    try:
        id_to_dia = ingest(services, turns, Path(args.cache) if str(args.cache) else None)
        vectors = services.vectors
        qvec_cache: dict[str, list[float]] = {}

        def qvec(q: str) -> list[float]:
            if q not in qvec_cache:
                qvec_cache[q] = services.embeddings.embed_query(q)
            return qvec_cache[q]

        def dense(qa):
            return [h.id for h in vectors.search_memories(qvec(qa["question"]), Scope(user_id=qa["scope"]), limit=10)]

        def keyword(qa):
            return [h.id for h in vectors.keyword_search(qa["question"], Scope(user_id=qa["scope"]), limit=10)]

        def plain_rrf(qa):
            s = Scope(user_id=qa["scope"])
            d = [h.id for h in vectors.search_memories(qvec(qa["question"]), s, limit=60)]
            k = [h.id for h in vectors.keyword_search(qa["question"], s, limit=60)]
            return rrf([d, k])[:10]

        def graph_run(svc):
            ctx = Context(services=svc, search_mode=svc.settings.search_mode,
                          graph_expand_depth=svc.settings.graph_expand_depth, graph_enabled=svc.graph is not None)

            def run(qa):
                out = search_graph.invoke({"query": qa["question"], "user_id": qa["scope"], "limit": 10,
                                           "record_access": False}, context=ctx)
                return [r["id"] for r in out["result"]["results"]]

            return run

        def with_settings(**update):
            return replace(services, settings=services.settings.model_copy(update=update))

        variants = {"dense alone (MiniLM)": dense, "keyword alone (BM25)": keyword,
                    "plain RRF dense+keyword": plain_rrf}
        if services.graph is not None and services.sql.list_entities(None):
            variants["graph alone"] = None  # infer=False adds no entities; shown only when there are some
        variants["search graph (settings as configured: fusion=%s)" % services.settings.fusion] = graph_run(services)
        if args.ablations:
            def without(**knobs):
                return graph_run(with_settings(search_tuning={**services.settings.search_tuning, **knobs}))

            variants["  - without context propagation"] = without(context_weight=0.0)
            variants["  - without time-window path/bonus"] = without(weight_time=0.0, time_bonus=0.0)
            variants["  - without name/when bonuses"] = without(name_bonus=0.0, when_bonus=0.0)
            variants["  - rrf fusion (k=60) + the rest"] = graph_run(with_settings(fusion="rrf"))
        variants = {k: v for k, v in variants.items() if v is not None}
        results = evaluate(services, qas, id_to_dia, variants)
        import memoryx.text

        print(f"LoCoMo retrieval, {len(qas)} questions, {len(turns)} turns, BM25 k1={memoryx.text.BM25_K1} "
              f"b={memoryx.text.BM25_B}, embeddings {services.settings.embedding_model}, no LLM\n")
        print(table(results))
    finally:
        services.close()
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
