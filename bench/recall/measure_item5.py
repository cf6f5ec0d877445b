"""The two weakest kinds of everyday question - a paraphrase (no word shared with the answering statement) and
another language - measured against today's defaults, one change at a time, through the public API.

    python bench/recall/measure_item5.py ingest  --stores DIR
    python bench/recall/measure_item5.py collect --stores DIR --variant V [--model FILE]
    python bench/recall/measure_item5.py fit     --stores DIR --variant V --model-out FILE
    python bench/recall/measure_item5.py eval    --stores DIR --variant V [--model FILE] [--json-out FILE]
    python bench/recall/measure_item5.py table   EVAL_JSON ...

Variants (what the search does differently; everything else the defaults):
  base       the checkout's search with its defaults (the query adapter included; the item-5 table of
             docs/benchmarks.md was measured with MEMORYX_QUERY_ADAPTER=false as its base).
  xl         the multilingual encoder as a path for every owner: every owner's memories get a multilingual
             vector (ingest writes them for all owners, not only those who write CJK), and every query reads
             the multilingual index's list in its own script (today only a query the main encoder cannot read),
             beside the cross-language bridge as it is; fused by the fitted ranking (its multilingual_* inputs).
  xl-any     as xl, the multilingual list over every script (no script filter).
  xl-adapter xl and adapter together.
  prf        the query's vectors expanded from the owner's own best memories: a first search, then
             q' = q + beta x mean(vectors of its top PRF_TOP results) (each encoder), and the search again.
  adapter    the main encoder's query vector through a linear adapter fitted on dev pairs
             (bench/recall/fit_query_adapter.py --out ADAPTER_FILE); a LoCoMo question gets the adapter of
             the folds that never saw its conversation. The package's own adapter (fitted on all dev pairs) is
             `MEMORYX_QUERY_ADAPTER=true ... --variant base`.

ingest builds lives and locomo-dev (bench/recall/build.py) with every owner's multilingual vectors, so one store
serves every variant (for an owner who writes no CJK the bridge finds nothing and today's search reads the
multilingual list only for a query MiniLM cannot read: base on this store answers as on a default one).
collect writes the ranking's traces (fit_ranker.py's format) under DIR/v-<variant>/traces; fit refits the
linear ranking on them (locomo-dev and the lives that are not blind; never the blind ones) into a scratch file,
prints k-fold CV on what it was fitted on, and the blind lives scored by the model fitted on the rest. eval
asks every question through Memory.search (limit 10 LoCoMo, 3 lives) with the variant, `--model` pointing the
ranking at a scratch model, and prints LoCoMo frac@10 and the lives' top-1 / top-3 per kind, blind and not.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

if os.environ.get("PYTHONHASHSEED") != "0":  # candidates tied in score fall the same way on every run
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable, *sys.argv])

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import build  # noqa: E402
import everyday  # noqa: E402
import sets  # noqa: E402
from stores import load_questions, open_store  # noqa: E402

SETS = ("lives", "locomo-dev")
LIMITS = {"locomo-dev": 10, "lives": 3}
PRF_TOP = int(os.environ.get("PRF_TOP", "3"))
PRF_BETA = float(os.environ.get("PRF_BETA", "0.5"))
ADAPTER_FILE = Path(os.environ.get("ADAPTER_FILE", "/tmp/item5-adapter.npz"))
VARIANTS = ("base", "xl", "xl-any", "prf", "adapter", "xl-adapter")


# ------------------------------------------------------------------------------------------------ patches


def every_owner_index() -> None:
    """Ingest: every owner's memories get a multilingual vector (today: owners who write CJK)."""
    from memoryx.stores.vectors import multilingual as ml

    def upsert(self, items: list[dict]) -> None:
        keep = list(items)
        if not keep:
            return
        store = self._opened(create=True)
        windows = [store.chunk_texts(text) if len(text := r.get("text") or "") <= store.chunk_chars else []
                   for r in keep]
        vectors = iter(self.embeddings.embed_documents([r.get("text") or "" for r in keep]
                                                       + [t for ts in windows for t in ts]))
        own = [next(vectors) for _ in keep]
        store.upsert_memories([{**r, "vector": v, "chunk_vectors": [next(vectors) for _ in ts],
                                ml.SCRIPT: ml.script_of(r.get("text"))} for r, v, ts in zip(keep, own, windows)])

    ml.MultilingualIndex.upsert = upsert


