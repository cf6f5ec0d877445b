"""The traces fit_ranker.py fits on: every question of the kept stores asked through the public API with its
defaults (`Memory.search(question, <scope>, limit, now=<question date>)`), while
memoryx.search.ranker.collect_traces records what the ranking saw (the candidate pool, each candidate's feature
vector, the hand-weighted order, what replays the steps after the model). Written to <stores>/traces/<set>.json;
`python bench/recall/fit_ranker.py collect` runs it.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np


def _adapter_fold(q: dict, folds) -> int | None:
    """Which of fit_query_adapter.py's fold adapters never saw `q` (None: no adapter was fitted on its set)."""
    import fit_query_adapter as fqa

    key = {"locomo-dev": q.get("group_id"), "lme-dev": q.get("qid")}.get(q["set"])
    return None if key is None else fqa.fold_of({"set": q["set"], "fold_key": key}, len(folds))


def collect(stores: Path, sets: list[str], fold_adapters: Path | None, limit: int,
            companion_fold_adapters: Path | None = None) -> None:
    """`fold_adapters`: fit_query_adapter.py's --out file. The package's query adapter was fitted on LoCoMo dev
    and LongMemEval dev questions, so their traces would show the ranking a dense path that had seen them; with
    the file, each of those questions is asked with the adapter of the folds that never saw it (the others keep
    the package's), so the fitted weights see the dense path as a new question meets it.
    `companion_fold_adapters`: the same for the companion encoder's adapter (its --encoder companion --out)."""
    from memoryx.search import query_vectors
    from memoryx.search.ranker import FEATURES, collect_traces
    from stores import load_questions, open_store  # bench/recall/stores.py, the harness's kept stores

    encoders = {"main": fold_adapters, "companion": companion_fold_adapters}
    folds = {k: np.load(f)["folds"].astype(np.float32) for k, f in encoders.items() if f}
    out_dir = stores / "traces"
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in sets:
        set_dir = stores / name
        if not set_dir.exists():
            print(f"{name}: no kept store in {set_dir}; run bench/recall/run.py --sets {name} --stores {stores}",
                  file=sys.stderr)
            continue
        questions = load_questions(set_dir)
        rows = []
        t0 = time.perf_counter()
        with open_store(set_dir) as m:
            companion = m.services.vectors.companion
            adapted = {"main": m.services.embeddings, "companion": companion.embeddings if companion else None}
            shipped = {k: getattr(e, "query_adapter", None) for k, e in adapted.items()}
            for q in questions:
                scope = {k: q[k] for k in ("user_id", "agent_id", "run_id", "group_id") if q.get(k)}
                for k, embeddings in adapted.items():
                    fold = _adapter_fold(q, folds[k]) if k in folds and shipped[k] is not None else None
                    if embeddings is not None:
                        embeddings.query_adapter = shipped[k] if fold is None else folds[k][fold]
                query_vectors.clear()  # a vector cached under another adapter is not this question's
                with collect_traces() as traces:
                    m.search(q["query"], limit=limit, now=q.get("now"), **scope)
                trace = traces[-1] if traces else {"ids": [], "features": [], "texts": [], "metadata": [], "hand": []}
                rows.append({"question": q, **trace})
            for k, embeddings in adapted.items():
                if embeddings is not None:
                    embeddings.query_adapter = shipped[k]
        (out_dir / f"{name}.json").write_text(json.dumps({"features": list(FEATURES), "rows": rows}))
        print(f"{name}: {len(rows)} questions traced in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
