"""Details deep inside long turns: is the turn found when a question quotes a sentence from past what the encoder
reads of it?

    python bench/recall/longmemeval_deep_probe.py --data-dir DIR [--questions 1] [--set vector_chunk_chars=0]

DIR is a store built by bench/longmemeval_retrieval.py with the same --questions (and the same
vector_chunk_chars). For each of its questions' assistant turns longer than 2,000 characters, one sentence
(60-200 characters) starting past the first 1,200 characters, drawn with a fixed seed, is the query; the
figure is how often that turn is in the top 5 / top 10 of `Memory.search` (defaults, and the dense path alone),
at most 60 probes per question. A sentence is quoted, so the keyword path finds most of them whatever the
index; the dense path alone shows what windows add.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the embedding cache
from embedding_cache import CachedEmbeddings  # noqa: E402
from longmemeval_retrieval import DEFAULT_DATA, parse_date, spread, turn_id  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")

SENTENCE = re.compile(r"[^.!?\n]{60,200}[.!?]")


def probes_of(q: dict, rng: random.Random, limit: int = 60) -> list[tuple[str, str]]:
    out = []
    for sid, session in zip(q["haystack_session_ids"], q["haystack_sessions"]):
        for i, t in enumerate(session):
            text = t.get("content") or ""
            if t["role"] == "assistant" and len(text) > 2000:
                deep = [m for m in SENTENCE.finditer(text) if m.start() > 1200]
                if deep:
                    out.append((rng.choice(deep).group(0).strip(), turn_id(sid, i)))
    return out[:limit]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--questions", type=int, default=1)
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/memoryx-bench-cache"))
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=JSON")
    args = ap.parse_args(argv)

    from memoryx import Memory
    from memoryx.models.embeddings import make_embeddings
    from memoryx.settings import Settings

    overrides = {k: json.loads(v) for k, v in (s.split("=", 1) for s in args.set)}
    settings = Settings(data_dir=args.data_dir, graph_backend="none", **overrides)
    done = json.loads((args.data_dir / "lme-ingested.json").read_text())
    m = Memory(settings, llm="offline", embeddings=CachedEmbeddings(make_embeddings(settings), args.cache,
                                                                      name="longmemeval-docs"))
    rng = random.Random(5)
    counts = {mode: [0, 0, 0] for mode in ("defaults", "vector")}
    try:
        for q in spread(json.loads(args.data.read_text()), args.questions):
            ids, now = done[q["question_id"]], parse_date(q["question_date"])
            for text, tid in probes_of(q, rng):
                for mode in counts:
                    found = m.search(text, user_id=f"lme-{q['question_id']}", limit=10, now=now,
                                     mode=None if mode == "defaults" else mode)["results"]
                    ranked = [ids.get(r["id"]) for r in found]
                    c = counts[mode]
                    c[0], c[1], c[2] = c[0] + 1, c[1] + (tid in ranked[:5]), c[2] + (tid in ranked[:10])
    finally:
        m.close()
    print(f"deep-sentence probes, {args.questions} question(s), vector_chunk_chars={settings.vector_chunk_chars}")
    for mode, (n, at5, at10) in counts.items():
        print(f"  {mode}: {n} probes, turn in top 5 {at5 / max(1, n):.3f}, top 10 {at10 / max(1, n):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