def multilingual_every_query(any_script: bool) -> None:
    """Search: the multilingual index's list for every query (its own script, or any), beside the bridge."""
    from memoryx.nodes import dense_recall as dr
    from memoryx.search.crosslingual import bridge_scores
    from memoryx.search.query import written_in_cjk

    def multilingual_recall(index, plan, vectors):
        if index is None or not plan.multilingual:
            return [], []
        vector = vectors.of(index.embeddings)
        query_script = "cjk" if written_in_cjk(plan.semantic_query) else "latin"
        other = "latin" if query_script == "cjk" else "cjk"
        k = plan.candidate_k
        bridge = bridge_scores(dr.hits_of(index.search(vector, plan.scope, limit=k, filters=plan.filters,
                                                       script=other)),
                               vector, index.embeddings, other, plan.tuning.crosslingual_margin)
        same = dr.hits_of(index.search(vector, plan.scope, limit=k, filters=plan.filters,
                                       script=None if any_script else query_script))
        return bridge, same

    dr.multilingual_recall = multilingual_recall


_OVERRIDE: dict[tuple[int, str], list[float]] = {}  # (id of an encoder, query text) -> the vector to use


def vector_override() -> None:
    """QueryVectors read a vector set by the variant (prf, adapter) before the encoder's own."""
    from memoryx.search import query_vectors as qv

    main, of = qv.QueryVectors.main, qv.QueryVectors.of

    def main_(self, services):
        hit = _OVERRIDE.get((id(services.embeddings), self.text))
        return hit if hit is not None else main(self, services)

    def of_(self, embeddings):
        hit = _OVERRIDE.get((id(embeddings), self.text))
        return hit if hit is not None else of(self, embeddings)

    qv.QueryVectors.main, qv.QueryVectors.of = main_, of_


def use_model(path: Path | None) -> None:
    """Point the fitted ranking at a scratch model file (the shipped one stays as it is)."""
    if path is None:
        return
    from memoryx.search import ranker

    ranker.MODEL_FILE = Path(path)
    ranker.fitted_model.cache_clear()


def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


class Searcher:
    """Memory.search with the variant's change."""

    def __init__(self, m, variant: str):
        self.m, self.variant = m, variant
        if variant in ("xl", "xl-any", "xl-adapter"):
            multilingual_every_query(variant == "xl-any")
        if variant in ("prf", "adapter", "xl-adapter"):
            vector_override()
        self.adapter = self.folds = None
        if variant in ("adapter", "xl-adapter"):
            data = np.load(ADAPTER_FILE)
            self.adapter, self.folds = data["W"], data["folds"]

    def search(self, q: dict, limit: int) -> list[dict]:
        kw = dict(user_id=q.get("user_id"), group_id=q.get("group_id"), now=q.get("now"))
        services = self.m.services
        _OVERRIDE.clear()
        if self.adapter is not None:
            emb = services.embeddings
            # the encoder's own vector (with MEMORYX_QUERY_ADAPTER on, embed_query is adapted already)
            plain = emb.encode([q["query"]])[0] if hasattr(emb, "encode") else emb.embed_query(q["query"])
            v = np.asarray(plain, dtype=np.float64)
            W = self.adapter
            if q["set"] == "locomo-dev":  # fitted on LoCoMo dev: the fold that never saw this conversation
                import fit_query_adapter as fqa

                W = self.folds[fqa.fold_of({"set": "locomo-dev", "fold_key": q["group_id"]}, len(self.folds))]
            _OVERRIDE[(id(emb), q["query"])] = list(_unit(v @ W.T))
        elif self.variant == "prf":
            first = self.m.search(q["query"], limit=PRF_TOP, **kw)["results"]
            texts = [r["memory"] for r in first[:PRF_TOP]]
            if texts:
                encoders = [services.embeddings]
                index = getattr(services.vectors, "multilingual", None)
                if index is not None:
                    encoders.append(index.embeddings)
                for emb in encoders:
                    qv = _unit(np.asarray(emb.embed_query(q["query"]), dtype=np.float64))
                    docs = np.asarray(emb.embed_documents(texts), dtype=np.float64)
                    docs = docs / np.maximum(np.linalg.norm(docs, axis=1, keepdims=True), 1e-9)
                    _OVERRIDE[(id(emb), q["query"])] = list(_unit(qv + PRF_BETA * docs.mean(axis=0)))
        return self.m.search(q["query"], limit=limit, **kw)["results"]


