"""Bulk ingest through the public API: `Memory.add_many(items, infer=False)` with the real MiniLM embeddings.

    HF_HUB_OFFLINE=1 python3 bench/bench_bulk.py --memories 10000 --users 100 [--runtime torch]

Prints memories/s end to end and the share of it spent embedding (the rest is SQL, locks and the vector
upsert), so a slow figure on a loaded machine can be told apart from overhead. Issue 14 target: >= 1,000/s.
The encoder is the settings' one (MEMORYX_EMBEDDING_RUNTIME, default auto = ONNX Runtime); its ONNX cache
is MEMORYX_EMBEDDING_CACHE_DIR when set, else built once in the run's temporary data dir before timing.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--users", type=int, default=100)
    ap.add_argument("--per-item", type=int, default=1, help="messages per item")
    ap.add_argument("--runtime", choices=["auto", "onnx", "torch"], default=None,
                    help="embedding runtime (default: the settings' embedding_runtime)")
    args = ap.parse_args()
    from memoryx import Memory

    items = [{"messages": [{"role": "user", "content": f"turn {i}.{j}: I went hiking on trail {i % 97} with my dog "
                            f"number {i % 13} and we saw {j + i % 7} birds"} for j in range(args.per_item)],
              "user_id": f"user{i % args.users}"} for i in range(args.memories // args.per_item)]
    with tempfile.TemporaryDirectory() as data_dir, \
            Memory(data_dir=data_dir, graph_backend="none", llm="offline", checkpointer="none",
                   **({"embedding_runtime": args.runtime} if args.runtime else {})) as m:
        emb = m.services.embeddings
        emb.embed_documents(["warm up"])
        spent = [0.0]
        real = emb.embed_documents

        def timed(texts):
            t = time.perf_counter()
            try:
                return real(texts)
            finally:
                spent[0] += time.perf_counter() - t

        emb.embed_documents = timed  # instance attribute: measures the embedding share only
        start = time.perf_counter()
        results = m.add_many(items, infer=False)
        total = time.perf_counter() - start
        written = sum(len(r["results"]) for r in results)
        print(json.dumps({"runtime": emb.runtime, "memories": written, "seconds": round(total, 2),
                          "memories_per_s": round(written / total),
                          "embedding_s": round(spent[0], 2), "embedding_share": round(spent[0] / total, 2),
                          "without_embedding_per_s": round(written / max(1e-9, total - spent[0])),
                          "failed_items": sum("error" in r for r in results)}))


if __name__ == "__main__":
    main()
