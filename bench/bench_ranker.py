"""What the fitted ranking costs a search: building 100 candidates' features and scoring them with the shipped model.

    python bench/bench_ranker.py

Synthetic candidates (random texts of 5-40 words, two paths, a context loan, dated a month apart), the default
settings, a question about how things stand now (the widest feature set). Prints ms per search for each part:
thread CPU, the best of several rounds (steady on a busy machine).
"""

from __future__ import annotations

import random
import time
from types import SimpleNamespace

from memoryx.search.ranker import FEATURES, feature_matrix, fitted_model
from memoryx.settings import Settings

WORDS = ["I", "moved", "to", "Porto", "my", "job", "is", "nurse", "the", "dog"]


def candidates(n: int) -> list[dict]:
    rng = random.Random(0)
    out = []
    for i in range(n):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 40)))
        out.append({"id": str(i), "memory": {"memory": text, "valid_at": f"2024-0{1 + i % 9}-01T00:00:00+00:00",
                                              "user_id": "u", "importance": 0.5, "memory_type": "episodic",
                                              "metadata": {"role": "user"}},
                    "path_norm": {"dense": rng.random(), "keyword": rng.random()},
                    "path_ranks": {"dense": i, "keyword": n - 1 - i}, "path_scores": {"dense": rng.random()},
                    "signals": {"context": rng.random()}})
    return out


def main(n: int = 100, repeat: int = 20, rounds: int = 30) -> None:
    plan = SimpleNamespace(current=True, current_value=False, still=False, encoder_reads_query=True, role="user")
    cands, settings, model, now = candidates(n), Settings(), fitted_model(), time.time()
    for _ in range(20):
        model.relevance(feature_matrix(cands, plan, settings, now))
    # the best of several rounds, in CPU time of this thread: what the work costs, not what a busy machine adds
    best_build = best_model = float("inf")
    for _ in range(rounds):
        t0 = time.thread_time()
        for _ in range(repeat):
            rows = feature_matrix(cands, plan, settings, now)
        t1 = time.thread_time()
        for _ in range(repeat):
            model.relevance(rows)
        t2 = time.thread_time()
        best_build, best_model = min(best_build, (t1 - t0) / repeat), min(best_model, (t2 - t1) / repeat)
    print(f"{n} candidates, {len(FEATURES)} features: features {1000 * best_build:.2f} ms, "
          f"model (linear + trees) {1000 * best_model:.2f} ms per search (thread CPU, best of {rounds} rounds of {repeat})")

if __name__ == "__main__":
    main()