# ------------------------------------------------------------------------------------------------ commands


def ingest(stores: Path) -> None:
    every_owner_index()
    for name in SETS:
        build.build(name, stores / name)


def collect(stores: Path, variant: str, model: Path | None) -> None:
    from memoryx.search.ranker import FEATURES, collect_traces

    use_model(model)
    out = stores / f"v-{variant}" / "traces"
    out.mkdir(parents=True, exist_ok=True)
    for name in SETS:
        questions = load_questions(stores / name)
        rows, t0 = [], time.perf_counter()
        m = open_store(stores / name)
        try:
            s = Searcher(m, variant)
            for q in questions:
                with collect_traces() as traces:
                    s.search(q, 30)
                trace = traces[-1] if traces else {"ids": [], "features": [], "texts": [], "metadata": [],
                                                   "hand": []}
                rows.append({"question": q, **trace})
        finally:
            m.close()
        (out / f"{name}.json").write_text(json.dumps({"features": list(FEATURES), "rows": rows}))
        print(f"{variant} {name}: {len(rows)} traced in {time.perf_counter() - t0:.0f} s", file=sys.stderr)


def _split_blind(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    fit_rows, blind = [], []
    for r in rows:
        if r["set"] in ("lives", "lives-blind") and r["question"].get("blind"):  # (fit_ranker.load may name them)
            r["set"] = "lives-blind"
            blind.append(r)
        else:
            fit_rows.append(r)
    return fit_rows, blind


def _by_kind(rows: list[dict], order_of) -> dict:
    import fit_ranker as fr

    acc: dict = defaultdict(list)
    for r in rows:
        m = fr.metrics(r, order_of(r))
        q = r["question"]
        for key in ((r["set"],), (r["set"], q.get("kind") or q.get("qtype"))):
            acc[" / ".join(key)].append(m)
    return {k: {n: round(float(np.mean([x[n] for x in v])), 3) for n in v[0]} | {"n": len(v)}
            for k, v in sorted(acc.items())}


def fit_cmd(stores: Path, variant: str, model_out: Path, folds: int) -> None:
    """Refit the linear ranking on this variant's traces of locomo-dev and the lives that are not blind."""
    import fit_ranker as fr

    from memoryx.search.ranker import FEATURES

    rows = fr.load(stores / f"v-{variant}", SETS)
    dev, blind = _split_blind(rows)
    mask = fr.learnable()
    beta = fr.fit(dev, mask)
    scale, bias = fr.calibrate(dev, beta, mask)
    # k-fold CV on what it is fitted on (folds by conversation and life)
    cv_scores: dict[int, np.ndarray] = {}
    for f in range(folds):
        train = [r for r in dev if fr.fold_of(r, folds) != f]
        b = fr.fit(train, mask)
        s, c = fr.calibrate(train, b, mask)
        for r in dev:
            if fr.fold_of(r, folds) == f:
                cv_scores[id(r)] = fr.final(r, mask, b, s, c)
    cv = _by_kind(dev, lambda r: fr._order(cv_scores[id(r)]))
    held = _by_kind(blind, lambda r: fr._order(fr.final(r, mask, beta, scale, bias)))
    print(json.dumps({"variant": variant, "cv": cv, "blind (fitted on the rest)": held}, indent=1))
    weights = {f: round(float(b), 5) for f, b in zip([f for f, keep in zip(FEATURES, mask) if keep], beta)}
    model_out.write_text(json.dumps({"fitted_on": f"item 5 scratch: {variant} traces of locomo-dev and the lives "
                                                  "not blind", "scale": round(scale, 6), "bias": round(bias, 6),
                                     "features": weights}, indent=1) + "\n")
    print(f"wrote {model_out}", file=sys.stderr)


def _score(set_name: str, q: dict, found: list[dict], units: dict) -> dict:
    if set_name == "locomo-dev":
        return {"frac@10": sets.frac([units.get(r["id"]) for r in found], q["gold_units"], 10)}
    k = everyday.answered_at(found, q["expected"])
    return {"top1": float(k == 1), "top3": float(k is not None and k <= 3)}


def summarize(rows: list[dict]) -> dict:
    acc: dict = defaultdict(list)
    for r in rows:
        keys = [r["set"]]
        if r["set"] == "lives":
            side = "blind" if r["blind"] else "own"
            keys += [f"lives {side}", f"lives {side} / {r['kind']}", f"lives / {r['kind']}"]
        for k in keys:
            acc[k].append(r["score"])
    return {k: {n: round(float(np.mean([x[n] for x in v])), 3) for n in v[0]} | {"n": len(v)}
            for k, v in sorted(acc.items())}


def eval_cmd(stores: Path, variant: str, model: Path | None, json_out: Path | None, only: list[str]) -> None:
    use_model(model)
    rows = []
    for name in only:
        questions = load_questions(stores / name)
        units = build.load_units(stores / name)
        t0 = time.perf_counter()
        m = open_store(stores / name)
        try:
            s = Searcher(m, variant)
            for q in questions:
                found = s.search(q, LIMITS[name])
                rows.append({"set": name, "qid": q["qid"], "kind": q.get("kind") or q.get("qtype"),
                             "blind": bool(q.get("blind")), "score": _score(name, q, found, units),
                             "top": [r["id"] for r in found]})
        finally:
            m.close()
        print(f"{variant} {name}: {len(questions)} asked in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    summary = summarize(rows)
    print(json.dumps({"variant": variant, "model": str(model or "shipped"), "summary": summary}, indent=1))
    if json_out:
        json_out.write_text(json.dumps({"variant": variant, "model": str(model or "shipped"), "summary": summary,
                                        "rows": rows}, ensure_ascii=False))


def table(files: list[Path]) -> None:
    """The eval outputs side by side: LoCoMo dev frac@10 and the lives' top-1 / top-3 per kind, blind and not."""
    cols = [("locomo-dev", "frac@10")] + [(f"lives {side}{kind}", m) for side in ("own", "blind")
                                          for kind in ("", " / shared words", " / no shared word",
                                                       " / other language") for m in ("top1", "top3")]
    print("| variant (model) | " + " | ".join(f"{k} {m}" for k, m in cols) + " |")
    print("|---|" + "---|" * len(cols))
    for f in files:
        d = json.loads(Path(f).read_text())
        cells = [f"{d['summary'][k][m]:.3f}" if k in d["summary"] else "" for k, m in cols]
        print(f"| {d['variant']} ({Path(d['model']).name}) | " + " | ".join(cells) + " |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("ingest", "collect", "fit", "eval", "table"))
    ap.add_argument("--stores", type=Path, default=None)
    ap.add_argument("files", nargs="*", type=Path, help="table: eval --json-out files")
    ap.add_argument("--variant", choices=VARIANTS, default="base")
    ap.add_argument("--model", type=Path, default=None, help="a scratch ranking model (default: the shipped one)")
    ap.add_argument("--model-out", type=Path, default=None)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--json-out", type=Path, default=None)
    a = ap.parse_args()
    if a.command == "table":
        table(a.files)
    elif a.command == "ingest":
        ingest(a.stores)
    elif a.command == "collect":
        collect(a.stores, a.variant, a.model)
    elif a.command == "fit":
        fit_cmd(a.stores, a.variant, a.model_out or Path(f"/tmp/item5-model-{a.variant}.json"), a.folds)
    else:
        eval_cmd(a.stores, a.variant, a.model, a.json_out, [s for s in a.sets.split(",") if s])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
