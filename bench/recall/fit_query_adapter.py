"""A small linear query adapter for the main encoder, fitted on dev pairs (question -> its evidence turns), with
k-fold cross-validation: does moving the question's vector (q' = W q, W = I + A) bring paraphrased evidence
nearer than the encoder alone?

    python bench/recall/fit_query_adapter.py [--folds 5] [--l2 1e-2,1e-1,1] [--out /tmp/item5-adapter.npz] [--write]
    python bench/recall/fit_query_adapter.py --check-val [--out /tmp/item5-adapter.npz]
    python bench/recall/fit_query_adapter.py --encoder companion --l2 0.1 --out <stores>/companion-adapter.npz

Pairs: LoCoMo dev (each question against every turn of its conversation, the evidence turns positive) and
LongMemEval_S dev (each question against its haystack's user turns: the evidence turns and LME_NEG others
drawn by a fixed hash, so the encoder work stays in minutes). Vectors: the product's main encoder
(memoryx.models.embeddings.make_embeddings with the default settings, the shipped adapter off: the fit starts
from the encoder's own question vectors), questions as queries, turns as documents; cached in CACHE per
precision. Loss: for each question, the mean over its evidence turns of -log softmax over its candidates of
cos(W q, d) / TAU, each question weighing the same, plus l2 x |A|^2 (A starts at 0: the encoder
alone). Folds: LoCoMo by conversation, LongMemEval by question (a hash of its id). Printed per set: recall@10
(the fraction of the evidence in the top 10 by cosine) of the encoder alone and adapted, on the held-out folds;
the adapter fitted on all dev pairs with the best l2 is written to --out (never on the lives), with the model
of each fold. `--encoder companion`: the same fit for the companion encoder (memoryx.models.embedding_use, each turn's
first TEXT_CHARS characters as the companion index embeds it), its --write writing the package's companion adapter
(the companion encoder's own question vectors as the start, so the fit never stacks on the shipped matrix).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import sets  # noqa: E402

PACKAGE_FILES = {"main": HERE.parent.parent / "models" / "query_adapter_minilm.npz",
                 "companion": HERE.parent.parent / "models" / "query_adapter_use.npz"}
ENCODER_NAMES = {"main": "all-MiniLM-L6-v2", "companion": "universal-sentence-encoder-multilingual"}
CACHE = Path(os.environ.get("ADAPTER_CACHE", "/tmp/item5-adapter-vectors.npz"))
LME_NEG = 60
TAU = 0.05


def _h(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16)


def groups(lme_set: str = "lme-dev", locomo: bool = True) -> list[dict]:
    """Each question: {"set", "fold_key", "query", "docs": [text], "pos": [index into docs]}."""
    out = []
    items, questions = sets.locomo() if locomo else ([], [])
    by_group: dict[str, list[tuple[str, str]]] = {}
    for it in items:
        by_group.setdefault(it["group_id"], []).append((it["metadata"]["dia_id"], it["messages"][0]["content"]))
    for q in questions:
        docs = by_group[q["group_id"]]
        ev = set(q["evidence"])
        pos = [i for i, (d, _) in enumerate(docs) if d in ev]
        if pos:
            out.append({"set": "locomo-dev", "fold_key": q["group_id"], "query": q["query"],
                        "docs": [t for _, t in docs], "shared": q["group_id"], "pos": pos})
    for d in sets.read_lme(lme_set):
        ev, _ = sets.lme_evidence(d)
        docs = sets.lme_docs(d, ("user",))
        pos_docs = [(u, t) for u, t in docs if u in ev]
        negs = sorted((x for x in docs if x[0] not in ev), key=lambda x: _h(d["question_id"] + x[0]))[:LME_NEG]
        if not pos_docs:
            continue
        chosen = pos_docs + negs
        out.append({"set": lme_set, "fold_key": d["question_id"], "query": d["question"],
                    "docs": [t[:2000] for _, t in chosen], "shared": None, "pos": list(range(len(pos_docs)))})
    return out


def embed(qs: list[dict], cache: Path = CACHE, encoder: str = "main") -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Question vectors (one row each) and each distinct document's vector, cached by text hash."""
    from memoryx.models.embeddings import chosen_precision, make_embeddings
    from memoryx.settings import Settings

    # the shipped adapter off: the matrix fitted here is applied to the encoder's own question vectors
    settings = Settings(query_adapter=False)
    texts = sorted({t for q in qs for t in q["docs"]})
    queries = [q["query"] for q in qs]
    precision = chosen_precision(settings) if encoder == "main" else encoder
    key = hashlib.sha256(json.dumps([texts, queries, precision]).encode()).hexdigest()
    if cache.exists():
        data = np.load(cache, allow_pickle=False)
        if str(data["key"]) == key:
            return data["Q"], dict(zip(texts, data["D"]))
    cut = None
    if encoder == "companion":
        from memoryx.models.embedding_use import UseMultilingualEmbeddings
        from memoryx.stores.vectors.companion import TEXT_CHARS

        emb, cut = UseMultilingualEmbeddings(query_adapter=None), TEXT_CHARS
    else:
        emb = make_embeddings(settings)
    t0 = time.perf_counter()
    Q = np.asarray([emb.embed_query(x) for x in queries], dtype=np.float32)
    D = np.asarray(emb.embed_documents([t[:cut] for t in texts]), dtype=np.float32)
    print(f"embedded {len(queries)} questions and {len(texts)} turns in {time.perf_counter() - t0:.0f} s",
          file=sys.stderr)
    np.savez(cache, key=np.array(key), Q=Q, D=D)
    return Q, dict(zip(texts, D))


def _unit(x):
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-9)


