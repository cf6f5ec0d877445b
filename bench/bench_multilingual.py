"""What the multilingual index costs one owner, through the public API: each statement of an everyday life added
as said (`infer=False`), then every question of the life searched three times with the query vectors cleared
before each pass (both encoders run), with MEMORYX_MULTILINGUAL_VECTORS on and off.

    PYTHONHASHSEED=0 HF_HUB_OFFLINE=1 python bench/bench_multilingual.py thirtyfourth thirtysixth

A life in Chinese or Japanese (thirtyfourth) turns its owner multilingual; an English one (thirtysixth) never
opens the index and pays one existence check per search.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")
sys.path.insert(0, str(Path(__file__).resolve().parent / "recall"))  # the lives and their loader
from everyday_recall import NOW, SETS, START  # noqa: E402


def measure(name: str, on: bool) -> str:
    from memoryx import Memory
    from memoryx.search import query_vectors
    from memoryx.settings import Settings

    life, questions = SETS[name]
    with tempfile.TemporaryDirectory(prefix="memoryx-xl-") as d:
        m = Memory(Settings(data_dir=Path(d), multilingual_vectors=on), llm="offline")
        try:
            t0 = time.perf_counter()
            for day, text, *_ in life:
                when = (START + timedelta(days=day)).isoformat()
                m.add([{"role": "user", "content": text, "timestamp": when}], user_id="u", infer=False)
            add_ms = (time.perf_counter() - t0) * 1000 / len(life)
            for q, *_ in questions:  # warm: the encoders loaded, the neutral sentences embedded
                m.search(q, user_id="u", limit=3, now=NOW)
            times = []
            for _ in range(3):
                query_vectors.clear()
                for q, *_ in questions:
                    t = time.perf_counter()
                    m.search(q, user_id="u", limit=3, now=NOW)
                    times.append((time.perf_counter() - t) * 1000)
        finally:
            m.close()
    times.sort()
    return (f"{name} multilingual={on}: add {add_ms:.0f} ms a statement, search p50 {statistics.median(times):.1f} ms,"
            f" p90 {times[int(len(times) * 0.9)]:.1f} ms (n={len(times)})")


def main() -> int:
    for name in sys.argv[1:] or ["thirtyfourth", "thirtysixth"]:
        for on in (True, False):
            print(measure(name, on), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
