"""Bulk ingest through the public API: `Memory.add_many(items, infer=False)` with the real MiniLM embeddings.

    HF_HUB_OFFLINE=1 python3 bench/bench_bulk.py --memories 10000 --users 100 [--runtime torch]
    HF_HUB_OFFLINE=1 python3 bench/bench_bulk.py --memories 5000 --users 50 --overlap both   # A/B, one process

Prints memories/s end to end and the time spent embedding (the rest is SQL, locks and the vector upsert), so
a slow figure on a loaded machine can be told apart from overhead. Target: >= 1,000/s.
The encoder is the settings' one (MEMORYX_EMBEDDING_RUNTIME, default auto = ONNX Runtime); its ONNX cache
is MEMORYX_EMBEDDING_CACHE_DIR when set, else built once in the run's temporary data dir before timing.

--overlap: `on` (the default, what add_many does) embeds chunk k+1 on a helper thread while chunk k is
written; `off` embeds and writes one after the other; `both` runs off then on then off then on, each in a
fresh data dir of the same process (same warm encoder), so the two are compared under the same load.
Without overlap, `without_embedding_per_s` is the writer's own rate; with it, embedding and writing share
the wall time and only memories/s is meaningful.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def make_items(memories: int, users: int, per_item: int) -> list[dict]:
    return [{"messages": [{"role": "user", "content": f"turn {i}.{j}: I went hiking on trail {i % 97} with my dog "
                           f"number {i % 13} and we saw {j + i % 7} birds"} for j in range(per_item)],
             "user_id": f"user{i % users}"} for i in range(memories // per_item)]


def run_once(items: list[dict], runtime: str | None, overlap: bool) -> dict:
    from memoryx import Memory
    from memoryx.ingest import bulk

    bulk.RawIngest.overlap = overlap
    with tempfile.TemporaryDirectory() as data_dir, \
            Memory(data_dir=data_dir, graph_backend="none", llm="offline", checkpointer="none",
                   **({"embedding_runtime": runtime} if runtime else {})) as m:
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

        emb.embed_documents = timed  # instance attribute: measures the embedding time only
        start, cpu = time.perf_counter(), time.process_time()
        results = m.add_many(items, infer=False)
        total, cpu = time.perf_counter() - start, time.process_time() - cpu
        written = sum(len(r["results"]) for r in results)
        out = {"runtime": emb.runtime, "overlap": overlap, "memories": written, "seconds": round(total, 2),
               "memories_per_s": round(written / total), "process_cpu_s": round(cpu, 2),
               "embedding_s": round(spent[0], 2), "failed_items": sum("error" in r for r in results)}
        if not overlap:
            out.update(embedding_share=round(spent[0] / total, 2),
                       without_embedding_per_s=round(written / max(1e-9, total - spent[0])))
        return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--users", type=int, default=100)
    ap.add_argument("--per-item", type=int, default=1, help="messages per item")
    ap.add_argument("--runtime", choices=["auto", "onnx", "torch"], default=None,
                    help="embedding runtime (default: the settings' embedding_runtime)")
    ap.add_argument("--overlap", choices=["on", "off", "both"], default="on")
    args = ap.parse_args()
    items = make_items(args.memories, args.users, args.per_item)
    plan = {"on": [True], "off": [False], "both": [False, True, False, True]}[args.overlap]
    for overlap in plan:
        print(json.dumps(run_once(items, args.runtime, overlap)), flush=True)


if __name__ == "__main__":
    main()