def fit(qs: list[dict], Q: np.ndarray, D: dict, idx: list[int], l2: float, iters: int = 200) -> np.ndarray:
    import torch

    torch.manual_seed(0)
    torch.set_num_threads(1)
    dim = Q.shape[1]
    A = torch.zeros(dim, dim, dtype=torch.float64, requires_grad=True)
    eye = torch.eye(dim, dtype=torch.float64)
    # questions over the same documents (a LoCoMo conversation) in one product; LongMemEval's each alone
    by_docs: dict = {}
    for i in idx:
        by_docs.setdefault(qs[i]["shared"] or f"q{i}", []).append(i)
    batch = []
    for members in by_docs.values():
        docs = qs[members[0]]["docs"]
        mask = np.zeros((len(members), len(docs)))
        for r, i in enumerate(members):
            mask[r, qs[i]["pos"]] = 1.0 / len(qs[i]["pos"])
        batch.append((torch.tensor(Q[members], dtype=torch.float64),
                      torch.tensor(_unit(np.stack([D[t] for t in docs])), dtype=torch.float64),
                      torch.tensor(mask)))
    opt = torch.optim.LBFGS([A], lr=1.0, max_iter=iters, history_size=20, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        W = eye + A
        loss = 0.0
        for q, docs, mask in batch:
            qq = q @ W.T
            qq = qq / qq.norm(dim=1, keepdim=True)
            logp = torch.log_softmax(qq @ docs.T / TAU, dim=1)
            loss = loss - (logp * mask).sum()
        loss = loss / len(idx) + l2 * (A * A).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return (eye + A).detach().numpy()


def recall10(q: dict, qv: np.ndarray, D: dict) -> float:
    docs = _unit(np.stack([D[t] for t in q["docs"]]))
    order = np.argsort(-(docs @ _unit(qv)), kind="stable")[:10]
    return len(set(order.tolist()) & set(q["pos"])) / len(q["pos"])


def fold_of(q: dict, k: int) -> int:
    return _h(f"{q['set']}:{q['fold_key']}") % k


def write_package_file(W: np.ndarray, l2: float, n: int, encoder: str = "main") -> None:
    """The adapter as the package ships it (memoryx.models.query_adapter reads it): A = W - I in float16."""
    np.savez_compressed(PACKAGE_FILES[encoder], A=(W - np.eye(len(W))).astype(np.float16),
                        encoder=np.array(ENCODER_NAMES[encoder]),
                        fitted_on=np.array(f"{n} dev questions of LoCoMo dev and LongMemEval_S dev, l2 {l2}, "
                                           f"tau {TAU}; bench/recall/fit_query_adapter.py --write --encoder {encoder}"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--l2", default="0.01,0.1,1")
    ap.add_argument("--out", type=Path, default=Path("/tmp/item5-adapter.npz"))
    ap.add_argument("--write", action="store_true", help="also write the package's adapter for --encoder ("
                    + ", ".join(p.name for p in PACKAGE_FILES.values()) + ")")
    ap.add_argument("--encoder", choices=tuple(PACKAGE_FILES), default="main",
                    help="whose question vectors: the main encoder's, or the companion index's")
    ap.add_argument("--check-val", action="store_true",
                    help="score the adapter of --out on LongMemEval_S validation pairs (never fitted on) and stop")
    a = ap.parse_args()
    cache = CACHE if a.encoder == "main" else CACHE.with_name(f"{CACHE.stem}-{a.encoder}.npz")
    if a.check_val:
        val = groups("lme-val", locomo=False)
        Q, D = embed(val, cache.with_name(cache.stem + "-val.npz"), a.encoder)
        W = np.load(a.out)["W"]
        print(json.dumps({"lme-val": {"n": len(val), "encoder": round(float(np.mean(
            [recall10(q, Q[i], D) for i, q in enumerate(val)])), 4), "adapted (fitted on all dev)": round(float(
                np.mean([recall10(q, W @ Q[i], D) for i, q in enumerate(val)])), 4)}}))
        return 0
    qs = groups()
    Q, D = embed(qs, cache, a.encoder)
    results, folds_of = {}, {}
    for l2 in [float(x) for x in a.l2.split(",")]:
        held: dict[int, np.ndarray] = {}
        fold_w = []
        for f in range(a.folds):
            train = [i for i, q in enumerate(qs) if fold_of(q, a.folds) != f]
            W = fit(qs, Q, D, train, l2)
            fold_w.append(W)
            for i, q in enumerate(qs):
                if fold_of(q, a.folds) == f:
                    held[i] = W @ Q[i]
        per = {}
        for s in ("locomo-dev", "lme-dev"):
            ids = [i for i, q in enumerate(qs) if q["set"] == s]
            per[s] = {"n": len(ids), "encoder": round(float(np.mean([recall10(qs[i], Q[i], D) for i in ids])), 4),
                      "adapted (CV)": round(float(np.mean([recall10(qs[i], held[i], D) for i in ids])), 4)}
        results[l2] = per
        folds_of[l2] = fold_w
        print(json.dumps({"l2": l2, **per}), flush=True)
    best = max(results, key=lambda l2: sum(v["adapted (CV)"] - v["encoder"] for v in results[l2].values()))
    W = fit(qs, Q, D, list(range(len(qs))), best)
    # the fold models too: a LoCoMo question searched through the API with the adapter of the folds without its
    # conversation (measure_item5.py), so that figure is held out as well
    np.savez(a.out, W=W, l2=best, folds=np.stack(folds_of[best]), n_folds=a.folds)
    if a.write:
        write_package_file(W, best, len(qs), a.encoder)
    print(f"best l2 {best}; adapter fitted on all {len(qs)} dev questions written to {a.out} "
          f"(|A| {np.linalg.norm(W - np.eye(len(W))):.3f})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
